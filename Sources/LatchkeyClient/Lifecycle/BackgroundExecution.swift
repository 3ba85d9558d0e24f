/// Keeps the app running while the SDK finishes work the server has already started.
///
/// A refresh rotates the refresh token on the server at once; an app suspended before the answer arrives would keep the
/// old one. The SDK runs every refresh inside a task begun here: on iOS `LatchkeySession/followAppLifecycle()`
/// installs one over `UIApplication.beginBackgroundTask(withName:expirationHandler:)`, or set
/// ``LatchkeySession/Configuration/backgroundExecution``.
public protocol BackgroundExecution: Sendable {
    /// Asks the system to keep the app running while `name` finishes; the SDK calls the returned closure once it has.
    func beginTask(named name: String) async -> @Sendable () async -> Void
}
