/// A password hash as stored: the algorithm and its parameters, the salt and the hash, read from or written as a
/// PHC string (`$argon2id$v=19$m=19456,t=2,p=1$…$…` or `$scrypt$ln=17,r=8,p=1$…$…`).
struct StoredPasswordHash: Equatable {
    let algorithm: PasswordHasher.Algorithm
    let salt: [UInt8]
    let hash: [UInt8]

    init(algorithm: PasswordHasher.Algorithm, salt: [UInt8], hash: [UInt8]) {
        self.algorithm = algorithm
        self.salt = salt
        self.hash = hash
    }

    /// Parses `text`; nil when it is malformed, names an algorithm or version we do not compute, or asks for
    /// parameters outside ``PasswordHasher``'s limits.
    init?(phc text: String) {
        guard let phc = PHCString(parsing: text), PasswordHasher.Limits.saltByteCounts.contains(phc.salt.count) else { return nil }
        let values = phc.parameters.map(\.value)
        let algorithm: PasswordHasher.Algorithm
        if let variant = Argon2.Variant.allCases.first(where: { $0.name == phc.algorithm }) {
            guard phc.version == Int(Argon2.version), phc.parameterNames == ["m", "t", "p"] else { return nil }
            algorithm = .argon2(
                .init(variant: variant, memoryKibibytes: values[0], iterations: values[1], parallelism: values[2], tagByteCount: phc.hash.count)
            )
        } else if phc.algorithm == "scrypt" {
            guard phc.version == nil, phc.parameterNames == ["ln", "r", "p"] else { return nil }
            algorithm = .scrypt(.init(costExponent: values[0], blockSize: values[1], parallelism: values[2], keyByteCount: phc.hash.count))
        } else {
            return nil
        }
        guard (try? algorithm.checkLimits()) != nil else { return nil }
        self.init(algorithm: algorithm, salt: phc.salt, hash: phc.hash)
    }

    var phcString: String {
        let phc: PHCString
        switch self.algorithm {
        case .argon2(let parameters):
            phc = PHCString(
                algorithm: parameters.variant.name,
                version: Int(Argon2.version),
                parameters: [
                    .init(name: "m", value: parameters.memoryKibibytes), .init(name: "t", value: parameters.iterations),
                    .init(name: "p", value: parameters.parallelism),
                ],
                salt: self.salt,
                hash: self.hash
            )
        case .scrypt(let parameters):
            phc = PHCString(
                algorithm: "scrypt",
                version: nil,
                parameters: [
                    .init(name: "ln", value: parameters.costExponent), .init(name: "r", value: parameters.blockSize),
                    .init(name: "p", value: parameters.parallelism),
                ],
                salt: self.salt,
                hash: self.hash
            )
        }
        return phc.text
    }
}
