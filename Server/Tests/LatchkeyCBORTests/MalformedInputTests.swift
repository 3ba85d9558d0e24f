import LatchkeyCBOR
import Testing

/// Inputs no encoder made: none may trap, and whatever decodes must encode and decode to the same bytes again.
@Suite struct MalformedInputTests {
    /// SplitMix64, so that every run tries the same inputs.
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64

        mutating func next() -> UInt64 {
            self.state &+= 0x9E37_79B9_7F4A_7C15
            var z = self.state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// Decodes `input`; when it decodes, checks that its encoding is stable. Counts refusals.
    func survive(_ input: [UInt8], refusals: inout Int) {
        do {
            let decoded = try CBORDecoder().decode(input)
            let encoded = CBOREncoder.encode(decoded)
            #expect(CBOREncoder.encode(try CBORDecoder().decode(encoded)) == encoded)
        } catch {
            refusals += 1
        }
    }

    @Test func everyTruncationOfARealAttestationObjectIsRefusedAsTruncated() {
        #expect(realAttestationObject.count == 226)
        for length in 0..<realAttestationObject.count {
            #expect(throws: CBORError.self) { try CBORDecoder().decode(Array(realAttestationObject[..<length])) }
            #expect((try? CBORDecoder().decodePrefix(realAttestationObject[..<length])) == nil)
        }
    }

    @Test func everyBitFlipOfTheHeadOfARealAttestationObjectDecodesOrIsRefused() {
        var refusals = 0
        var inputs = 0
        for index in 0..<64 {
            for bit in 0..<8 {
                var mutated = realAttestationObject
                mutated[index] ^= 1 << bit
                self.survive(mutated, refusals: &refusals)
                inputs += 1
            }
        }
        #expect(inputs == 512)
        #expect(refusals > 50)
    }

    @Test func randomBytesDecodeOrAreRefused() {
        var generator = SeededGenerator(state: 33)
        var refusals = 0
        for _ in 0..<2000 {
            let length = Int.random(in: 0...48, using: &generator)
            let input = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            self.survive(input, refusals: &refusals)
        }
        #expect(refusals > 1000)
    }

    @Test func randomSplicesOfARealAttestationObjectDecodeOrAreRefused() {
        var generator = SeededGenerator(state: 8949)
        var refusals = 0
        for _ in 0..<1000 {
            var mutated = realAttestationObject
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let index = Int.random(in: 0..<mutated.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: mutated[index] = UInt8.random(in: 0...255, using: &generator)
                case 1: mutated.remove(at: index)
                default: mutated.insert(UInt8.random(in: 0...255, using: &generator), at: index)
                }
            }
            self.survive(mutated, refusals: &refusals)
        }
        #expect(refusals > 0)
    }

    @Test func deeplyNestedInputIsRefusedWithoutExhaustingTheStack() {
        let input = [UInt8](repeating: 0x81, count: 100_000) + [0x00]
        #expect(throws: CBORError(.tooDeep, offset: 16)) { try CBORDecoder().decode(input) }
    }
}
