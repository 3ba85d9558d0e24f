extension Sequence<UInt8> {
    /// Whether two byte sequences are equal, in a time that depends only on their lengths (challenges, RP ID hashes).
    func constantTimeEquals(_ other: some Sequence<UInt8>) -> Bool {
        let (mine, theirs) = (Array(self), Array(other))
        guard mine.count == theirs.count else { return false }
        return zip(mine, theirs).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
