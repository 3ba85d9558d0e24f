// swift-tools-version:6.1
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

// The package declares the SDK's minimums (SwiftPM checks deployment targets per package, not per target).
// The server side needs macOS 15 / iOS 18 (swift-configuration; Hummingbird 2's APIs need macOS 14): every
// top-level declaration there carries `@available(LatchkeyServer 1.0, *)`, as swift-configuration and
// Hummingbird do with their own macros. In the test targets the suites stay unannotated (Swift Testing refuses
// @available on a suite) and their members carry it. scripts/check-platforms keeps it that way.
let serverAvailability = SwiftSetting.enableExperimentalFeature(
    "AvailabilityMacro=LatchkeyServer 1.0:macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0")
let serverSwiftSettings = swiftSettings + [serverAvailability]

let package = Package(
    name: "latchkey",
    // The SDK's minimums; see serverAvailability above for the server side.
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .library(name: "LatchkeyAPI", targets: ["LatchkeyAPI"]),
        .library(name: "LatchkeyServer", targets: ["LatchkeyServer"]),
        .library(name: "LatchkeyClient", targets: ["LatchkeyClient"]),
        .executable(name: "latchkey", targets: ["latchkey"]),
        .executable(name: "latchkey-device", targets: ["latchkey-device"]),
    ],
    // An app that uses only the SDK depends on this package with `traits: []`: SwiftPM then resolves and fetches
    // swift-crypto (and its swift-asn1) alone, not the server's 30-odd packages, and never loads their manifests,
    // some of which need a newer toolchain than the SDK does. Every server-only product below is guarded by
    // `Server`, on by default, so `swift run latchkey serve` and plain dependents work as before.
    traits: [
        .trait(name: "Server", description: "The server, its CLI and their dependencies (Hummingbird, SQLite, PostgreSQL, …)."),
        .default(enabledTraits: ["Server"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        .package(url: "https://github.com/swift-extras/swift-extras-base64.git", from: "1.2.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
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
        .target(
            name: "LatchkeyAPI",
            swiftSettings: swiftSettings
        ),
        // The SDK: Foundation (FoundationNetworking on Linux), LatchkeyAPI, and for P-256 and SHA-256 CryptoKit on
        // Apple platforms or swift-crypto (the same API) elsewhere.
        .target(
            name: "LatchkeyClient",
            dependencies: [
                "LatchkeyAPI",
                .product(name: "Crypto", package: "swift-crypto", condition: .when(platforms: [.linux, .android, .windows, .openbsd, .wasi])),
            ],
            swiftSettings: swiftSettings
        ),
        // A terminal "app" built only on the SDK (and swift-argument-parser for its command line; SwiftNIO for its
        // WebSocket on Linux).
        .executableTarget(
            name: "latchkey-device",
            dependencies: [
                "LatchkeyClient",
                .product(name: "ArgumentParser", package: "swift-argument-parser", condition: .when(traits: ["Server"])),
                // `watch` on Linux, whose FoundationNetworking opens no WebSockets with Debian's libcurl (NIOWebSocketTransport).
                .product(name: "NIOCore", package: "swift-nio", condition: .when(platforms: [.linux], traits: ["Server"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(platforms: [.linux], traits: ["Server"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(platforms: [.linux], traits: ["Server"])),
                .product(name: "NIOWebSocket", package: "swift-nio", condition: .when(platforms: [.linux], traits: ["Server"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(platforms: [.linux], traits: ["Server"])),
            ],
            swiftSettings: swiftSettings
        ),
        // AWS Signature Version 4 (STS and S3 calls, presigned URLs): Foundation and swift-crypto only, nothing of the server.
        .target(
            name: "LatchkeySigV4",
            dependencies: [.product(name: "Crypto", package: "swift-crypto", condition: .when(traits: ["Server"]))],
            swiftSettings: serverSwiftSettings
        ),
        // Password hashing: Argon2id (RFC 9106) and BLAKE2b (RFC 7693) in Swift, scrypt from swift-crypto's
        // _CryptoExtras for hashes made elsewhere, and the PHC string format.
        .target(
            name: "LatchkeyPasswords",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto", condition: .when(traits: ["Server"])),
                .product(name: "_CryptoExtras", package: "swift-crypto", condition: .when(traits: ["Server"])),
            ],
            swiftSettings: serverSwiftSettings
        ),
        // A small SMTP client on SwiftNIO (STARTTLS, implicit TLS, AUTH PLAIN/LOGIN) and a MIME message builder.
        .target(
            name: "LatchkeySMTP",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["Server"])),
            ],
            swiftSettings: serverSwiftSettings
        ),
        .target(
            name: "LatchkeyServer",
            dependencies: [
                "LatchkeySigV4",
                "LatchkeyPasswords",
                "LatchkeySMTP",
                "LatchkeyAPI",
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Server"])),
                .product(name: "Mustache", package: "swift-mustache", condition: .when(traits: ["Server"])),
                .product(name: "JWTKit", package: "jwt-kit", condition: .when(traits: ["Server"])),
                .product(name: "ExtrasBase64", package: "swift-extras-base64", condition: .when(traits: ["Server"])),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SQLKit", package: "sql-kit", condition: .when(traits: ["Server"])),
                .product(name: "SQLiteKit", package: "sqlite-kit", condition: .when(traits: ["Server"])),
                .product(name: "SQLiteNIO", package: "sqlite-nio", condition: .when(traits: ["Server"])),
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["Server"])),
                .product(name: "PostgresKit", package: "postgres-kit", condition: .when(traits: ["Server"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Server"])),
                .product(name: "Metrics", package: "swift-metrics", condition: .when(traits: ["Server"])),
                .product(name: "Prometheus", package: "swift-prometheus", condition: .when(traits: ["Server"])),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["Server"])),
                .product(name: "Configuration", package: "swift-configuration", condition: .when(traits: ["Server"])),
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["Server"])),
                .product(name: "NIOWebSocket", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras", condition: .when(traits: ["Server"])),
            ],
            swiftSettings: serverSwiftSettings
        ),
        .executableTarget(
            name: "latchkey",
            dependencies: [
                "LatchkeyAPI",
                "LatchkeyServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser", condition: .when(traits: ["Server"])),
                .product(name: "Configuration", package: "swift-configuration", condition: .when(traits: ["Server"])),
            ],
            swiftSettings: serverSwiftSettings
        ),
        // Test helpers shared by the test targets (running the built executables as real processes).
        .target(
            name: "LatchkeyTestSupport",
            path: "Tests/LatchkeyTestSupport",
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        // The S3 and STS peer (SeaweedFS, started by scripts/test) and SigV4-signed requests to it, for the server's
        // and the SDK's tests.
        .target(
            name: "LatchkeyS3Peer",
            dependencies: ["LatchkeyServer", "LatchkeySigV4"],
            path: "Tests/LatchkeyS3Peer",
            swiftSettings: serverSwiftSettings
        ),
        .testTarget(
            name: "LatchkeySigV4Tests",
            dependencies: ["LatchkeySigV4", "LatchkeyTestSupport", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: serverSwiftSettings
        ),
        .testTarget(
            name: "LatchkeyPasswordsTests",
            dependencies: ["LatchkeyPasswords", "LatchkeyTestSupport"],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny"), serverAvailability]
        ),
        .testTarget(
            name: "LatchkeySMTPTests",
            dependencies: [
                "LatchkeySMTP",
                "LatchkeyTestSupport",
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "NIOEmbedded", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["Server"])),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny"), serverAvailability]
        ),
        .testTarget(
            name: "LatchkeyServerTests",
            dependencies: [
                "LatchkeySigV4",
                "LatchkeyS3Peer",
                "LatchkeyTestSupport",
                "LatchkeyServer",
                "LatchkeyAPI",
                .product(name: "HummingbirdTesting", package: "hummingbird", condition: .when(traits: ["Server"])),
                .product(name: "WSClient", package: "swift-websocket", condition: .when(traits: ["Server"])),
                // HMACs for forged tokens, nonce hashes for the Apple peer, DPoP proofs.
                .product(name: "Crypto", package: "swift-crypto"),
                // Tokens signed with the server's own keys (a made-up kid).
                .product(name: "JWTKit", package: "jwt-kit", condition: .when(traits: ["Server"])),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny"), serverAvailability]
        ),
        .testTarget(
            name: "LatchkeyClientTests",
            dependencies: [
                "LatchkeyTestSupport",
                "LatchkeyClient",
                "LatchkeyAPI",
                // End-to-end tests start a live server in process (and sign S3 requests, as an app's S3 SDK would).
                "LatchkeyServer",
                "LatchkeySigV4",
                "LatchkeyS3Peer",
                .product(name: "HummingbirdTesting", package: "hummingbird", condition: .when(traits: ["Server"])),
                // A raw socket that never answers the event stream's pings.
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["Server"])),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny"), serverAvailability]
        ),
    ]
)
