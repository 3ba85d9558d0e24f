// A stand-in for the part of Apple's Security framework that `SystemKeychain` uses, so that Apple-only code
// compiles and runs on Linux (scripts/check-keychain). Never part of the SDK.
//
// The declarations have the shapes Swift gives Apple's C API (SecItem.h, SecBase.h): CF types as
// `CFDictionary`/`CFString`/`CFTypeRef`, `OSStatus` results, `kSec…` constants as `CFString` lets and
// `errSec…` codes as `OSStatus` vars, with Apple's numeric values. Behind them is an in-memory keychain of
// generic-password items that checks queries the way the Keychain does, keeps items per access group (refusing groups
// the app is not entitled to) and records each item's accessibility and whether it went to the data-protection keychain.
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
public let kSecUseDataProtectionKeychain: CFString = "nleg"
public let kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly: CFString = "cku"
public let kSecAttrAccessibleWhenUnlocked: CFString = "ak"
public let kSecValueData: CFString = "v_Data"
public let kSecReturnData: CFString = "r_Data"
public let kSecMatchLimit: CFString = "m_Limit"
public let kSecMatchLimitOne: CFString = "m_LimitOne"

public var errSecSuccess: OSStatus { 0 }
public var errSecParam: OSStatus { -50 }
public var errSecNotAvailable: OSStatus { -25291 }
public var errSecDuplicateItem: OSStatus { -25299 }
public var errSecItemNotFound: OSStatus { -25300 }
public var errSecInteractionNotAllowed: OSStatus { -25308 }
public var errSecMissingEntitlement: OSStatus { -34018 }

/// `SecItemAdd`: adds a generic-password item; `errSecDuplicateItem` when (service, account) exists.
public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    StandInKeychain.shared.add(attributes, result)
}

/// `SecItemCopyMatching`: one item's data, with `kSecReturnData` and `kSecMatchLimitOne`.
public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    StandInKeychain.shared.copyMatching(query, result)
}

/// `SecItemUpdate`: replaces the attributes of the matching item.
public func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus {
    StandInKeychain.shared.update(query, attributesToUpdate)
}

/// `SecItemDelete`: removes the matching item.
public func SecItemDelete(_ query: CFDictionary) -> OSStatus {
    StandInKeychain.shared.delete(query)
}

/// The in-memory keychain behind the stand-in functions, and the switches tests turn.
public final class StandInKeychain: @unchecked Sendable {
    /// What one stored item holds.
    public struct Item: Equatable, Sendable {
        public var data: Data
        public var accessibility: String?
        public var accessGroup: String
        public var inDataProtectionKeychain: Bool
    }

    public static let shared = StandInKeychain()

    private let lock = NSLock()
    private var items: [String: Item] = [:]
    private var lockedState = false
    private var unavailableState = false
    private var groups = ["TEAMID.com.example.app"]

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

    /// The access groups of the app's entitlements; the first is where items without a group go.
    public var entitledAccessGroups: [String] {
        get { self.lock.withLock { self.groups } }
        set { self.lock.withLock { self.groups = newValue } }
    }

    /// The item stored for (service, account), in any group.
    public func item(service: String, account: String) -> Item? {
        self.lock.withLock { self.items.first { $0.key.hasSuffix("\u{0}" + Self.key(service, account)) }?.value }
    }

    /// Empties the keychain and unlocks it.
    public func reset() {
        self.lock.withLock {
            self.items = [:]
            self.lockedState = false
            self.unavailableState = false
            self.groups = ["TEAMID.com.example.app"]
        }
    }

    func add(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
        self.lock.withLock {
            if let refused = self.refusal { return refused }
            guard let item = Self.itemKey(attributes), let data = attributes[kSecValueData as String] as? Data,
                attributes[kSecReturnData as String] == nil, attributes[kSecMatchLimit as String] == nil
            else { return errSecParam }
            let group = Self.string(attributes[kSecAttrAccessGroup as String]) ?? self.groups[0]
            guard self.groups.contains(group) else { return errSecMissingEntitlement }
            let key = group + "\u{0}" + item
            guard self.items[key] == nil else { return errSecDuplicateItem }
            self.items[key] = Item(
                data: data, accessibility: Self.string(attributes[kSecAttrAccessible as String]), accessGroup: group,
                inDataProtectionKeychain: (attributes[kSecUseDataProtectionKeychain as String] as? Bool) == true)
            result?.pointee = nil
            return errSecSuccess
        }
    }

    func copyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
        self.lock.withLock {
            if let refused = self.refusal { return refused }
            guard query[kSecValueData as String] == nil, let found = self.matching(query) else { return errSecParam }
            guard case .success(let key) = found, let item = self.items[key] else { return Self.status(found) }
            let wantsData = (query[kSecReturnData as String] as? Bool) == true
            let limitOne = Self.string(query[kSecMatchLimit as String]) == kSecMatchLimitOne as String
            guard wantsData, limitOne else { return errSecParam }
            result?.pointee = NSData(data: item.data)
            return errSecSuccess
        }
    }

    func update(_ query: CFDictionary, _ changes: CFDictionary) -> OSStatus {
        self.lock.withLock {
            if let refused = self.refusal { return refused }
            guard query[kSecValueData as String] == nil, query[kSecReturnData as String] == nil,
                let data = changes[kSecValueData as String] as? Data, changes[kSecClass as String] == nil, let found = self.matching(query)
            else { return errSecParam }
            guard case .success(let key) = found else { return Self.status(found) }
            self.items[key]?.data = data
            return errSecSuccess
        }
    }

    func delete(_ query: CFDictionary) -> OSStatus {
        self.lock.withLock {
            if let refused = self.refusal { return refused }
            guard query[kSecValueData as String] == nil, let found = self.matching(query) else { return errSecParam }
            guard case .success(let key) = found else { return Self.status(found) }
            self.items[key] = nil
            return errSecSuccess
        }
    }

    private var refusal: OSStatus? {
        if self.unavailableState { return errSecNotAvailable }
        if self.lockedState { return errSecInteractionNotAllowed }
        return nil
    }

    /// The key of the item a query names: in its access group (which must be entitled), or in any entitled group.
    /// `nil` for a malformed query.
    private func matching(_ query: NSDictionary) -> Result<String, Lookup>? {
        guard let item = Self.itemKey(query) else { return nil }
        if let group = Self.string(query[kSecAttrAccessGroup as String]) {
            guard self.groups.contains(group) else { return .failure(.notEntitled) }
            return self.items[group + "\u{0}" + item] == nil ? .failure(.notFound) : .success(group + "\u{0}" + item)
        }
        for group in self.groups where self.items[group + "\u{0}" + item] != nil { return .success(group + "\u{0}" + item) }
        return .failure(.notFound)
    }

    private enum Lookup: Error { case notFound, notEntitled }

    private static func status(_ found: Result<String, Lookup>) -> OSStatus {
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
