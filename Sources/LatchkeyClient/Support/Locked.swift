import Foundation

/// A value behind a lock, for the few reference types that must be `Sendable` without an actor
/// (`Mutex` needs iOS 18, the SDK supports iOS 16).
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        self.lock.lock()
        defer { self.lock.unlock() }
        return try body(&self.value)
    }
}
