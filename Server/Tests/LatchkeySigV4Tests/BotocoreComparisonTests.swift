import Foundation
import LatchkeySigV4
import LatchkeyTestSupport
import Testing

/// The signer against botocore, AWS's own Python SDK, on every request of ``SigningVector/table``: same signature,
/// same canonical request, same headers added, same URL sent.
///
/// Runs Tests/interop/sigv4_vectors.py with the python that `LATCHKEY_TEST_PYTHON` names (it must import botocore:
/// `pip install botocore`).
struct BotocoreComparisonTests {
    static let python = ProcessInfo.processInfo.environment["LATCHKEY_TEST_PYTHON"].flatMap { $0.isEmpty ? nil : $0 }

    @Test(
        "every vector signs as botocore signs it",
        .enabled(if: python != nil, "LATCHKEY_TEST_PYTHON is unset: name a python with botocore installed to compare with botocore"))
    func matchesBotocore() async throws {
        let vectors = SigningVector.table
        #expect(vectors.count >= 20)
        let signed = try vectors.map(SwiftSignature.init)
        let expected = try await Self.botocore(signed.map(\.description))
        try #require(expected.count == vectors.count, "botocore answered \(expected.count) results for \(vectors.count) requests")
        for (ours, theirs) in zip(signed, expected) {
            let name = ours.description.name
            #expect(ours.canonicalRequest == theirs.canonicalRequest, "\(name): canonical requests differ")
            #expect(ours.signature == theirs.signature, "\(name): signatures differ")
            #expect(ours.authorization == theirs.authorization, "\(name): Authorization differs")
            #expect(ours.addedHeaders == theirs.addedHeaders(besides: ours.description.headers), "\(name): the headers added differ")
            let (ourURL, theirURL) = (URLComponents(url: ours.url, resolvingAgainstBaseURL: false)!, URLComponents(string: theirs.url)!)
            #expect(ourURL.percentEncodedPath == theirURL.percentEncodedPath, "\(name): the path sent differs")
            #expect(Self.sortedQuery(ourURL) == Self.sortedQuery(theirURL), "\(name): the query sent differs")
            #expect(ourURL.host?.lowercased() == theirURL.host?.lowercased() && ourURL.port == theirURL.port, "\(name): the host differs")
        }
    }

    static func sortedQuery(_ url: URLComponents) -> [String] {
        (url.percentEncodedQuery ?? "").split(separator: "&").map(String.init).sorted()
    }

    /// Runs the script on `descriptions` and decodes its answer.
    static func botocore(_ descriptions: [SigningVector]) async throws -> [BotocoreResult] {
        let input = FileManager.default.temporaryDirectory.appendingPathComponent("sigv4-vectors-\(UUID().uuidString).json")
        try JSONEncoder().encode(descriptions).write(to: input)
        defer { try? FileManager.default.removeItem(at: input) }
        let script = ProcessRunner.packageRoot.appendingPathComponent("Tests/interop/sigv4_vectors.py")
        let result = try await ProcessRunner.run(
            try Self.executable(Self.python ?? "python3"), arguments: [script.path], environment: ProcessInfo.processInfo.environment,
            workingDirectory: ProcessRunner.packageRoot, standardInput: input)
        try #require(result.exitCode == 0, "\(result)")
        return try JSONDecoder().decode([BotocoreResult].self, from: Data(result.stdout.utf8))
    }

    /// `name` itself when it is a path, else the first executable of that name on `PATH`.
    static func executable(_ name: String) throws -> URL {
        if name.contains("/") { return URL(fileURLWithPath: name) }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        throw ProcessRunnerError("LATCHKEY_TEST_PYTHON names \(name), which is not on PATH")
    }
}

/// What the Swift signer made of one vector, and the description botocore gets for it.
struct SwiftSignature {
    let description: SigningVector
    let url: URL
    let signature: String
    let canonicalRequest: String
    let authorization: String?
    /// The headers the signer added, names lowercased (`Authorization` and `Content-Type` aside).
    let addedHeaders: [String: String]

    init(_ vector: SigningVector) throws {
        let signer = SigV4Signer(region: vector.region, service: vector.service, credentials: vector.credentials)
        var description = vector
        if let expires = vector.presignExpires {
            // Leave the payload to the signer where its default is botocore's: unsigned for S3, empty for the others.
            let isDefault = vector.service == "s3" ? vector.body == "UNSIGNED" : vector.body.isEmpty
            let payload: SigV4Payload? = isDefault ? nil : vector.payload
            let presigned = try signer.presignedRequest(
                method: vector.method, url: vector.components, headers: vector.headerDictionary, expiresAfter: expires, payload: payload,
                date: vector.date)
            (self.url, self.signature, self.canonicalRequest, self.authorization) =
                (presigned.url, presigned.signature, presigned.canonicalRequest, nil)
            self.addedHeaders = [:]
        } else {
            let signed: SigV4SignedRequest
            if let form = vector.formParameters {
                let parameters = form.map { URLQueryItem(name: $0[0], value: $0[1]) }
                signed = try signer.signFormPost(url: vector.components, parameters: parameters, date: vector.date)
                description.method = "POST"
                description.body = try #require(signed.body).base64EncodedString()
                description.headers.append(["Content-Type", try #require(signed.headers["Content-Type"])])
            } else {
                signed = try signer.sign(
                    method: vector.method, url: vector.components, headers: vector.headerDictionary, payload: vector.payload, date: vector.date)
            }
            (self.url, self.signature, self.canonicalRequest, self.authorization) =
                (signed.url, signed.signature, signed.canonicalRequest, signed.headers["Authorization"])
            let added = signed.headers.map { ($0.key.lowercased(), $0.value) }
            self.addedHeaders = Dictionary(uniqueKeysWithValues: added.filter { $0.0 != "authorization" && $0.0 != "content-type" })
        }
        self.description = description
    }
}

/// One result of Tests/interop/sigv4_vectors.py.
struct BotocoreResult: Decodable {
    let name: String
    let url: String
    let authorization: String?
    let signature: String
    let headers: [[String]]
    let canonicalRequest: String

    enum CodingKeys: String, CodingKey {
        case name, url, authorization, signature, headers
        case canonicalRequest = "canonical_request"
    }

    /// The headers botocore added to the request's own `given` ones, names lowercased (`Authorization` aside).
    func addedHeaders(besides given: [[String]]) -> [String: String] {
        let givenNames = Set(given.map { $0[0].lowercased() })
        return Dictionary(
            self.headers.map { ($0[0].lowercased(), $0[1]) }.filter { !givenNames.contains($0.0) && $0.0 != "authorization" },
            uniquingKeysWith: { first, _ in first })
    }
}
