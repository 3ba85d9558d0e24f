// A stand-in for the App Attest part of Apple's DeviceCheck framework that the SDK's `AppAttestProvider.deviceCheck`
// uses, so that Apple-only code compiles and runs on Linux (scripts/check-keychain). Never part of the SDK.
//
// The declarations have the shapes Swift gives the iOS SDK's Objective-C ones: `DCAppAttestService` an `NSObject`
// subclass with `shared`, `isSupported` and the completion-handler methods imported as `async throws`
// (`generateKey() -> String`, `attestKey(_:clientDataHash:) -> Data`, `generateAssertion(_:clientDataHash:) -> Data`);
// `DCError` a bridged error struct with its `Code` (Apple's raw values) and the static codes that `catch` patterns
// match. Behind them is an in-memory Secure Enclave as App Attest behaves: `generateKey` on an unsupported device is
// `featureUnsupported`; a key ID it never made, or one lost with a reinstall (`StandInAppAttest.loseKeys()`), is
// `invalidKey`; a client data hash that is not 32 bytes is `invalidInput`. `StandInAppAttest` records every call and
// can fail the next attestations and assertions with a code.
import Foundation

/// `DCErrorDomain`.
public let DCErrorDomain = "com.apple.devicecheck.error"

/// `DCError`.
public struct DCError: Error, Hashable, Sendable {
    /// `DCError.Code`, with Apple's raw values.
    public enum Code: Int, Hashable, Sendable {
        case unknownSystemFailure = 0
        case featureUnsupported = 1
        case invalidInput = 2
        case invalidKey = 3
        case serverUnavailable = 4
    }

    public let code: Code
    public init(_ code: Code) { self.code = code }

    public static var unknownSystemFailure: Code { .unknownSystemFailure }
    public static var featureUnsupported: Code { .featureUnsupported }
    public static var invalidInput: Code { .invalidInput }
    public static var invalidKey: Code { .invalidKey }
    public static var serverUnavailable: Code { .serverUnavailable }
}

extension DCError.Code {
    /// `catch DCError.invalidKey`, as bridged error codes allow.
    public static func ~= (code: Self, error: any Error) -> Bool { (error as? DCError)?.code == code }
}

/// `DCAppAttestService`.
open class DCAppAttestService: NSObject {
    private static let instance = DCAppAttestService()

    /// `DCAppAttestService.shared`.
    open class var shared: DCAppAttestService { DCAppAttestService.instance }

    /// Whether this device has App Attest (`StandInAppAttest.isSupported`).
    open var isSupported: Bool { StandInAppAttest.state.withLock { $0.isSupported } }

    open func generateKey() async throws -> String {
        try StandInAppAttest.state.withLock { state in
            state.calls.append(.generateKey)
            guard state.isSupported else { throw DCError(.featureUnsupported) }
            let keyID = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
            state.keys.insert(keyID)
            return keyID
        }
    }

    open func attestKey(_ keyId: String, clientDataHash: Data) async throws -> Data {
        try StandInAppAttest.state.withLock { state in
            state.calls.append(.attestKey(keyId, clientDataHash))
            try state.failIfScripted()
            try state.check(keyId, clientDataHash)
            return Data("attestation:\(keyId)".utf8)
        }
    }

    open func generateAssertion(_ keyId: String, clientDataHash: Data) async throws -> Data {
        try StandInAppAttest.state.withLock { state in
            state.calls.append(.generateAssertion(keyId, clientDataHash))
            try state.failIfScripted()
            try state.check(keyId, clientDataHash)
            return Data("assertion:\(keyId)".utf8)
        }
    }
}

/// The stand-in's switches and records, for the tests.
public enum StandInAppAttest {
    /// A call the SDK made.
    public enum Call: Equatable, Sendable {
        case generateKey
        case attestKey(String, Data)
        case generateAssertion(String, Data)
    }

    struct State {
        var isSupported = true
        var keys: Set<String> = []
        var calls: [Call] = []
        var failures: [DCError.Code] = []

        mutating func failIfScripted() throws {
            if !self.failures.isEmpty { throw DCError(self.failures.removeFirst()) }
        }

        func check(_ keyID: String, _ clientDataHash: Data) throws {
            guard self.keys.contains(keyID) else { throw DCError(.invalidKey) }
            guard clientDataHash.count == 32 else { throw DCError(.invalidInput) }
        }
    }

    static let state = StandInLock(State())

    /// A device with App Attest, no keys, no calls recorded.
    public static func reset() { self.state.withLock { $0 = State() } }
    /// Whether the device has App Attest (the simulator and most Macs do not).
    public static var isSupported: Bool {
        get { self.state.withLock { $0.isSupported } }
        set { self.state.withLock { $0.isSupported = newValue } }
    }
    /// Every call, in order.
    public static var calls: [Call] { self.state.withLock { $0.calls } }
    /// The key IDs the Secure Enclave holds.
    public static var keys: Set<String> { self.state.withLock { $0.keys } }
    /// The next attestations and assertions fail with these codes, in order.
    public static func failNext(_ codes: DCError.Code...) { self.state.withLock { $0.failures += codes } }
    /// The keys are gone, as after a reinstall (the Keychain that kept their IDs survives it).
    public static func loseKeys() { self.state.withLock { $0.keys = [] } }
}

/// A lock around a value.
final class StandInLock<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        self.lock.lock()
        defer { self.lock.unlock() }
        return try body(&self.value)
    }
}
