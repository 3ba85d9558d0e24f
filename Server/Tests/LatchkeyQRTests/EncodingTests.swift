import LatchkeyQR
import Testing

/// What the console relies on: enrolment URIs fit, levels trade size for robustness, too much data is refused.
struct EncodingTests {
    static let otpauth100 = "otpauth://totp/Latchkey:ada.lovelace%40example.com?secret=JBSWY3DPEHPK3PXPJBSWY3DPEH&issuer=Latchkey"

    @Test func aHundredByteEnrolmentURIIsVersion6AtLevelM() throws {
        #expect(Self.otpauth100.utf8.count == 100)
        let code = try QRCode(text: Self.otpauth100)
        #expect(code.version == 6)
        #expect(code.size == 41)
        #expect(code.errorCorrection == .medium)
    }

    @Test func a250ByteEnrolmentURIIsVersion11AtLevelM() throws {
        let uri = "otpauth://totp/Latchkey:" + String(repeating: "a", count: 202) + "?secret=JBSWY3DPEHPK3PXP"
        #expect(uri.utf8.count == 250)
        let code = try QRCode(text: uri)
        #expect(code.version == 11)
        #expect(code.size == 61)
    }

    @Test func higherLevelsNeedLargerSymbols() throws {
        let versions = try QRCode.ErrorCorrection.allCases.map { try QRCode(text: Self.otpauth100, errorCorrection: $0).version }
        #expect(versions == [5, 6, 8, 10])
    }

    @Test func emptyTextIsAVersion1Symbol() throws {
        let code = try QRCode(text: "")
        #expect(code.version == 1)
        #expect(code.size == 21)
    }

    @Test(arguments: [(QRCode.ErrorCorrection.low, 2953), (.medium, 2331), (.quartile, 1663), (.high, 1273)])
    func dataBeyondVersion40IsRefused(_ level: QRCode.ErrorCorrection, capacity: Int) throws {
        #expect(try QRCode(bytes: [UInt8](repeating: 0x41, count: capacity), errorCorrection: level).version == 40)
        let error = #expect(throws: QRCode.TooLong.self) {
            try QRCode(bytes: [UInt8](repeating: 0x41, count: capacity + 1), errorCorrection: level)
        }
        #expect(error?.byteCount == capacity + 1)
        #expect(error?.capacity == capacity)
        #expect(error?.errorCorrection == level)
        #expect(error?.description == "\(capacity + 1) bytes do not fit a QR code: at most \(capacity) fit at error correction \(level)")
    }

    @Test func theSameTextMakesTheSameSymbol() throws {
        #expect(try QRCode(text: Self.otpauth100) == QRCode(bytes: Array(Self.otpauth100.utf8)))
    }
}
