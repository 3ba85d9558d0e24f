/// The version of Latchkey: the SDK's, and that of a server built from the same checkout — what
/// `GET /api/v1/health` answers as `version`, and what `latchkey --version` and `latchkey-device --version` print.
public enum LatchkeyVersion {
    /// `0.9.0`: see `CHANGELOG.md`.
    public static let current = "0.9.0"
}
