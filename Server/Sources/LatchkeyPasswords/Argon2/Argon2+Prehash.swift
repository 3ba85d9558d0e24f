extension Argon2 {
    /// H0 (RFC 9106 §3.2 step 1): the 64-byte digest of every input and parameter.
    static func initialHash(
        password: [UInt8],
        salt: [UInt8],
        secret: [UInt8],
        associatedData: [UInt8],
        parameters: Parameters
    ) -> [UInt8] {
        var hasher = BLAKE2b(outputByteCount: 64)
        for value in [parameters.parallelism, parameters.tagByteCount, parameters.memoryKibibytes, parameters.iterations] {
            hasher.update(littleEndian32(value))
        }
        hasher.update(littleEndian32(Int(Self.version)))
        hasher.update(littleEndian32(Int(parameters.variant.rawValue)))
        for field in [password, salt, secret, associatedData] {
            hasher.update(littleEndian32(field.count))
            hasher.update(field)
        }
        return hasher.finalize()
    }

    /// H' (RFC 9106 §3.3): BLAKE2b stretched to any output length.
    static func variableLengthHash(_ input: [UInt8], outputByteCount: Int) -> [UInt8] {
        var first = BLAKE2b(outputByteCount: min(outputByteCount, BLAKE2b.maximumOutputByteCount))
        first.update(littleEndian32(outputByteCount))
        first.update(input)
        var digest = first.finalize()
        guard outputByteCount > BLAKE2b.maximumOutputByteCount else { return digest }

        // V1…Vr are 64-byte digests of which the first 32 bytes are kept; V(r+1) supplies the rest.
        let wholeDigests = (outputByteCount + 31) / 32 - 2
        var output = [UInt8]()
        output.reserveCapacity(outputByteCount)
        output.append(contentsOf: digest.prefix(32))
        for _ in 1..<wholeDigests {
            digest = BLAKE2b.hash(digest)
            output.append(contentsOf: digest.prefix(32))
        }
        output.append(contentsOf: BLAKE2b.hash(digest, outputByteCount: outputByteCount - 32 * wholeDigests))
        return output
    }

    static func littleEndian32(_ value: Int) -> [UInt8] {
        let word = UInt32(truncatingIfNeeded: value).littleEndian
        return withUnsafeBytes(of: word) { Array($0) }
    }
}
