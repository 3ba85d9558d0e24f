// A stand-in for the part of AuthenticationServices that the SDK's passkey code uses (`registerPasskey`,
// `signInWithPasskey`), so that Apple-only code compiles and runs on Linux (scripts/check-keychain). Never part of the SDK.
//
// The declarations have the shapes Swift gives the iOS SDK's Objective-C ones: `NSObject` subclasses, the controller's
// `weak` delegate and presentation-context provider, the credentials' implicitly unwrapped `Data!`, `ASAuthorizationError`
// with its `Code` (Apple's raw values) and `userInfo`, `ASPresentationAnchor` a main-actor window. The delegate protocols'
// methods are required here (optional in Objective-C; the SDK implements both). The controller is a scripted
// authenticator: `StandInAuthenticator.answer` decides what each request gets (a credential, an error, or a sheet left
// open until the controller is cancelled), and `StandInAuthenticator.performed` records each request, its options and
// the window it was presented over. Answers arrive later, on the main actor, as the system's do; a delegate released
// before then is a crash, as it is a lost answer on a device.
import Foundation

/// `UIWindow` / `NSWindow`: main-actor isolated.
@MainActor
public final class StandInWindow {
    public init() {}
}

/// `ASPresentationAnchor`.
public typealias ASPresentationAnchor = StandInWindow

/// `ASAuthorizationPublicKeyCredentialUserVerificationPreference`.
public struct ASAuthorizationPublicKeyCredentialUserVerificationPreference: RawRepresentable, Hashable, Sendable {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let required = Self(rawValue: "required")
    public static let preferred = Self(rawValue: "preferred")
    public static let discouraged = Self(rawValue: "discouraged")
}

/// `ASAuthorizationPublicKeyCredentialAttestationKind`.
public struct ASAuthorizationPublicKeyCredentialAttestationKind: RawRepresentable, Hashable, Sendable {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let none = Self(rawValue: "none")
    public static let direct = Self(rawValue: "direct")
}

public protocol ASAuthorizationProvider: NSObjectProtocol {}
public protocol ASAuthorizationCredential: NSObjectProtocol {}

/// `ASAuthorizationRequest`.
open class ASAuthorizationRequest: NSObject {
    open var provider: any ASAuthorizationProvider
    init(provider: any ASAuthorizationProvider) { self.provider = provider }
}

/// `ASAuthorizationPlatformPublicKeyCredentialDescriptor`.
open class ASAuthorizationPlatformPublicKeyCredentialDescriptor: NSObject {
    open var credentialID: Data
    public init(credentialID: Data) { self.credentialID = credentialID }
}

/// `ASAuthorizationPlatformPublicKeyCredentialProvider`.
open class ASAuthorizationPlatformPublicKeyCredentialProvider: NSObject, ASAuthorizationProvider {
    open var relyingPartyIdentifier: String
    public init(relyingPartyIdentifier: String) { self.relyingPartyIdentifier = relyingPartyIdentifier }

    open func createCredentialRegistrationRequest(
        challenge: Data, name: String, userID: Data
    ) -> ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest {
        ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest(provider: self, challenge: challenge, name: name, userID: userID)
    }

    open func createCredentialAssertionRequest(challenge: Data) -> ASAuthorizationPlatformPublicKeyCredentialAssertionRequest {
        ASAuthorizationPlatformPublicKeyCredentialAssertionRequest(provider: self, challenge: challenge)
    }
}

/// `ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest`.
open class ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest: ASAuthorizationRequest {
    open var relyingPartyIdentifier: String
    open var challenge: Data
    open var name: String
    open var displayName: String?
    open var userID: Data
    open var userVerificationPreference = ASAuthorizationPublicKeyCredentialUserVerificationPreference.preferred
    open var attestationPreference = ASAuthorizationPublicKeyCredentialAttestationKind.none
    /// iOS 17.4, macOS 14.4.
    open var excludedCredentials: [ASAuthorizationPlatformPublicKeyCredentialDescriptor] = []

    init(provider: ASAuthorizationPlatformPublicKeyCredentialProvider, challenge: Data, name: String, userID: Data) {
        self.relyingPartyIdentifier = provider.relyingPartyIdentifier
        self.challenge = challenge
        self.name = name
        self.userID = userID
        super.init(provider: provider)
    }
}

/// `ASAuthorizationPlatformPublicKeyCredentialAssertionRequest`.
open class ASAuthorizationPlatformPublicKeyCredentialAssertionRequest: ASAuthorizationRequest {
    open var relyingPartyIdentifier: String
    open var challenge: Data
    open var userVerificationPreference = ASAuthorizationPublicKeyCredentialUserVerificationPreference.preferred
    open var allowedCredentials: [ASAuthorizationPlatformPublicKeyCredentialDescriptor] = []

    init(provider: ASAuthorizationPlatformPublicKeyCredentialProvider, challenge: Data) {
        self.relyingPartyIdentifier = provider.relyingPartyIdentifier
        self.challenge = challenge
        super.init(provider: provider)
    }
}

/// `ASAuthorizationPlatformPublicKeyCredentialRegistration`.
open class ASAuthorizationPlatformPublicKeyCredentialRegistration: NSObject, ASAuthorizationCredential {
    open var rawClientDataJSON: Data
    open var credentialID: Data
    open var rawAttestationObject: Data?

    public init(rawClientDataJSON: Data, credentialID: Data, rawAttestationObject: Data?) {
        self.rawClientDataJSON = rawClientDataJSON
        self.credentialID = credentialID
        self.rawAttestationObject = rawAttestationObject
    }
}

/// `ASAuthorizationPlatformPublicKeyCredentialAssertion`.
open class ASAuthorizationPlatformPublicKeyCredentialAssertion: NSObject, ASAuthorizationCredential {
    open var rawClientDataJSON: Data
    open var credentialID: Data
    open var rawAuthenticatorData: Data!
    open var userID: Data!
    open var signature: Data!

    public init(rawClientDataJSON: Data, credentialID: Data, rawAuthenticatorData: Data?, userID: Data?, signature: Data?) {
        self.rawClientDataJSON = rawClientDataJSON
        self.credentialID = credentialID
        self.rawAuthenticatorData = rawAuthenticatorData
        self.userID = userID
        self.signature = signature
    }
}

/// `ASAuthorization`.
open class ASAuthorization: NSObject {
    open var provider: any ASAuthorizationProvider
    open var credential: any ASAuthorizationCredential

    init(provider: any ASAuthorizationProvider, credential: any ASAuthorizationCredential) {
        self.provider = provider
        self.credential = credential
    }
}

public let ASAuthorizationErrorDomain = "com.apple.AuthenticationServices.AuthorizationError"

/// `ASAuthorizationError`, the bridged error struct: `code`, `userInfo`, and the codes as static properties.
public struct ASAuthorizationError: Error {
    public enum Code: Int, Sendable {
        case unknown = 1000
        case canceled = 1001
        case invalidResponse = 1002
        case notHandled = 1003
        case failed = 1004
        case notInteractive = 1005
        case matchedExcludedCredential = 1006
    }

    public let code: Code
    public let userInfo: [String: Any]

    public init(_ code: Code, userInfo: [String: Any] = [:]) {
        self.code = code
        self.userInfo = userInfo
    }

    public static var errorDomain: String { ASAuthorizationErrorDomain }
    public static var canceled: Code { .canceled }
    public static var failed: Code { .failed }
    public static var notInteractive: Code { .notInteractive }

    /// As an `NSError` describes itself: its `NSLocalizedDescriptionKey`, else the domain and code.
    public var localizedDescription: String {
        self.userInfo[NSLocalizedDescriptionKey] as? String
            ?? "The operation couldn’t be completed. (\(ASAuthorizationErrorDomain) error \(self.code.rawValue).)"
    }
}

public protocol ASAuthorizationControllerDelegate: NSObjectProtocol {
    func authorizationController(controller: ASAuthorizationController, didCompleteWithAuthorization authorization: ASAuthorization)
    func authorizationController(controller: ASAuthorizationController, didCompleteWithError error: any Error)
}

public protocol ASAuthorizationControllerPresentationContextProviding: NSObjectProtocol {
    func presentationAnchor(for controller: ASAuthorizationController) -> ASPresentationAnchor
}

/// `ASAuthorizationController`, answering from `StandInAuthenticator`.
open class ASAuthorizationController: NSObject {
    /// `ASAuthorizationController.RequestOptions`.
    public struct RequestOptions: OptionSet, Sendable {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }
        public static let preferImmediatelyAvailableCredentials = RequestOptions(rawValue: 1)
    }

    open var authorizationRequests: [ASAuthorizationRequest]
    open weak var delegate: (any ASAuthorizationControllerDelegate)?
    open weak var presentationContextProvider: (any ASAuthorizationControllerPresentationContextProviding)?
    private var sheetOpen = false
    private var cancelled = false

    public init(authorizationRequests: [ASAuthorizationRequest]) { self.authorizationRequests = authorizationRequests }

    open func performRequests() { self.performRequests(options: []) }

    open func performRequests(options: RequestOptions) {
        let request = self.authorizationRequests[0]
        let answer = StandInAuthenticator.answer(request)
        Task { @MainActor in
            let window = self.presentationContextProvider?.presentationAnchor(for: self)
            StandInAuthenticator.record(.init(request: request, options: options, presentedOver: window))
            if self.cancelled { return self.complete(.failure(ASAuthorizationError(.canceled))) }
            switch answer {
            case .credential(let credential): self.complete(.success(ASAuthorization(provider: request.provider, credential: credential)))
            case .failure(let error): self.complete(.failure(error))
            case .openUntilCancelled: self.sheetOpen = true
            }
        }
    }

    /// Ends the request (at once when its sheet is open, else when it would be answered): the delegate hears `canceled`.
    open func cancel() {
        StandInAuthenticator.noteCancel()
        self.cancelled = true
        guard self.sheetOpen else { return }
        self.sheetOpen = false
        self.complete(.failure(ASAuthorizationError(.canceled)))
    }

    private func complete(_ result: Result<ASAuthorization, any Error>) {
        guard let delegate = self.delegate else {
            preconditionFailure("ASAuthorizationController answered after its delegate was released: it holds the delegate weakly")
        }
        switch result {
        case .success(let authorization): delegate.authorizationController(controller: self, didCompleteWithAuthorization: authorization)
        case .failure(let error): delegate.authorizationController(controller: self, didCompleteWithError: error)
        }
    }
}

/// The stand-in's authenticator: what requests get, and what they were.
public enum StandInAuthenticator {
    /// What one request gets.
    public enum Answer {
        case credential(any ASAuthorizationCredential)
        case failure(any Error)
        /// The sheet stays open until the controller is cancelled.
        case openUntilCancelled
    }

    /// One request the controller performed.
    public struct Performed {
        public var request: ASAuthorizationRequest
        public var options: ASAuthorizationController.RequestOptions
        /// The window the presentation-context provider named; `nil` without a provider.
        public var presentedOver: ASPresentationAnchor?
    }

    private static let lock = NSLock()
    nonisolated(unsafe) private static var script: (ASAuthorizationRequest) -> Answer = { _ in .failure(ASAuthorizationError(.notHandled)) }
    nonisolated(unsafe) private static var records: [Performed] = []
    nonisolated(unsafe) private static var cancels = 0

    /// Answers every request from now on with `answer`, and forgets what was performed.
    public static func script(_ answer: @escaping (ASAuthorizationRequest) -> Answer) {
        self.lock.withLock {
            self.script = answer
            self.records = []
            self.cancels = 0
        }
    }

    /// The requests performed since the last `script(_:)`.
    public static var performed: [Performed] { self.lock.withLock { self.records } }
    /// How many times a controller was cancelled since the last `script(_:)`.
    public static var cancelCount: Int { self.lock.withLock { self.cancels } }

    static func answer(_ request: ASAuthorizationRequest) -> Answer { self.lock.withLock { self.script }(request) }
    static func record(_ performed: Performed) { self.lock.withLock { self.records.append(performed) } }
    static func noteCancel() { self.lock.withLock { self.cancels += 1 } }
}
