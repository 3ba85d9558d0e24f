import LatchkeyCBOR
import Testing

/// Every input the decoder refuses, with the code and the offset it names.
@Suite struct DecoderRefusalTests {
    func refusal(_ bytes: [UInt8], decoder: CBORDecoder = CBORDecoder()) -> CBORError? {
        do {
            _ = try decoder.decode(bytes)
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: ["", "18", "1901", "1b00000000000000", "4201", "6261", "8201", "a101", "a1", "f9", "fa000000"])
    func truncatedInput(_ input: String) {
        #expect(self.refusal(hex(input))?.code == .truncated)
    }

    @Test(arguments: ["5f42010243030405ff", "7f657374726561646d696e67ff", "9fff", "9f018202039f0405ffff", "bf61610161629f0203ffff"])
    func indefiniteLengths(_ input: String) {
        #expect(self.refusal(hex(input)) == CBORError(.indefiniteLength, offset: 0))
    }

    @Test(arguments: ["1c", "1d", "1e", "1f", "3c", "3f", "5c", "7d", "9e", "bc", "fc", "fd", "fe"])
    func reservedAdditionalInformation(_ input: String) {
        #expect(self.refusal(hex(input)) == CBORError(.reserved, offset: 0))
    }

    @Test func breakWithoutIndefiniteItem() {
        #expect(self.refusal(hex("ff")) == CBORError(.unexpectedBreak, offset: 0))
        #expect(self.refusal(hex("8201ff")) == CBORError(.unexpectedBreak, offset: 2))
    }

    @Test(arguments: [
        "c074323031332d30332d32315432303a30343a30305a", "c11a514b67b0", "d82076687474703a2f2f7777772e6578616d706c652e636f6d",
        "c249010000000000000000",
    ])
    func tags(_ input: String) {
        #expect(self.refusal(hex(input)) == CBORError(.unsupportedTag, offset: 0))
    }

    @Test(arguments: ["e0", "f0", "f3", "f818", "f8ff"])
    func simpleValuesOtherThanFalseTrueNullUndefined(_ input: String) {
        #expect(self.refusal(hex(input)) == CBORError(.unsupportedSimpleValue, offset: 0))
    }

    @Test func duplicateMapKeys() {
        #expect(self.refusal(hex("a201020103")) == CBORError(.duplicateMapKey, offset: 3))
        #expect(self.refusal(hex("a26161016161f6")) == CBORError(.duplicateMapKey, offset: 4))
        #expect(self.refusal(hex("81a2820102f6820102f6")) == CBORError(.duplicateMapKey, offset: 6))
    }

    @Test(arguments: ["62c328", "61ff", "63eda080", "62c0af", "64f8888080"])
    func invalidUTF8(_ input: String) {
        #expect(self.refusal(hex(input)) == CBORError(.invalidUTF8, offset: 0))
    }

    @Test func nestingUpToTheMaximumDepth() throws {
        let sixteen = [UInt8](repeating: 0x81, count: 16) + [0x00]
        _ = try CBORDecoder().decode(sixteen)
        #expect(self.refusal([0x81] + sixteen) == CBORError(.tooDeep, offset: 16))
        #expect(self.refusal(hex("a1018100"), decoder: CBORDecoder(maximumDepth: 1)) == CBORError(.tooDeep, offset: 2))
    }

    @Test func moreItemsThanTheMaximum() throws {
        _ = try CBORDecoder(maximumItems: 4).decode(hex("83010203"))
        #expect(self.refusal(hex("83010203"), decoder: CBORDecoder(maximumItems: 3)) == CBORError(.tooLarge, offset: 3))
        #expect(self.refusal(hex("a10102"), decoder: CBORDecoder(maximumItems: 2)) == CBORError(.tooLarge, offset: 2))
    }

    @Test func declaredCountsBeyondTheMaximumOrTheInputAllocateNothing() {
        #expect(self.refusal(hex("9bffffffffffffffff")) == CBORError(.tooLarge, offset: 0))
        #expect(self.refusal(hex("bbffffffffffffffff")) == CBORError(.tooLarge, offset: 0))
        #expect(self.refusal(hex("990fff")) == CBORError(.truncated, offset: 0))
        let unlimited = CBORDecoder(maximumItems: .max)
        #expect(self.refusal(hex("9b7fffffffffffffff00"), decoder: unlimited) == CBORError(.truncated, offset: 0))
        #expect(self.refusal(hex("bb7fffffffffffffff0000"), decoder: unlimited) == CBORError(.truncated, offset: 0))
    }

    @Test func stringsLongerThanTheMaximumLengthOrTheInput() throws {
        #expect(self.refusal(hex("5a00010001") + [UInt8](repeating: 0, count: 65_537)) == CBORError(.tooLarge, offset: 0))
        #expect(self.refusal(hex("7bffffffffffffffff")) == CBORError(.tooLarge, offset: 0))
        #expect(self.refusal(hex("5b7fffffffffffffff"), decoder: CBORDecoder(maximumLength: .max)) == CBORError(.truncated, offset: 0))
        #expect(self.refusal(hex("4401020304"), decoder: CBORDecoder(maximumLength: 3)) == CBORError(.tooLarge, offset: 0))
        _ = try CBORDecoder(maximumLength: 4).decode(hex("4401020304"))
    }

    @Test func trailingBytes() throws {
        #expect(self.refusal(hex("0000")) == CBORError(.trailingBytes, offset: 1))
        #expect(self.refusal(hex("a0ff")) == CBORError(.trailingBytes, offset: 1))
    }

    @Test func prefixDecodingLeavesWhatFollows() throws {
        let bytes = hex("ff a10102 a0")
        let (item, consumed) = try CBORDecoder().decodePrefix(bytes[1...])
        #expect(item == .map([CBOR.Entry(key: CBOR(1), value: CBOR(2))]))
        #expect(consumed == 3)
        #expect(throws: CBORError(.truncated, offset: 0)) { try CBORDecoder().decodePrefix(bytes[1..<3]) }
        #expect(throws: CBORError(.unexpectedBreak, offset: 2)) { try CBORDecoder().decodePrefix(hex("ff 8201ff")[1...]) }
    }

    @Test func descriptionsNameTheCodeAndOffsetButNoInput() {
        let error = self.refusal(Array([0x66] + Array("secre".utf8) + [0xFF]))
        #expect(error?.code == .invalidUTF8)
        #expect(error?.description == "CBOR: a text string is not valid UTF-8 (at byte 0)")
    }
}
