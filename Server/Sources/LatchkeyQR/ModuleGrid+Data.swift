extension ModuleGrid {
    /// Places the codewords' bits, most significant first, in the encoding region (clause 7.7.3): two-module columns
    /// from the right, upwards then downwards in turn, skipping the vertical timing pattern; the 0 to 7 modules left
    /// over are the remainder bits, light until masked.
    mutating func place(_ codewords: [UInt8]) {
        var bitIndex = 0
        let bitCount = codewords.count * 8
        var right = self.size - 1
        while right >= 1 {
            if right == 6 { right = 5 }
            let upwards = (right + 1) & 2 == 0
            for step in 0..<self.size {
                let y = upwards ? self.size - 1 - step : step
                for x in [right, right - 1] where !self.isFunction(x, y) && bitIndex < bitCount {
                    let dark = (codewords[bitIndex / 8] >> (7 - UInt8(bitIndex % 8))) & 1 == 1
                    self.setData(x, y, dark: dark)
                    bitIndex += 1
                }
            }
            right -= 2
        }
        precondition(bitIndex == bitCount, "the codewords do not fit version \(self.version.number)")
    }

    /// Inverts every module of the encoding region that `mask` selects.
    mutating func apply(_ mask: MaskPattern) {
        for y in 0..<self.size {
            for x in 0..<self.size where !self.isFunction(x, y) && mask.inverts(x: x, y: y) {
                self.setData(x, y, dark: !self[x, y])
            }
        }
    }

    /// The mask whose result has the lowest penalty (the first of them on a tie), scored as clause 7.8.3 says on the
    /// symbol before its format and version information are drawn: the format encodes the mask chosen here.
    func lowestPenaltyMask() -> MaskPattern {
        var best: (mask: MaskPattern, penalty: Int)?
        for mask in MaskPattern.allCases {
            var masked = self
            masked.apply(mask)
            let penalty = MaskPenalty.score(masked.modules, size: self.size)
            if best.map({ penalty < $0.penalty }) ?? true {
                best = (mask, penalty)
            }
        }
        return best!.mask
    }
}
