// swift-tools-version:6.1
import PackageDescription

// The SDK alone: what an app gets when it adds this repository (from Xcode or a Package.swift, no traits).
// Its only dependency is swift-crypto (with its swift-asn1), for P-256 and SHA-256 where CryptoKit is missing.
// The server, its CLI and their tests are the package in Server/, which depends on this one by path.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "latchkey",
    // The SDK's error sentences are in a string catalog (Sources/LatchkeyClient/Resources/Localizable.xcstrings).
    defaultLocalization: "en",
    // tvOS, watchOS and visionOS are not declared: no build for them can be made or checked here.
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .library(name: "LatchkeyAPI", targets: ["LatchkeyAPI"]),
        .library(name: "LatchkeyClient", targets: ["LatchkeyClient"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2")
    ],
    targets: [
        // The wire types shared by the SDK and the server.
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
            // The error sentences' string catalog, and the privacy manifest App Store uploads require of SDKs (ITMS-91061):
            // UserDefaults (CA92.1), no tracking.
            resources: [.process("Resources"), .copy("PrivacyInfo.xcprivacy")],
            swiftSettings: swiftSettings
        ),
        // The SDK's unit tests, against stub transports and stores (its end-to-end tests against a live server are
        // Server/Tests/LatchkeyClientEndToEndTests). The Keychain code is checked by scripts/check-keychain.
        .testTarget(
            name: "LatchkeyClientTests",
            dependencies: ["LatchkeyClient", "LatchkeyAPI"],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        // The shortest correct integration of each of the five seed apps (Stori, Photolala, Mystica, the hairstyle app,
        // SabaiPics), written as an app's auth layer and run against stub transports, so the documented usage cannot rot.
        // scripts/check-keychain compiles and runs them again with their Apple-only lines (Keychain, UIKit).
        .testTarget(
            name: "SeedIntegrations",
            dependencies: ["LatchkeyClient", "LatchkeyAPI"],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
    ]
)
