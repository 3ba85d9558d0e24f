import Foundation
import LatchkeyAPI

extension ErrorCode {
    /// The SDK's own: the person closed the passkey sheet (AuthenticationServices' `ASAuthorizationError.canceled`).
    /// Nothing happened; usually nothing to show.
    public static let passkeyCancelled = ErrorCode(rawValue: "passkey_cancelled")
    /// The SDK's own: the device offered no passkey for the server's relying party (`ASAuthorizationError.notInteractive`,
    /// or `canceled` when only immediately available credentials were asked for). Offer the other ways to sign in.
    public static let noPasskeyCredentials = ErrorCode(rawValue: "no_passkey_credentials")
    /// The SDK's own: the system refused the request because the app is not associated with the relying party's domain
    /// (Associated Domains' `webcredentials:` entry, or the server's `apple-app-site-association` file). A setup
    /// problem; the error details' `message` keeps the system's words, which name the app and the domain.
    public static let passkeyNotAssociated = ErrorCode(rawValue: "passkey_not_associated")
}

/// What a failed AuthenticationServices passkey request means for the app, decided from the parts of its error that
/// exist on every platform (so that Linux tests check the decision): the `ASAuthorizationError.Code` raw value and the
/// error's texts.
enum PasskeyAuthorizationFailure {
    /// `ASAuthorizationError.Code` raw values: those of the Objective-C enum, which do not change. (`1006` is newer than
    /// some SDKs the package builds with, so the numbers are used rather than the cases.)
    static let canceled = 1001
    static let failed = 1004
    static let notInteractive = 1005
    static let matchedExcludedCredential = 1006

    /// The error to throw for an `ASAuthorizationError` with `code` and `texts` (its description, its failure reason,
    /// its underlying error's description); `nil` for the failures an app cannot act on, thrown as the system gave them.
    ///
    /// - `notInteractive`: the request found no credential it could use without more interaction.
    /// - `canceled`: the person closed the sheet, except with `onlyImmediatelyAvailable`
    ///   (`preferImmediatelyAvailableCredentials`), where AuthenticationServices also ends a request that found no
    ///   passkey on the device this way, silently, and the two cannot be told apart: no credentials, so the app offers
    ///   the other ways in, which is right for both (Apple's own sample treats it so).
    /// - `matchedExcludedCredential`: the authenticator already holds one of the user's passkeys: `passkey_exists`.
    /// - `failed` whose text says the app "is not associated with" the domain, or cannot verify its "webcredentials
    ///   association": Apple has no code for a missing Associated Domains entry or `apple-app-site-association` file, so
    ///   this reads the system's English message. A heuristic: should a future system word it otherwise, the failure is
    ///   thrown as the system's error instead.
    static func latchkeyError(code: Int, texts: [String], onlyImmediatelyAvailable: Bool) -> LatchkeyError? {
        switch code {
        case Self.notInteractive: .rejected(.noPasskeyCredentials)
        case Self.canceled: .rejected(onlyImmediatelyAvailable ? .noPasskeyCredentials : .passkeyCancelled)
        case Self.matchedExcludedCredential: .rejected(.passkeyExists)
        case Self.failed:
            texts.first(where: Self.saysNotAssociated).map { .rejected(.passkeyNotAssociated, message: $0) }
        default: nil
        }
    }

    private static func saysNotAssociated(_ text: String) -> Bool {
        let text = text.lowercased()
        return text.contains("not associated with") || text.contains("webcredentials association")
    }
}
