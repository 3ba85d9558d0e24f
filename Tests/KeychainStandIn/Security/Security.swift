// A stand-in for the part of Apple's Security framework that `SystemKeychain` uses, so that Apple-only code
// compiles and runs on Linux (scripts/check-keychain). Never part of the SDK.
//
// The declarations have the shapes Swift gives Apple's C API (SecItem.h, SecBase.h): CF types as
// `CFDictionary`/`CFString`/`CFTypeRef`, `OSStatus` results, `kSec…` constants as `CFString` lets and
// `errSec…` codes as `OSStatus` vars, with Apple's numeric values. Behind them is an in-memory keychain of
// generic-password items that checks queries the way the Keychain does and follows iOS's rules for access groups: an
// item added without a group goes to the app's default group (the first of its entitlements), a query without a group
// matches the item in any group the app is entitled to (an update or delete: in all of them), and a group the app is
// not entitled to is refused. It records each item's accessibility, `kSecAttrGeneric` and whether it went to the
// data-protection keychain, and can play a macOS app without the entitlement for that keychain.
import Foundation

public typealias OSStatus = Int32
public typealias CFTypeRef = AnyObject
public typealias CFDictionary = NSDictionary
public typealias CFString = NSString

public let kSecClass: CFString = "class"
public let kSecClassGenericPassword: CFString = "genp"
public let kSecAttrService: CFString = "svce"
public let kSecAttrAccount: CFString = "acct"
public let kSecAttrAccessible: CFString = "pdmn"
public let kSecAttrAccessGroup: CFString = "agrp"
public let kSecAttrGeneric: CFString = "gena"
public let kSecUseDataProtectionKeychain: CFString = "nleg"
public let kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly: CFString = "cku"
public let kSecAttrAccessibleWhenUnlocked: CFString = "ak"
public let kSecValueData: CFString = "v_Data"
public let kSecReturnData: CFString = "r_Data"
public let kSecReturnAttributes: CFString = "r_Attributes"
public let kSecMatchLimit: CFString = "m_Limit"
public let kSecMatchLimitOne: CFString = "m_LimitOne"

public var errSecSuccess: OSStatus { 0 }
public var errSecParam: OSStatus { -50 }
public var errSecNotAvailable: OSStatus { -25291 }
public var errSecDuplicateItem: OSStatus { -25299 }
public var errSecItemNotFound: OSStatus { -25300 }
public var errSecInteractionNotAllowed: OSStatus { -25308 }
public var errSecMissingEntitlement: OSStatus { -34018 }

/// `SecItemAdd`: adds a generic-password item; `errSecDuplicateItem` when (service, account) exists in its group.
public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    StandInKeychain.shared.add(attributes, result)
}

/// `SecItemCopyMatching`: one item (`kSecMatchLimitOne`), its data (`kSecReturnData`) or, with `kSecReturnAttributes`
/// too, a dictionary of its data and attributes.
public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    StandInKeychain.shared.copyMatching(query, result)
}

/// `SecItemUpdate`: replaces the data and `kSecAttrGeneric` of every matching item.
public func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus {
    StandInKeychain.shared.update(query, attributesToUpdate)
}

/// `SecItemDelete`: removes every matching item.
public func SecItemDelete(_ query: CFDictionary) -> OSStatus {
    StandInKeychain.shared.delete(query)
}

/// The in-memory keychain behind the stand-in functions, and the switches tests turn.
public final class StandInKeychain: @unchecked Sendable {
    /// What one stored item holds.
    public struct Item: Equatable, Sendable {
        public var data: Data
        public var generic: Data?
        public var accessibility: String?
        public var accessGroup: String
        public var inDataProtectionKeychain: Bool
    }

    public static let shared = StandInKeychain()
    static let defaultGroups = ["TEAMID.com.example.app"]

    private let lock = NSLock()
    private var items: [String: Item] = [:]
    private var lockedState = false
    private var unavailableState = false
    private var dataProtectionEntitled = true
    private var refusedDataProtection = 0
    private var groups = StandInKeychain.defaultGroups
    private var interference: (@Sendable () -> Void)?

    /// Answer every call with `errSecInteractionNotAllowed`, as before the first unlock after boot.
    public var isLocked: Bool {
        get { self.lock.withLock { self.lockedState } }
        set { self.lock.withLock { self.lockedState = newValue } }
    }

    /// Answer every call with `errSecNotAvailable`.
    public var isUnavailable: Bool {
        get { self.lock.withLock { self.unavailableState } }
        set { self.lock.withLock { self.unavailableState = newValue } }
    }

    /// `false`: a macOS app without an entitlement for the data-protection keychain; every call that asks for it
    /// (`kSecUseDataProtectionKeychain`) is answered `errSecMissingEntitlement`, the others go to the file-based keychain.
    public var hasDataProtectionEntitlement: Bool {
        get { self.lock.withLock { self.dataProtectionEntitled } }
        set { self.lock.withLock { self.dataProtectionEntitled = newValue } }
    }

    /// How many calls asked for the data-protection keychain without the entitlement.
    public var dataProtectionRefusals: Int { self.lock.withLock { self.refusedDataProtection } }

    /// The access groups of the app's entitlements; the first is where items without a group go.
    public var entitledAccessGroups: [String] {
        get { self.lock.withLock { self.groups } }
        set { self.lock.withLock { self.groups = newValue } }
    }

    /// Runs `body` once, just before the next `SecItemAdd` or `SecItemUpdate` looks for its item: another process
    /// writing between a read and a write.
    public func beforeNextWrite(_ body: @escaping @Sendable () -> Void) {
        self.lock.withLock { self.interference = body }
    }

    /// The item stored for (service, account) in `group`, or in any group.
    public func item(service: String, account: String, group: String? = nil) -> Item? {
        self.lock.withLock {
            if let group { return self.items[group + "\u{0}" + Self.key(service, account)] }
            return self.items.first { $0.key.hasSuffix("\u{0}" + Self.key(service, account)) }?.value
        }
    }

    /// How many items are stored for (service, account), across groups.
    public func count(service: String, account: String) -> Int {
        self.lock.withLock { self.items.keys.filter { $0.hasSuffix("\u{0}" + Self.key(service, account)) }.count }
    }

    /// Empties the keychain, unlocks it and restores the entitlements.
    public func reset() {
        self.lock.withLock {
            self.items = [:]
            self.lockedState = false
            self.unavailableState = false
            self.dataProtectionEntitled = true
            self.refusedDataProtection = 0
            self.groups = Self.defaultGroups
            self.interference = nil
        }
    }

    func add(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
        self.interfere()
        return self.lock.withLock {
            if let refused = self.refusal(attributes) { return refused }
            guard let item = Self.itemKey(attributes), let data = attributes[kSecValueData as String] as? Data,
                attributes[kSecReturnData as String] == nil, attributes[kSecReturnAttributes as String] == nil,
                attributes[kSecMatchLimit as String] == nil
            else { return errSecParam }
            let group = Self.string(attributes[kSecAttrAccessGroup as String]) ?? self.groups[0]
            guard self.groups.contains(group) else { return errSecMissingEntitlement }
            let key = group + "\u{0}" + item
            guard self.items[key] == nil else { return errSecDuplicateItem }
            self.items[key] = Item(
                data: data, generic: attributes[kSecAttrGeneric as String] as? Data,
                accessibility: Self.string(attributes[kSecAttrAccessible as String]), accessGroup: group,
                inDataProtectionKeychain: (attributes[kSecUseDataProtectionKeychain as String] as? Bool) == true)
            result?.pointee = nil
            return errSecSuccess
        }
    }

    func copyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
        self.lock.withLock {
            if let refused = self.refusal(query) { return refused }
            guard query[kSecValueData as String] == nil, let found = self.matching(query) else { return errSecParam }
            guard case .success(let keys) = found, let item = keys.first.flatMap({ self.items[$0] }) else { return Self.status(found) }
            let wantsData = (query[kSecReturnData as String] as? Bool) == true
            let wantsAttributes = (query[kSecReturnAttributes as String] as? Bool) == true
            let limitOne = Self.string(query[kSecMatchLimit as String]) == kSecMatchLimitOne as String
            guard wantsData, limitOne else { return errSecParam }
            guard wantsAttributes else {
                result?.pointee = NSData(data: item.data)
                return errSecSuccess
            }
            var attributes: [String: Any] = [
                kSecValueData as String: item.data, kSecAttrAccessGroup as String: item.accessGroup,
                kSecClass as String: kSecClassGenericPassword as String,
            ]
            if let generic = item.generic { attributes[kSecAttrGeneric as String] = generic }
            if let accessibility = item.accessibility { attributes[kSecAttrAccessible as String] = accessibility }
            result?.pointee = attributes as NSDictionary
            return errSecSuccess
        }
    }

    func update(_ query: CFDictionary, _ changes: CFDictionary) -> OSStatus {
        self.interfere()
        return self.lock.withLock {
            if let refused = self.refusal(query) { return refused }
            guard query[kSecValueData as String] == nil, query[kSecReturnData as String] == nil,
                let data = changes[kSecValueData as String] as? Data, changes[kSecClass as String] == nil, let found = self.matching(query)
            else { return errSecParam }
            guard case .success(let keys) = found else { return Self.status(found) }
            for key in keys {
                self.items[key]?.data = data
                if let generic = changes[kSecAttrGeneric as String] as? Data { self.items[key]?.generic = generic }
            }
            return errSecSuccess
        }
    }

    func delete(_ query: CFDictionary) -> OSStatus {
        self.lock.withLock {
            if let refused = self.refusal(query) { return refused }
            guard query[kSecValueData as String] == nil, let found = self.matching(query) else { return errSecParam }
            guard case .success(let keys) = found else { return Self.status(found) }
            for key in keys { self.items[key] = nil }
            return errSecSuccess
        }
    }

    /// Runs what ``beforeNextWrite(_:)`` set, outside the lock (it calls the keychain).
    private func interfere() {
        let other = self.lock.withLock {
            defer { self.interference = nil }
            return self.interference
        }
        other?()
    }

    private func refusal(_ query: NSDictionary) -> OSStatus? {
        if self.unavailableState { return errSecNotAvailable }
        if self.lockedState { return errSecInteractionNotAllowed }
        if !self.dataProtectionEntitled, (query[kSecUseDataProtectionKeychain as String] as? Bool) == true {
            self.refusedDataProtection += 1
            return errSecMissingEntitlement
        }
        return nil
    }

    /// The keys of the items a query names: in its access group (which must be entitled), or in every entitled group
    /// (the default group first); with `kSecAttrGeneric`, only items with that value. `nil` for a malformed query.
    private func matching(_ query: NSDictionary) -> Result<[String], Lookup>? {
        guard let item = Self.itemKey(query) else { return nil }
        let candidates: [String]
        if let group = Self.string(query[kSecAttrAccessGroup as String]) {
            guard self.groups.contains(group) else { return .failure(.notEntitled) }
            candidates = [group + "\u{0}" + item]
        } else {
            candidates = self.groups.map { $0 + "\u{0}" + item }
        }
        let generic = query[kSecAttrGeneric as String]
        let keys = candidates.filter { key in
            guard let stored = self.items[key] else { return false }
            guard let generic else { return true }
            return stored.generic != nil && stored.generic == generic as? Data
        }
        return keys.isEmpty ? .failure(.notFound) : .success(keys)
    }

    private enum Lookup: Error { case notFound, notEntitled }

    private static func status(_ found: Result<[String], Lookup>) -> OSStatus {
        switch found {
        case .success: errSecSuccess
        case .failure(.notFound): errSecItemNotFound
        case .failure(.notEntitled): errSecMissingEntitlement
        }
    }

    private static func itemKey(_ dictionary: NSDictionary) -> String? {
        guard Self.string(dictionary[kSecClass as String]) == kSecClassGenericPassword as String,
            let service = Self.string(dictionary[kSecAttrService as String]),
            let account = Self.string(dictionary[kSecAttrAccount as String])
        else { return nil }
        return Self.key(service, account)
    }

    private static func key(_ service: String, _ account: String) -> String { service + "\u{0}" + account }

    private static func string(_ value: Any?) -> String? {
        switch value {
        case let string as String: string
        case let string as NSString: string as String
        default: nil
        }
    }
}
