/// The eight data mask patterns of clause 7.8.2: a module of the encoding region in row `i`, column `j` is inverted
/// where the pattern's condition holds.
enum MaskPattern: Int, CaseIterable {
    case checkerboard = 0
    case rows
    case everyThirdColumn
    case diagonals
    case blocks
    case productSum
    case productSumParity
    case mixedParity

    func inverts(x j: Int, y i: Int) -> Bool {
        switch self {
        case .checkerboard: (i + j) % 2 == 0
        case .rows: i % 2 == 0
        case .everyThirdColumn: j % 3 == 0
        case .diagonals: (i + j) % 3 == 0
        case .blocks: (i / 2 + j / 3) % 2 == 0
        case .productSum: (i * j) % 2 + (i * j) % 3 == 0
        case .productSumParity: ((i * j) % 2 + (i * j) % 3) % 2 == 0
        case .mixedParity: ((i + j) % 2 + (i * j) % 3) % 2 == 0
        }
    }
}

/// The penalty of a masked symbol (clause 7.8.3.1, table 11); the mask of lowest penalty is used.
enum MaskPenalty {
    /// N1 + N2 + N3 + N4 of the `size` × `size` modules, row by row.
    static func score(_ modules: [Bool], size: Int) -> Int {
        var penalty = 0
        for index in 0..<size {
            penalty += Self.lineScore(modules, first: index * size, step: 1, count: size)
            penalty += Self.lineScore(modules, first: index, step: size, count: size)
        }
        return penalty + Self.blocks(modules, size: size) + Self.balance(modules)
    }

    /// N1 and N3 of one row or column: the `count` modules at `first`, `first + step`, `first + 2 × step` …
    ///
    /// N1: 3 for each run of five modules of one colour, and 1 more for each module beyond five.
    /// N3: 40 for each dark-light-dark-dark-dark-light-dark run with four light modules before or after it, outside
    /// the symbol counting as light (the quiet zone); a run counts once whichever side is light.
    static func lineScore(_ modules: [Bool], first: Int, step: Int, count: Int) -> Int {
        func isDark(_ position: Int) -> Bool { modules[first + position * step] }
        func isLight(_ range: Range<Int>) -> Bool { !range.clamped(to: 0..<count).contains(where: isDark) }
        var penalty = 0
        var runLength = 0
        for position in 0..<count {
            if position > 0 && isDark(position) == isDark(position - 1) {
                runLength += 1
            } else {
                if runLength >= 5 { penalty += runLength - 2 }
                runLength = 1
            }
        }
        if runLength >= 5 { penalty += runLength - 2 }
        var position = 0
        while position + 7 <= count {
            var matched = 0
            while matched < 7 && isDark(position + matched) == Self.finderLike[matched] { matched += 1 }
            guard matched == 7 else {
                position += 1
                continue
            }
            if isLight((position - 4)..<position) || isLight((position + 7)..<(position + 11)) {
                penalty += 40
                position += 7
            } else {
                // The next such run can start no sooner than on this one's last three modules (dark, light, dark).
                position += 4
            }
        }
        return penalty
    }

    private static let finderLike = [true, false, true, true, true, false, true]

    /// N2: 3 for each 2 × 2 block of one colour (overlapping blocks each count).
    static func blocks(_ modules: [Bool], size: Int) -> Int {
        var penalty = 0
        for y in 1..<size {
            for x in 1..<size {
                let colour = modules[y * size + x]
                if modules[y * size + x - 1] == colour && modules[(y - 1) * size + x] == colour && modules[(y - 1) * size + x - 1] == colour {
                    penalty += 3
                }
            }
        }
        return penalty
    }

    /// N4: 10 for each whole 5 % by which the share of dark modules departs from half.
    static func balance(_ modules: [Bool]) -> Int {
        var dark = 0
        for module in modules where module { dark += 1 }
        return 10 * (abs(dark * 100 - modules.count * 50) / (modules.count * 5))
    }
}
