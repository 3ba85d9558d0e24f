import Foundation

extension UUID {
    /// Parses a UUID string and returns its canonical lowercase form, or nil when it is not a UUID.
    ///
    /// Stored IDs are lowercase so that `ABC…` and `abc…` name the same device.
    static func canonical(_ text: String) -> String? {
        UUID(uuidString: text).map { $0.uuidString.lowercased() }
    }
}
