// swift-tools-version:6.1
import PackageDescription

// The server, its CLI, the terminal device app and every test that needs a server. The SDK is the package at the
// repository's root, which this one depends on by path (so it builds from a checkout of any name).
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]
let testSwiftSettings: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny")]

let package = Package(
    name: "latchkey-server",
    // swift-configuration needs macOS 15; Hummingbird 2 needs macOS 14.
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "LatchkeyServer", targets: ["LatchkeyServer"]),
        .executable(name: "latchkey", targets: ["latchkey"]),
        .executable(name: "latchkey-device", targets: ["latchkey-device"]),
    ],
    dependencies: [
        // The SDK and the wire types (LatchkeyAPI, LatchkeyClient).
        .package(name: "latchkey", path: ".."),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        // TOTP (RFC 6238) for second factors: its HummingbirdOTP product only.
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        .package(url: "https://github.com/swift-extras/swift-extras-base64.git", from: "1.2.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        // X.509 for the leaf certificate of WebAuthn "packed" attestation (and SwiftASN1 to read it from DER).
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/vapor/sql-kit.git", from: "3.36.0"),
        .package(url: "https://github.com/vapor/sqlite-kit.git", from: "4.5.2"),
        .package(url: "https://github.com/vapor/sqlite-nio.git", from: "1.13.2"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/vapor/postgres-kit.git", from: "2.17.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        // SwiftNIO's WebSocket upgrader serves GET /api/v1/events (hummingbird already depends on both packages).
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        // The WebSocket client of the event stream tests.
        .package(url: "https://github.com/hummingbird-project/swift-websocket.git", from: "1.6.2"),
        // TLS for the SMTP client (STARTTLS, implicit TLS); async-http-client already depends on it.
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
    ],
    targets: [
        // A terminal "app" built only on the SDK (and swift-argument-parser for its command line; SwiftNIO for its
        // WebSocket on Linux, whose FoundationNetworking opens no WebSockets with Debian's libcurl).
        .executableTarget(
            name: "latchkey-device",
            dependencies: [
                .product(name: "LatchkeyClient", package: "latchkey"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(platforms: [.linux])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(platforms: [.linux])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(platforms: [.linux])),
                .product(name: "NIOWebSocket", package: "swift-nio", condition: .when(platforms: [.linux])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(platforms: [.linux])),
            ],
            swiftSettings: swiftSettings
        ),
        // AWS Signature Version 4 (STS and S3 calls, presigned URLs): Foundation and swift-crypto only, nothing of the server.
        .target(
            name: "LatchkeySigV4",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings
        ),
        // Password hashing: Argon2id (RFC 9106) and BLAKE2b (RFC 7693) in Swift, scrypt from swift-crypto's
        // _CryptoExtras for hashes made elsewhere, and the PHC string format.
        .target(
            name: "LatchkeyPasswords",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            // Optimized in debug builds too: Argon2id and BLAKE2b are tight loops that run 20–50 times slower at -Onone, and
            // every test that hashes a password (the reference comparisons, sign-up, sign-in) waited on them.
            swiftSettings: swiftSettings + [.unsafeFlags(["-O"], .when(configuration: .debug))]
        ),
        // A small SMTP client on SwiftNIO (STARTTLS, implicit TLS, AUTH PLAIN/LOGIN) and a MIME message builder.
        .target(
            name: "LatchkeySMTP",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
        // QR codes (ISO/IEC 18004, byte mode) rendered as inline SVG, for the console's TOTP enrolment: no dependencies.
        .target(name: "LatchkeyQR", swiftSettings: swiftSettings),
        // A strict, bounded CBOR (RFC 8949) decoder and a small encoder, for WebAuthn and App Attest: no dependencies.
        .target(name: "LatchkeyCBOR", swiftSettings: swiftSettings),
        // WebAuthn Level 3 registration and assertion checks (§7.1, §7.2): COSE keys, "none" and "packed" attestation.
        .target(
            name: "LatchkeyWebAuthn",
            dependencies: [
                "LatchkeyCBOR",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: swiftSettings
        ),
        // App Attest (Apple's "Validating apps that connect to your server"): attestations chained to the pinned Apple
        // App Attestation Root CA, and assertions; no server types.
        .target(
            name: "LatchkeyAppAttest",
            dependencies: [
                "LatchkeyCBOR",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "LatchkeyServer",
            dependencies: [
                "LatchkeySigV4",
                "LatchkeyWebAuthn",
                "LatchkeyAppAttest",
                "LatchkeyPasswords",
                "LatchkeySMTP",
                "LatchkeyQR",
                .product(name: "LatchkeyAPI", package: "latchkey"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "HummingbirdOTP", package: "hummingbird-auth"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "ExtrasBase64", package: "swift-extras-base64"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "SQLiteKit", package: "sqlite-kit"),
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "PostgresKit", package: "postgres-kit"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "latchkey",
            dependencies: [
                "LatchkeyServer",
                .product(name: "LatchkeyAPI", package: "latchkey"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Configuration", package: "swift-configuration"),
            ],
            swiftSettings: swiftSettings
        ),
        // Test helpers shared by the test targets (running the built executables as real processes).
        .target(
            name: "LatchkeyTestSupport",
            path: "Tests/LatchkeyTestSupport",
            swiftSettings: testSwiftSettings
        ),
        // The S3 and STS peer (SeaweedFS, started by scripts/test) and SigV4-signed requests to it, for the server's
        // and the SDK's tests.
        .target(
            name: "LatchkeyS3Peer",
            dependencies: ["LatchkeyServer", "LatchkeySigV4"],
            path: "Tests/LatchkeyS3Peer",
            swiftSettings: swiftSettings
        ),
        // A software passkey authenticator (ES256, Ed25519, RS256; "none" and "packed" attestation) making real
        // registrations and assertions, for the WebAuthn, server and SDK tests: nothing of the server.
        .target(
            name: "LatchkeyPasskeyPeer",
            dependencies: [
                "LatchkeyCBOR",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            path: "Tests/LatchkeyPasskeyPeer",
            swiftSettings: swiftSettings
        ),
        // A stand-in for Apple's App Attest CA (root, intermediate, leaves with the nonce extension) and a device's key,
        // issuing attestation objects and assertions for the verifier's and the server's tests: nothing of the server.
        .target(
            name: "LatchkeyAppAttestPeer",
            dependencies: [
                "LatchkeyCBOR",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            path: "Tests/LatchkeyAppAttestPeer",
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "LatchkeyCBORTests", dependencies: ["LatchkeyCBOR"], swiftSettings: testSwiftSettings),
        .testTarget(
            name: "LatchkeyAppAttestTests",
            dependencies: [
                "LatchkeyAppAttest",
                "LatchkeyAppAttestPeer",
                "LatchkeyCBOR",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            resources: [.copy("Fixtures")],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "LatchkeyWebAuthnTests",
            dependencies: [
                "LatchkeyWebAuthn",
                "LatchkeyCBOR",
                "LatchkeyPasskeyPeer",
            ],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "LatchkeySigV4Tests",
            dependencies: ["LatchkeySigV4", "LatchkeyTestSupport", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LatchkeyPasswordsTests",
            dependencies: ["LatchkeyPasswords", "LatchkeyTestSupport"],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "LatchkeySMTPTests",
            dependencies: [
                "LatchkeySMTP",
                "LatchkeyTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(name: "LatchkeyQRTests", dependencies: ["LatchkeyQR"], swiftSettings: testSwiftSettings),
        .testTarget(
            name: "LatchkeyServerTests",
            dependencies: [
                "LatchkeySigV4",
                "LatchkeyS3Peer",
                // A software passkey authenticator for the passkey routes' tests.
                "LatchkeyPasskeyPeer",
                // Attestation objects and assertions from a stand-in App Attest CA; the verifier's base64 and hashes; its root as PEM.
                "LatchkeyAppAttestPeer",
                "LatchkeyAppAttest",
                .product(name: "X509", package: "swift-certificates"),
                // CBOR to take registrations apart and make the malformed ones the passkey suites send.
                "LatchkeyCBOR",
                "LatchkeyTestSupport",
                "LatchkeyServer",
                .product(name: "LatchkeyAPI", package: "latchkey"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "WSClient", package: "swift-websocket"),
                // HMACs for forged tokens, nonce hashes for the Apple peer, DPoP proofs.
                .product(name: "Crypto", package: "swift-crypto"),
                // Tokens signed with the server's own keys (a made-up kid).
                .product(name: "JWTKit", package: "jwt-kit"),
            ],
            swiftSettings: testSwiftSettings
        ),
        // The SDK against a live server in process (and the latchkey-device app as a real process).
        .testTarget(
            name: "LatchkeyClientEndToEndTests",
            dependencies: [
                "LatchkeyTestSupport",
                // A software passkey authenticator, in place of iCloud Keychain, for the SDK's passkey data calls.
                "LatchkeyPasskeyPeer",
                .product(name: "LatchkeyClient", package: "latchkey"),
                .product(name: "LatchkeyAPI", package: "latchkey"),
                "LatchkeyServer",
                "LatchkeySigV4",
                "LatchkeyS3Peer",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                // HMAC-SHA-1 for the tests' own TOTP (RFC 6238), independent of the server's.
                .product(name: "Crypto", package: "swift-crypto"),
                // A raw socket that never answers the event stream's pings.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: testSwiftSettings
        ),
    ]
)
