import AsyncHTTPClient
import Foundation
import JWTKit
import Logging
import NIOCore
import NIOHTTP1

/// Where an identity provider's public keys come from.
protocol IdentityKeySource: Sendable {
    /// The keys, holding the one named `kid` when the provider has it.
    func keys(for kid: String?) async throws -> JWTKeyCollection
}

/// Keys given in the configuration as a PEM public key: nothing is fetched.
struct StaticKeySource: IdentityKeySource {
    let collection: JWTKeyCollection

    static func rsa(pem: String) async throws -> StaticKeySource {
        let collection = JWTKeyCollection()
        await collection.add(rsa: try Insecure.RSA.PublicKey(pem: pem), digestAlgorithm: .sha256)
        return StaticKeySource(collection: collection)
    }

    func keys(for kid: String?) async throws -> JWTKeyCollection { self.collection }
}

/// A provider's JWKS, fetched over HTTP and kept as long as its `Cache-Control: max-age` says (clamped to
/// 1 minute … 1 day; 1 hour without one). A token naming a `kid` the cached set lacks refetches, at most
/// once per `refetchInterval` (1 minute), so made-up `kid`s cannot make us hammer the provider. When a
/// refetch fails, the keys already held keep working; while the provider fails and no keys are held, fetches back
/// off (1 s, doubling, at most `refetchInterval`) and tokens meanwhile get 502 without a fetch.
actor JWKSCache: IdentityKeySource {
    struct Snapshot {
        let collection: JWTKeyCollection
        let kids: Set<String>
        let expiresAt: Date
    }

    let url: String
    let http: HTTPClient
    let clock: any WallClock
    let refetchInterval: TimeInterval
    let logger: Logger
    private var snapshot: Snapshot?
    private var lastFetch: Date?
    private var inFlight: Task<Snapshot, any Error>?
    /// Failed fetches in a row, and when the next may be made.
    private var failures = 0
    private var retryAt: Date?

    init(url: String, http: HTTPClient, clock: any WallClock, refetchInterval: TimeInterval = 60, logger: Logger) {
        self.url = url
        self.http = http
        self.clock = clock
        self.refetchInterval = refetchInterval
        self.logger = logger
    }

    /// Throws ``TokenRejection/unknownKey`` for a missing `kid` or one the provider does not publish.
    func keys(for kid: String?) async throws -> JWTKeyCollection {
        guard let kid else { throw TokenRejection.unknownKey }
        let now = self.clock.now()
        if let snapshot, now < snapshot.expiresAt, snapshot.kids.contains(kid) { return snapshot.collection }
        // Expired, or a kid we do not know: fetch, unless we fetched within the refetch interval.
        if let lastFetch, now.timeIntervalSince(lastFetch) < self.refetchInterval, let snapshot {
            guard snapshot.kids.contains(kid) else { throw TokenRejection.unknownKey }
            return snapshot.collection
        }
        if self.snapshot == nil, let retryAt, now < retryAt {
            throw ServiceError.upstream("The identity provider's signing keys could not be fetched; try again shortly.")
        }
        let fresh: Snapshot
        do {
            fresh = try await self.fetch(now: now)
            (self.failures, self.retryAt) = (0, nil)
        } catch {
            self.failures += 1
            self.retryAt = now.addingTimeInterval(min(pow(2, Double(self.failures - 1)), self.refetchInterval))
            guard let snapshot, snapshot.kids.contains(kid) else {
                self.logger.error("fetching an identity provider's keys failed", metadata: ["jwks": "\(self.url)", "error": "\(error)"])
                throw ServiceError.upstream("The identity provider's signing keys could not be fetched; try again shortly.")
            }
            self.logger.warning("refreshing an identity provider's keys failed; using the keys held", metadata: ["jwks": "\(self.url)"])
            return snapshot.collection
        }
        guard fresh.kids.contains(kid) else { throw TokenRejection.unknownKey }
        return fresh.collection
    }

    private func fetch(now: Date) async throws -> Snapshot {
        if let inFlight { return try await inFlight.value }
        self.lastFetch = now
        let task = Task { try await Self.download(url: self.url, http: self.http, now: now) }
        self.inFlight = task
        defer { self.inFlight = nil }
        let fresh = try await task.value
        self.snapshot = fresh
        return fresh
    }

    private static func download(url: String, http: HTTPClient, now: Date) async throws -> Snapshot {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Accept", value: "application/json")
        let response = try await http.execute(request, timeout: .seconds(5))
        guard response.status == .ok else { throw UpstreamError.status(Int(response.status.code)) }
        let body = try await response.body.collect(upTo: 1 << 20)
        let jwks = try JSONDecoder().decode(JWKS.self, from: Data(body.readableBytesView))
        let collection = JWTKeyCollection()
        var kids: Set<String> = []
        for key in jwks.keys where key.keyType == .rsa || key.keyType == .ecdsa {
            // Keys we cannot use (other types, malformed) are skipped rather than failing the whole set.
            guard (try? await collection.add(jwk: key)) != nil else { continue }
            if let kid = key.keyIdentifier?.string { kids.insert(kid) }
        }
        let maxAge = response.headers.first(name: "Cache-Control").flatMap(Self.maxAge) ?? 3600
        return Snapshot(collection: collection, kids: kids, expiresAt: now.addingTimeInterval(min(max(maxAge, 60), 86_400)))
    }

    static func maxAge(_ cacheControl: String) -> TimeInterval? {
        for directive in cacheControl.split(separator: ",") {
            let parts = directive.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "max-age", let seconds = Double(parts[1]) { return seconds }
        }
        return nil
    }
}

extension HTTPClient {
    /// The client identity providers' keys are fetched with: `HTTPClient.shared`'s settings, but a redirect is never
    /// followed (it is the provider's failure, as any other answer but 200): the keys come from the configured URL or
    /// from nowhere, and the server is never led to another address. Never shut down, like `shared`.
    static let keyFetching: HTTPClient = {
        var configuration = HTTPClient.Configuration.singletonConfiguration
        configuration.redirectConfiguration = .disallow
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()
}

/// An identity provider's endpoint answered, but not as it should.
enum UpstreamError: Error, CustomStringConvertible {
    case status(Int)
    case refused(String)
    case malformed

    var description: String {
        switch self {
        case .status(let code): "the identity provider answered HTTP \(code)"
        case .refused(let error): "the identity provider refused: \(error)"
        case .malformed: "the identity provider's answer could not be read"
        }
    }
}
