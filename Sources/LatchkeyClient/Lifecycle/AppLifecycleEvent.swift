/// What happened to the app, as the session needs to know (see ``LatchkeySession/handle(_:)``).
public enum AppLifecycleEvent: Sendable, Equatable {
    /// The app is coming to the foreground (`UIApplication.willEnterForegroundNotification`).
    case willEnterForeground
    /// The device was unlocked and the Keychain can be read again (`UIApplication.protectedDataDidBecomeAvailableNotification`).
    case protectedDataDidBecomeAvailable
}
