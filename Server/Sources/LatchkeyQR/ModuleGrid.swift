/// The modules of a symbol, row by row, and which of them belong to function patterns (finders, separators, timing,
/// alignment, format and version information) rather than to the encoding region.
struct ModuleGrid: Hashable {
    let version: SymbolVersion
    let size: Int
    private(set) var modules: [Bool]
    private var functionModules: [Bool]

    /// A grid with its function patterns drawn and the format and version information areas reserved, light, as
    /// they stay until a mask is chosen.
    init(version: SymbolVersion) {
        self.version = version
        self.size = version.size
        self.modules = Array(repeating: false, count: self.size * self.size)
        self.functionModules = self.modules
        self.drawTimingPatterns()
        self.drawFinderPatterns()
        self.drawAlignmentPatterns()
        self.reserveFormatAndVersionInformation()
    }

    subscript(x: Int, y: Int) -> Bool {
        self.modules[y * self.size + x]
    }

    /// Whether the module belongs to a function pattern, outside the encoding region.
    func isFunction(_ x: Int, _ y: Int) -> Bool {
        self.functionModules[y * self.size + x]
    }

    /// Sets a module of the encoding region.
    mutating func setData(_ x: Int, _ y: Int, dark: Bool) {
        precondition(!self.isFunction(x, y))
        self.modules[y * self.size + x] = dark
    }

    private mutating func setFunction(_ x: Int, _ y: Int, dark: Bool) {
        self.modules[y * self.size + x] = dark
        self.functionModules[y * self.size + x] = true
    }

    private mutating func drawTimingPatterns() {
        for index in 0..<self.size {
            self.setFunction(6, index, dark: index % 2 == 0)
            self.setFunction(index, 6, dark: index % 2 == 0)
        }
    }

    /// The three finder patterns with their light separators.
    private mutating func drawFinderPatterns() {
        for (centreX, centreY) in [(3, 3), (self.size - 4, 3), (3, self.size - 4)] {
            for dy in -4...4 {
                for dx in -4...4 {
                    let (x, y) = (centreX + dx, centreY + dy)
                    guard (0..<self.size).contains(x), (0..<self.size).contains(y) else { continue }
                    let ring = max(abs(dx), abs(dy))
                    self.setFunction(x, y, dark: ring != 2 && ring != 4)
                }
            }
        }
    }

    /// An alignment pattern on every pair of centres except the three that fall on a finder pattern.
    private mutating func drawAlignmentPatterns() {
        let centres = self.version.alignmentPatternCentres
        guard let first = centres.first, let last = centres.last else { return }
        for centreY in centres {
            for centreX in centres where ![(first, first), (first, last), (last, first)].contains(where: { $0 == (centreX, centreY) }) {
                for dy in -2...2 {
                    for dx in -2...2 {
                        self.setFunction(centreX + dx, centreY + dy, dark: max(abs(dx), abs(dy)) != 1)
                    }
                }
            }
        }
    }

    private mutating func reserveFormatAndVersionInformation() {
        self.drawFormatBits(0, darkModule: false)
        if self.version.number >= 7 {
            self.drawVersionBits(0)
        }
    }

    /// The 15 format bits around the top-left finder and again split beside the other two, with the dark module
    /// above the bottom-left finder.
    private mutating func drawFormatBits(_ bits: Int, darkModule: Bool) {
        func bit(_ index: Int) -> Bool { (bits >> index) & 1 == 1 }
        for index in 0...5 {
            self.setFunction(8, index, dark: bit(index))
        }
        self.setFunction(8, 7, dark: bit(6))
        self.setFunction(8, 8, dark: bit(7))
        self.setFunction(7, 8, dark: bit(8))
        for index in 9..<15 {
            self.setFunction(14 - index, 8, dark: bit(index))
        }
        for index in 0..<8 {
            self.setFunction(self.size - 1 - index, 8, dark: bit(index))
        }
        for index in 8..<15 {
            self.setFunction(8, self.size - 15 + index, dark: bit(index))
        }
        self.setFunction(8, self.size - 8, dark: darkModule)
    }

    /// The 18 version bits in the 6 × 3 blocks beside the top-right and the bottom-left finders.
    private mutating func drawVersionBits(_ bits: Int) {
        for index in 0..<18 {
            let dark = (bits >> index) & 1 == 1
            let (along, across) = (self.size - 11 + index % 3, index / 3)
            self.setFunction(along, across, dark: dark)
            self.setFunction(across, along, dark: dark)
        }
    }

    /// The format information of clause 7.9: the level's two bits and the mask's three, a BCH(15, 5) code of them,
    /// XOR 101010000010010.
    mutating func drawFormatInformation(errorCorrection: QRCode.ErrorCorrection, mask: MaskPattern) {
        let levelBits =
            switch errorCorrection {
            case .low: 0b01
            case .medium: 0b00
            case .quartile: 0b11
            case .high: 0b10
            }
        let data = levelBits << 3 | mask.rawValue
        self.drawFormatBits((data << 10 | Self.bchRemainder(of: data, generator: 0x537, degree: 10)) ^ 0x5412, darkModule: true)
    }

    /// The version information of clause 7.10 (versions 7 and up): six version bits and a BCH(18, 6) code of them.
    mutating func drawVersionInformation() {
        guard self.version.number >= 7 else { return }
        let number = self.version.number
        self.drawVersionBits(number << 12 | Self.bchRemainder(of: number, generator: 0x1F25, degree: 12))
    }

    /// The remainder of `data × x^degree` divided by `generator` (of that degree) over GF(2).
    private static func bchRemainder(of data: Int, generator: Int, degree: Int) -> Int {
        var remainder = data << degree
        for bit in stride(from: Int.bitWidth - 2, through: degree, by: -1) where (remainder >> bit) & 1 == 1 {
            remainder ^= generator << (bit - degree)
        }
        return remainder
    }
}
