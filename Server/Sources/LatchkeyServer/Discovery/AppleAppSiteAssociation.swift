import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The Apple App Site Association file, `GET /.well-known/apple-app-site-association`: what iOS's Associated Domains
/// read to trust this site's apps. One document of optional sections, each filled by the feature that needs it (passkeys
/// fill `webcredentials` from `passkeys.apple-app-ids`); a section not set is left out, so a later one (App Clips,
/// universal links) joins the same file.
struct AppleAppSiteAssociation: Codable, Sendable, Equatable {
    /// `webcredentials`: the apps (`TEAMID.bundle.id`) whose passkeys and passwords are this site's.
    struct WebCredentials: Codable, Sendable, Equatable {
        var apps: [String]
    }

    var webcredentials: WebCredentials?

    /// Whether no section is set: the file is not served.
    var isEmpty: Bool { self.webcredentials == nil }
}

/// Serves ``AppleAppSiteAssociation`` with `Content-Type: application/json` and no redirect, as Apple's CDN fetches it.
struct AppleAppSiteAssociationRoutes {
    let document: AppleAppSiteAssociation

    func add(to api: APIRoutes<LatchkeyRequestContext>) {
        api.add(Self.operation) { _, _ in
            // Passkeys are the only section yet: with none, the file says what would turn it on.
            guard !self.document.isEmpty else { throw ServiceError.passkeysDisabled }
            let body = try LatchkeyResponseEncoder.jsonEncoder().encode(self.document)
            return Response(
                status: .ok, headers: [.contentType: "application/json", .cacheControl: "public, max-age=3600"],
                body: .init(byteBuffer: ByteBuffer(bytes: body)))
        }
    }

    static let operation = APIOperation(
        .get, "/.well-known/apple-app-site-association", id: "getAppleAppSiteAssociation", tag: "Discovery",
        summary: "Apple App Site Association (Associated Domains)",
        description: """
            The file iOS and macOS fetch (through Apple's CDN) for an app whose Associated Domains entitlement names this host: \
            `{"webcredentials": {"apps": ["TEAMID.bundle.id", …]}}` from `passkeys.apple-app-ids`, so those apps may make and use \
            passkeys for `passkeys.rp-id`. `Content-Type: application/json`, never a redirect. While passkeys are off (and no other \
            section is configured) the answer is 404 `passkeys_disabled`.
            """,
        outcomes: [
            .init(200, "The association file.", body: AppleAppSiteAssociation.self, headers: ["Cache-Control"]),
            .notFound("`passkeys_disabled`: no section to serve (`passkeys.rp-id` is not set)."),
        ])
}
