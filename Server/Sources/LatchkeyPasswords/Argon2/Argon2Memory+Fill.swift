extension Argon2Memory {
    /// Where the segment being filled is.
    struct Position {
        let pass: Int
        let slice: Int
        let lane: Int
    }

    /// Runs every pass (RFC 9106 §3.2 steps 5 and 6), lanes one after another within each slice.
    ///
    /// Within a slice a lane references only its own segment and other lanes' finished slices, so computing the
    /// lanes sequentially gives the same result as running them in parallel.
    func fill(variant: Argon2.Variant, passes: Int) {
        for pass in 0..<passes {
            for slice in 0..<Self.slices {
                for lane in 0..<self.lanes {
                    self.fillSegment(Position(pass: pass, slice: slice, lane: lane), variant: variant, passes: passes)
                }
            }
        }
    }

    private func fillSegment(_ position: Position, variant: Argon2.Variant, passes: Int) {
        let dataIndependent = variant == .argon2i || (variant == .argon2id && position.pass == 0 && position.slice < Self.slices / 2)
        let compressionScratch = self.scratch
        let addresses = self.scratch + Self.wordsPerBlock
        let addressInput = self.scratch + 2 * Self.wordsPerBlock
        let zero = self.scratch + 3 * Self.wordsPerBlock
        if dataIndependent {
            addressInput.update(repeating: 0, count: Self.wordsPerBlock)
            addressInput[0] = UInt64(position.pass)
            addressInput[1] = UInt64(position.lane)
            addressInput[2] = UInt64(position.slice)
            addressInput[3] = UInt64(self.blockCount)
            addressInput[4] = UInt64(passes)
            addressInput[5] = UInt64(variant.rawValue)
        }
        // The address block for J1 || J2 (RFC 9106 §3.4.1.2): G(0, G(0, Z)) with a counter in Z.
        func nextAddresses() {
            addressInput[6] &+= 1
            Self.compress(previous: zero, reference: addressInput, into: addresses, scratch: compressionScratch, xorsIntoNext: false)
            Self.compress(previous: zero, reference: addresses, into: addresses, scratch: compressionScratch, xorsIntoNext: false)
        }

        let firstPass = position.pass == 0
        // The first two blocks of each lane come from H0.
        let startIndex = firstPass && position.slice == 0 ? 2 : 0
        if dataIndependent && startIndex != 0 { nextAddresses() }
        for index in startIndex..<self.segmentLength {
            let column = position.slice * self.segmentLength + index
            let previousColumn = column == 0 ? self.laneLength - 1 : column - 1
            let pseudoRandom: UInt64
            if dataIndependent {
                if index % Self.wordsPerBlock == 0 { nextAddresses() }
                pseudoRandom = addresses[index % Self.wordsPerBlock]
            } else {
                pseudoRandom = self.block(lane: position.lane, column: previousColumn)[0]
            }
            let referenceLane = firstPass && position.slice == 0 ? position.lane : Int((pseudoRandom >> 32) % UInt64(self.lanes))
            let referenceColumn = self.referenceColumn(
                position,
                index: index,
                sameLane: referenceLane == position.lane,
                pseudoRandom: UInt32(truncatingIfNeeded: pseudoRandom)
            )
            Self.compress(
                previous: self.block(lane: position.lane, column: previousColumn),
                reference: self.block(lane: referenceLane, column: referenceColumn),
                into: self.block(lane: position.lane, column: column),
                scratch: compressionScratch,
                xorsIntoNext: !firstPass
            )
        }
    }

    /// The column of the reference block within its lane (RFC 9106 §3.4.2), from J1.
    @inline(__always)
    private func referenceColumn(_ position: Position, index: Int, sameLane: Bool, pseudoRandom: UInt32) -> Int {
        // W: every block already finished that is not in the current segment of another lane, minus the previous block.
        let areaSize: Int
        if position.pass == 0 {
            if position.slice == 0 || sameLane {
                areaSize = position.slice * self.segmentLength + index - 1
            } else {
                areaSize = position.slice * self.segmentLength - (index == 0 ? 1 : 0)
            }
        } else {
            areaSize = self.laneLength - self.segmentLength + (sameLane ? index - 1 : (index == 0 ? -1 : 0))
        }
        let x = (UInt64(pseudoRandom) &* UInt64(pseudoRandom)) >> 32
        let y = (UInt64(areaSize) &* x) >> 32
        let relative = areaSize - 1 - Int(y)
        let start = position.pass == 0 || position.slice == Self.slices - 1 ? 0 : (position.slice + 1) * self.segmentLength
        return (start + relative) % self.laneLength
    }
}
