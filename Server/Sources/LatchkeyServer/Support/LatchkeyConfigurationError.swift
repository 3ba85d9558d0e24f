/// A setting the server refuses to start with; `description` names the setting and says what is wrong with it (never
/// its value when that is a secret). Thrown as ``LatchkeyServices/ConfigurationError`` by whatever reads settings;
/// `latchkey` exits with 78 (`EX_CONFIG`) on it.
public struct LatchkeyConfigurationError: Error, CustomStringConvertible {
    /// Each problem on a line of its own: the key, where its value came from, and what is allowed.
    public let problems: [String]

    public var description: String { self.problems.joined(separator: "\n") }

    init(description: String) { self.problems = [description] }

    init(problems: [String]) { self.problems = problems }
}
