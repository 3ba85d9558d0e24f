import LatchkeyQR
import Testing

/// Whole symbols against segno's (ISO/IEC 18004 as an independent encoder reads it): same version, same mask, same
/// modules everywhere — function patterns, format and version information, data and error correction.
struct ReferenceComparisonTests {
    @Test(arguments: ReferenceSymbol.all)
    func everyModuleMatchesTheReference(_ reference: ReferenceSymbol) throws {
        let code = try QRCode(bytes: Array(reference.text.joined().utf8), errorCorrection: reference.errorCorrection, mask: reference.forcedMask)
        #expect(code.version == reference.version)
        #expect(code.mask == reference.mask)
        try #require(code.size == reference.modules.count)
        #expect(code.modules == reference.modules, "rows \(code.differingRows(from: reference.modules)) differ")
    }

    @Test func theReferenceChoosesMasksOtherThanOne() {
        let chosen = Set(ReferenceSymbol.all.filter { $0.forcedMask == nil }.map(\.mask))
        #expect(chosen.count >= 3, "the automatic cases should not all share a mask: \(chosen)")
    }

    @Test func textIsEncodedAsItsUTF8Bytes() throws {
        let reference = try #require(ReferenceSymbol.all.first { $0.text.joined().utf8.count != $0.text.joined().count })
        let code = try QRCode(text: reference.text.joined(), errorCorrection: reference.errorCorrection)
        #expect(code.modules == reference.modules)
    }

    /// Every version at every level, filled to capacity: the capacity, the version chosen, the mask chosen and a hash
    /// of all modules match segno's.
    @Test(arguments: ReferenceHash.all)
    func everyVersionAndLevelMatchesTheReference(_ reference: ReferenceHash) throws {
        let bytes = ReferenceHash.filler(version: reference.version, errorCorrection: reference.errorCorrection, byteCount: reference.byteCount)
        let code = try QRCode(bytes: bytes, errorCorrection: reference.errorCorrection)
        #expect(code.version == reference.version)
        #expect(code.mask == reference.mask)
        #expect(code.moduleHash == reference.hash)
        if reference.version < 40 {
            // The mask is beside the point here: mask 0 spares the evaluation of all eight.
            let oneMore = try QRCode(bytes: bytes + [0x20], errorCorrection: reference.errorCorrection, mask: 0)
            #expect(oneMore.version == reference.version + 1)
        }
    }

    @Test func theHashesCoverEveryVersionAndLevel() {
        #expect(ReferenceHash.all.count == 160)
        #expect(Set(ReferenceHash.all.map { "\($0.version) \($0.errorCorrection)" }).count == 160)
    }
}
