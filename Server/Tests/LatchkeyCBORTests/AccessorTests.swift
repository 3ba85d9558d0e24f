import LatchkeyCBOR
import Testing

@Suite struct AccessorTests {
    let coseKey = CBOR.map([
        CBOR.Entry(key: CBOR(1), value: CBOR(2)),
        CBOR.Entry(key: CBOR(3), value: CBOR(-7)),
        CBOR.Entry(key: CBOR(-2), value: .bytes([1, 2])),
        CBOR.Entry(key: .text("fmt"), value: .text("none")),
    ])

    @Test func mapsAreReadByIntegerTextAndItemKeys() {
        #expect(self.coseKey[1]?.intValue == 2)
        #expect(self.coseKey[3]?.intValue == -7)
        #expect(self.coseKey[-2]?.bytesValue == [1, 2])
        #expect(self.coseKey["fmt"]?.textValue == "none")
        #expect(self.coseKey[CBOR.text("fmt")] == .text("none"))
        #expect(self.coseKey[4] == nil)
        #expect(CBOR.array([CBOR(1)])[0] == nil)
    }

    @Test func integersBeyondIntHaveNoIntValue() {
        #expect(CBOR.unsigned(UInt64(Int.max)).intValue == .max)
        #expect(CBOR.unsigned(UInt64(Int.max) + 1).intValue == nil)
        #expect(CBOR.negative(UInt64(Int.max)).intValue == .min)
        #expect(CBOR.negative(UInt64(Int.max) + 1).intValue == nil)
    }

    @Test func accessorsOfTheWrongKindAreNil() {
        #expect(CBOR.text("a").bytesValue == nil)
        #expect(CBOR.bytes([]).textValue == nil)
        #expect(CBOR.null.intValue == nil)
        #expect(CBOR.array([]).mapEntries == nil)
        #expect(CBOR.map([]).arrayValue == nil)
        #expect(CBOR.bool(true).boolValue == true)
    }
}
