import Foundation
import LatchkeyClient

/// An in-memory secure store whose reads and writes can be made to fail (a locked Keychain, a full disk), and which
/// counts its reads.
final class FlakySecureStore: SecureStore, @unchecked Sendable {
    private let lock = NSLock()
    private var stored: StoredCredentials?
    private var failingReads = false
    private var failingWrites = false
    private var reads = 0

    init(_ credentials: StoredCredentials? = nil) { self.stored = credentials }

    /// Every read fails as a locked Keychain does.
    var failsReads: Bool {
        get { self.lock.withLock { self.failingReads } }
        set { self.lock.withLock { self.failingReads = newValue } }
    }
    /// Every write fails.
    var failsWrites: Bool {
        get { self.lock.withLock { self.failingWrites } }
        set { self.lock.withLock { self.failingWrites = newValue } }
    }
    /// How many reads were attempted.
    var readCount: Int { self.lock.withLock { self.reads } }
    /// What is stored, read without counting or failing.
    var contents: StoredCredentials? { self.lock.withLock { self.stored } }

    func load() throws -> StoredCredentials? {
        try self.lock.withLock {
            self.reads += 1
            if self.failingReads { throw SecureStoreError.unavailable("the Keychain is locked until the device is unlocked") }
            return self.stored
        }
    }

    func save(_ credentials: StoredCredentials) throws {
        try self.lock.withLock {
            if self.failingWrites { throw SecureStoreError.failed("the disk is full") }
            self.stored = credentials
        }
    }

    func removeAll() throws {
        try self.lock.withLock {
            if self.failingWrites { throw SecureStoreError.failed("the disk is full") }
            self.stored = nil
        }
    }
}

/// Collects a session's events from the moment it is made.
final class EventRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: [LatchkeyEvent] = []
    private var task: Task<Void, Never>?

    init(_ session: LatchkeySession) async {
        let events = await session.events()
        self.task = Task { for await event in events { self.lock.withLock { self.recorded.append(event) } } }
    }

    deinit { self.task?.cancel() }

    /// The events so far.
    var events: [LatchkeyEvent] { self.lock.withLock { self.recorded } }

    /// Whether `event` arrives within five seconds.
    func saw(_ event: LatchkeyEvent) async -> Bool {
        for _ in 0..<500 {
            if self.events.contains(event) { return true }
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
        return false
    }
}
