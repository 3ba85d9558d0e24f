/// A string in the PHC string format: `$<id>[$v=<version>]$<name>=<value>[,<name>=<value>…]$<salt>$<hash>`.
///
/// Only what password hashes need: every parameter value is a decimal integer without sign or leading zeros, and
/// salt and hash are both present. Anything else does not parse; it is never an error a caller sees.
struct PHCString: Equatable {
    /// Longer input is refused before any work (our own strings are about 100 characters).
    static let maximumLength = 512

    struct Parameter: Equatable {
        let name: String
        let value: Int
    }

    var algorithm: String
    var version: Int?
    var parameters: [Parameter]
    var salt: [UInt8]
    var hash: [UInt8]

    init(algorithm: String, version: Int?, parameters: [Parameter], salt: [UInt8], hash: [UInt8]) {
        self.algorithm = algorithm
        self.version = version
        self.parameters = parameters
        self.salt = salt
        self.hash = hash
    }

    init?(parsing text: String) {
        guard text.utf8.count <= Self.maximumLength else { return nil }
        let fields = text.split(separator: "$", omittingEmptySubsequences: false)
        guard fields.count == 5 || fields.count == 6, fields[0].isEmpty, !fields[1].isEmpty,
            fields[1].utf8.allSatisfy({ ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z")) || Self.isDigit($0) || $0 == UInt8(ascii: "-") })
        else { return nil }
        self.algorithm = String(fields[1])
        if fields.count == 6 {
            guard let version = Self.parameter(fields[2]), version.name == "v" else { return nil }
            self.version = version.value
        } else {
            self.version = nil
        }
        var parameters = [Parameter]()
        for field in fields[fields.count - 3].split(separator: ",", omittingEmptySubsequences: false) {
            guard let parameter = Self.parameter(field) else { return nil }
            parameters.append(parameter)
        }
        guard let salt = PHCBase64.decode(fields[fields.count - 2]), let hash = PHCBase64.decode(fields[fields.count - 1]),
            !salt.isEmpty, !hash.isEmpty
        else { return nil }
        self.parameters = parameters
        self.salt = salt
        self.hash = hash
    }

    /// The names of the parameters, in order.
    var parameterNames: [String] { self.parameters.map(\.name) }

    var text: String {
        let version = self.version.map { "$v=\($0)" } ?? ""
        let parameters = self.parameters.map { "\($0.name)=\($0.value)" }.joined(separator: ",")
        return "$\(self.algorithm)\(version)$\(parameters)$\(PHCBase64.encode(self.salt))$\(PHCBase64.encode(self.hash))"
    }

    /// `name=value` with a lower-case name and a canonical decimal value below 2^32.
    private static func parameter(_ field: Substring) -> Parameter? {
        let parts = field.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[0].utf8.allSatisfy({ $0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z") }),
            let value = Self.decimal(parts[1])
        else { return nil }
        return Parameter(name: String(parts[0]), value: value)
    }

    private static func decimal(_ text: Substring) -> Int? {
        let digits = text.utf8
        guard (1...10).contains(digits.count), digits.allSatisfy(Self.isDigit), digits.count == 1 || digits.first != UInt8(ascii: "0"),
            let value = Int(text), value <= UInt32.max
        else { return nil }
        return value
    }

    private static func isDigit(_ character: UInt8) -> Bool { character >= UInt8(ascii: "0") && character <= UInt8(ascii: "9") }
}
