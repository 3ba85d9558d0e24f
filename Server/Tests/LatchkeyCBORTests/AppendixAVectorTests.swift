import LatchkeyCBOR
import Testing

/// The examples of RFC 8949 Appendix A that this decoder accepts: all but tags, bignums and indefinite lengths.
@Suite struct AppendixAVectorTests {
    static let items: [(String, CBOR)] = [
        ("00", .unsigned(0)),
        ("01", .unsigned(1)),
        ("0a", .unsigned(10)),
        ("17", .unsigned(23)),
        ("1818", .unsigned(24)),
        ("1819", .unsigned(25)),
        ("1864", .unsigned(100)),
        ("1903e8", .unsigned(1000)),
        ("1a000f4240", .unsigned(1_000_000)),
        ("1b000000e8d4a51000", .unsigned(1_000_000_000_000)),
        ("1bffffffffffffffff", .unsigned(.max)),
        ("3bffffffffffffffff", .negative(.max)),
        ("20", CBOR(-1)),
        ("29", CBOR(-10)),
        ("3863", CBOR(-100)),
        ("3903e7", CBOR(-1000)),
        ("f4", .bool(false)),
        ("f5", .bool(true)),
        ("f6", .null),
        ("f7", .undefined),
        ("40", .bytes([])),
        ("4401020304", .bytes([1, 2, 3, 4])),
        ("60", .text("")),
        ("6161", .text("a")),
        ("6449455446", .text("IETF")),
        ("62225c", .text("\"\\")),
        ("62c3bc", .text("\u{00fc}")),
        ("63e6b0b4", .text("\u{6c34}")),
        ("64f0908591", .text("\u{10151}")),
        ("80", .array([])),
        ("83010203", .array([CBOR(1), CBOR(2), CBOR(3)])),
        ("8301820203820405", .array([CBOR(1), .array([CBOR(2), CBOR(3)]), .array([CBOR(4), CBOR(5)])])),
        ("98190102030405060708090a0b0c0d0e0f101112131415161718181819", .array((1...25).map { CBOR($0) })),
        ("a0", .map([])),
        ("a201020304", .map([CBOR.Entry(key: CBOR(1), value: CBOR(2)), CBOR.Entry(key: CBOR(3), value: CBOR(4))])),
        (
            "a26161016162820203",
            .map([
                CBOR.Entry(key: .text("a"), value: CBOR(1)), CBOR.Entry(key: .text("b"), value: .array([CBOR(2), CBOR(3)])),
            ])
        ),
        ("826161a161626163", .array([.text("a"), .map([CBOR.Entry(key: .text("b"), value: .text("c"))])])),
        (
            "a56161614161626142616361436164614461656145",
            .map(["a", "b", "c", "d", "e"].map { CBOR.Entry(key: .text($0), value: .text($0.uppercased())) })
        ),
    ]

    static let floats: [(String, Double)] = [
        ("f90000", 0.0),
        ("f98000", -0.0),
        ("f93c00", 1.0),
        ("fb3ff199999999999a", 1.1),
        ("f93e00", 1.5),
        ("f97bff", 65504.0),
        ("fa47c35000", 100_000.0),
        ("fa7f7fffff", 3.4028234663852886e+38),
        ("fb7e37e43c8800759c", 1.0e+300),
        ("f90001", 5.960464477539063e-8),
        ("f90400", 0.00006103515625),
        ("f9c400", -4.0),
        ("fbc010666666666666", -4.1),
        ("f97c00", .infinity),
        ("f9fc00", -.infinity),
        ("fa7f800000", .infinity),
        ("faff800000", -.infinity),
        ("fb7ff0000000000000", .infinity),
        ("fbfff0000000000000", -.infinity),
    ]

    @Test(arguments: Self.items.map(\.0))
    func decodesAndEncodesBack(_ encoded: String) throws {
        let expected = Self.items.first { $0.0 == encoded }!.1
        #expect(try CBORDecoder().decode(hex(encoded)) == expected)
        #expect(CBOREncoder.encode(expected) == hex(encoded))
    }

    @Test(arguments: Self.floats.map(\.0))
    func decodesFloats(_ encoded: String) throws {
        let expected = Self.floats.first { $0.0 == encoded }!.1
        let decoded = try CBORDecoder().decode(hex(encoded))
        #expect(decoded == .float(expected))
        #expect(decoded != .float(-expected) || expected == 0)
    }

    @Test(arguments: ["f97e00", "fa7fc00000", "fb7ff8000000000000"])
    func decodesNaN(_ encoded: String) throws {
        guard case .float(let value) = try CBORDecoder().decode(hex(encoded)) else {
            Issue.record("not a float")
            return
        }
        #expect(value.isNaN)
    }

    @Test func negativeZeroKeepsItsSign() throws {
        guard case .float(let value) = try CBORDecoder().decode(hex("f98000")) else { return }
        #expect(value.sign == .minus)
    }

    @Test func encodesDoublesInEightBytes() {
        #expect(CBOREncoder.encode(.float(1.1)) == hex("fb3ff199999999999a"))
    }

    @Test func acceptsIntegersNotInPreferredForm() throws {
        #expect(try CBORDecoder().decode(hex("1800")) == .unsigned(0))
        #expect(try CBORDecoder().decode(hex("1b0000000000000001")) == .unsigned(1))
        #expect(try CBORDecoder().decode(hex("5900026869")) == .bytes([0x68, 0x69]))
    }
}
