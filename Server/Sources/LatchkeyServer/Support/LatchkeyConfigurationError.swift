/// A setting the server refuses to start with; `description` names the setting and says what is wrong with it (never
/// its value when that is a secret). Thrown as ``LatchkeyServices/ConfigurationError`` by whatever reads settings.
public struct LatchkeyConfigurationError: Error, CustomStringConvertible {
    public let description: String

    init(description: String) { self.description = description }
}
