import Foundation
import LatchkeyClient

/// The `SecItem` calls in memory, following iOS's rules for access groups: an item added without a group goes to the
/// default group (the first entitled one), a location without a group matches the item in any entitled group (an update
/// or delete: in all of them). A switch makes every call fail with a status, and a hook plays another process writing
/// between a read and a write.
final class InMemoryKeychain: KeychainItemAccess, @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [KeychainLocation: KeychainItem] = [:]
    private var log: [String] = []
    private var deletions: [KeychainLocation] = []
    private var failing: KeychainStatus?
    private var groups: [String]
    private var interference: (remaining: Int, body: @Sendable () -> Void)?
    private var interfering = false

    init(entitledAccessGroups: [String] = ["TEAM.app"]) { self.groups = entitledAccessGroups }

    /// The status every call answers (`.interactionNotAllowed`: the device is locked); `nil` to work.
    var failure: KeychainStatus? {
        get { self.lock.withLock { self.failing } }
        set { self.lock.withLock { self.failing = newValue } }
    }
    /// The stored items, by their location with the group they are in.
    var items: [KeychainLocation: KeychainItem] { self.lock.withLock { self.storage } }
    /// The calls made, in order.
    var calls: [String] { self.lock.withLock { self.log } }
    /// The locations deletes named.
    var deletedLocations: [KeychainLocation] { self.lock.withLock { self.deletions } }

    /// Runs `body` before each of the next `times` adds and updates, as another process writing in between.
    func interfere(times: Int = 1, _ body: @escaping @Sendable () -> Void) {
        self.lock.withLock { self.interference = (times, body) }
    }

    func add(_ item: KeychainItem) -> KeychainStatus {
        self.runInterference()
        return self.lock.withLock {
            self.log.append("add")
            if let failing { return failing }
            var stored = item
            stored.location.accessGroup = item.location.accessGroup ?? self.groups[0]
            guard let group = stored.location.accessGroup, self.groups.contains(group) else { return .missingEntitlement }
            if self.storage[stored.location] != nil { return .duplicateItem }
            self.storage[stored.location] = stored
            return .success
        }
    }

    func copy(_ location: KeychainLocation) -> (status: KeychainStatus, item: StoredKeychainItem?) {
        self.lock.withLock {
            self.log.append("copy")
            if let failing { return (failing, nil) }
            let found = self.matching(location, version: nil)
            guard case .success(let keys) = found, let item = keys.first.flatMap({ self.storage[$0] }) else { return (Self.status(found), nil) }
            return (.success, StoredKeychainItem(data: item.data, version: item.version, accessGroup: item.location.accessGroup))
        }
    }

    func update(_ location: KeychainLocation, ifVersion expected: Data?, data: Data, version: Data) -> KeychainStatus {
        self.runInterference()
        return self.lock.withLock {
            self.log.append("update")
            if let failing { return failing }
            let found = self.matching(location, version: expected)
            guard case .success(let keys) = found else { return Self.status(found) }
            for key in keys {
                self.storage[key]?.data = data
                self.storage[key]?.version = version
            }
            return .success
        }
    }

    func delete(_ location: KeychainLocation) -> KeychainStatus {
        self.lock.withLock {
            self.log.append("delete")
            self.deletions.append(location)
            if let failing { return failing }
            let found = self.matching(location, version: nil)
            guard case .success(let keys) = found else { return Self.status(found) }
            for key in keys { self.storage[key] = nil }
            return .success
        }
    }

    /// The stored locations `location` names (its group, or every entitled group), with `version` when given.
    private func matching(_ location: KeychainLocation, version: Data?) -> Result<[KeychainLocation], Refusal> {
        if let group = location.accessGroup, !self.groups.contains(group) { return .failure(.notEntitled) }
        let candidates =
            location.accessGroup.map { _ in [location] }
            ?? self.groups.map { group in
                KeychainLocation(service: location.service, account: location.account, accessGroup: group)
            }
        let keys = candidates.filter { key in
            guard let item = self.storage[key] else { return false }
            return version == nil || item.version == version
        }
        return keys.isEmpty ? .failure(.notFound) : .success(keys)
    }

    private enum Refusal: Error { case notFound, notEntitled }

    private static func status(_ found: Result<[KeychainLocation], Refusal>) -> KeychainStatus {
        switch found {
        case .success: .success
        case .failure(.notFound): .itemNotFound
        case .failure(.notEntitled): .missingEntitlement
        }
    }

    /// Runs the other process's write, unless this call is that write.
    private func runInterference() {
        let body = self.lock.withLock { () -> (@Sendable () -> Void)? in
            guard !self.interfering, let interference = self.interference else { return nil }
            self.interference = interference.remaining > 1 ? (interference.remaining - 1, interference.body) : nil
            self.interfering = true
            return interference.body
        }
        guard let body else { return }
        body()
        self.lock.withLock { self.interfering = false }
    }
}
