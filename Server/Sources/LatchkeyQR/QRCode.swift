/// A QR code (ISO/IEC 18004, Model 2) holding bytes in byte mode: the smallest of versions 1 to 40 that fits, the
/// error-correction level asked for, and the data mask with the lowest penalty.
///
/// Made for short texts such as an `otpauth://` enrolment URI, shown as inline SVG with ``svg(moduleSize:quietZone:label:)``:
///
/// ```swift
/// let code = try QRCode(text: "otpauth://totp/Latchkey:ada@example.com?secret=JBSWY3DPEHPK3PXP&issuer=Latchkey")
/// let markup = code.svg()
/// ```
public struct QRCode: Sendable, Hashable {
    /// How much of the symbol may be damaged and still read: about 7 %, 15 %, 25 % or 30 % of its codewords.
    public enum ErrorCorrection: Sendable, Hashable, CaseIterable {
        /// Level L: about 7 % of the codewords can be restored.
        case low
        /// Level M: about 15 % of the codewords can be restored.
        case medium
        /// Level Q: about 25 % of the codewords can be restored.
        case quartile
        /// Level H: about 30 % of the codewords can be restored.
        case high
    }

    /// Thrown when the bytes do not fit a version 40 symbol at the error-correction level asked for.
    public struct TooLong: Error, Sendable, Hashable, CustomStringConvertible {
        /// The number of bytes given.
        public let byteCount: Int
        /// The most bytes a version 40 symbol holds at ``errorCorrection``.
        public let capacity: Int
        /// The error-correction level asked for.
        public let errorCorrection: ErrorCorrection

        /// Says how many bytes were given and how many fit.
        public var description: String {
            "\(self.byteCount) bytes do not fit a QR code: at most \(self.capacity) fit at error correction \(self.errorCorrection)"
        }
    }

    /// The version, 1 to 40: the symbol is `4 × version + 17` modules wide.
    public let version: Int
    /// The error-correction level.
    public let errorCorrection: ErrorCorrection
    /// The data mask applied, 0 to 7.
    public let mask: Int
    /// The width and height of the symbol in modules, without a quiet zone.
    public var size: Int { self.grid.size }

    private let grid: ModuleGrid

    /// Encodes `bytes` in byte mode in the smallest version that holds them at `errorCorrection`.
    ///
    /// - Throws: ``TooLong`` when they do not fit version 40.
    public init(bytes: [UInt8], errorCorrection: ErrorCorrection = .medium) throws {
        try self.init(bytes: bytes, errorCorrection: errorCorrection, mask: nil)
    }

    /// Encodes the UTF-8 bytes of `text` in byte mode in the smallest version that holds them at `errorCorrection`.
    ///
    /// - Throws: ``TooLong`` when they do not fit version 40.
    public init(text: String, errorCorrection: ErrorCorrection = .medium) throws {
        try self.init(bytes: Array(text.utf8), errorCorrection: errorCorrection)
    }

    /// Encodes `bytes` with the data mask given, or with the one of lowest penalty when `mask` is `nil`.
    package init(bytes: [UInt8], errorCorrection: ErrorCorrection, mask: Int?) throws {
        precondition(mask.map { (0..<8).contains($0) } ?? true, "a QR code's mask is 0 to 7")
        guard let version = SymbolVersion.smallest(holding: bytes.count, at: errorCorrection) else {
            throw TooLong(
                byteCount: bytes.count, capacity: SymbolVersion(40).byteCapacity(at: errorCorrection), errorCorrection: errorCorrection)
        }
        let codewords = version.codewords(for: DataCodewords(bytes: bytes, version: version, errorCorrection: errorCorrection))
        var grid = ModuleGrid(version: version)
        grid.place(codewords)
        let mask = mask.map { MaskPattern(rawValue: $0)! } ?? grid.lowestPenaltyMask()
        grid.apply(mask)
        grid.drawFormatInformation(errorCorrection: errorCorrection, mask: mask)
        grid.drawVersionInformation()
        self.version = version.number
        self.errorCorrection = errorCorrection
        self.mask = mask.rawValue
        self.grid = grid
    }

    /// Whether the module in column `x` and row `y` (both from 0 at the top left, quiet zone not counted) is dark.
    public subscript(x: Int, y: Int) -> Bool {
        self.grid[x, y]
    }
}
