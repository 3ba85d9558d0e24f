import ArgumentParser
import Foundation
import LatchkeyAPI
import LatchkeyClient

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

struct Call: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send one request with an auth policy and print the response body.",
        discussion: """
            A path goes to the Latchkey server (LatchkeySession.send); an absolute URL is the app's own API on any host \
            (LatchkeySession.data(for:), exit code from its status: 1 for a 4xx, 3 for 401, 4 for 429, 5 for a 5xx). \
            --stream prints the body's lines as they arrive (LatchkeySession.bytes(for:)). \
            Credentials go only to --server and the --api-origin origins: any --auth but none to another origin sends \
            nothing and exits 2.
            --auth none: no credentials; bearer: Authorization only; device: X-Device-ID only (no JWT); guest: both; \
            device-for-guests: the bearer, and X-Device-ID while the session is a guest's.
            """)
    @OptionGroup var options: DeviceOptions
    @Argument(help: "HTTP method, e.g. GET.") var method: String
    @Argument(help: "Path on the server, e.g. /api/v1/users/me, or an absolute http(s) URL.") var path: String
    @Option(help: "none, bearer, device, guest or device-for-guests.") var auth: CallAuth = .bearer
    @Option(help: "A JSON body.") var data: String?
    @Flag(help: "Send this device's UUID as {\"user_id\": …} (for POST /api/v1/users/register).") var registerUser = false
    @Flag(help: "Print the body's lines as they arrive.") var stream = false

    enum CallAuth: String, ExpressibleByArgument, CaseIterable {
        case none, bearer, device, guest
        case deviceForGuests = "device-for-guests"
        var policy: AuthPolicy {
            switch self {
            case .none: .none
            case .bearer: .bearer
            case .device: .deviceID
            case .guest: .bearerAndDeviceID
            case .deviceForGuests: .deviceIDForGuests
            }
        }
    }

    func run() async throws {
        try await self.options.run { session in
            var body = self.data.map { Data($0.utf8) }
            if self.registerUser {
                body = try JSONEncoder().encode(RegisterUserRequest(userID: try await session.deviceID().uuidString.lowercased()))
            }
            let absolute = URL(string: self.path).flatMap { $0.scheme == nil ? nil : $0 }
            guard absolute != nil || self.stream else { return try await self.send(body, with: session) }
            var request = URLRequest(url: try absolute ?? session.url(for: self.path))
            request.httpMethod = self.method.uppercased()
            request.httpBody = body
            if body != nil { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
            let status = try await self.stream ? self.streamLines(request, with: session) : self.fetch(request, with: session)
            if let exitCode = Self.exitCode(status: status) { throw ExitCode(exitCode) }
        }
    }

    /// A request to the Latchkey server, through `send`.
    private func send(_ body: Data?, with session: LatchkeySession) async throws {
        let request = LatchkeyRequest(
            method: self.method, path: self.path, headers: body == nil ? [:] : ["Content-Type": "application/json"], body: body,
            auth: self.auth.policy)
        let response = try await session.send(request)
        self.print(status: response.status, body: response.body)
    }

    /// The app's own API, through `data(for:)`; returns the status.
    private func fetch(_ request: URLRequest, with session: LatchkeySession) async throws -> Int {
        let (body, response) = try await session.data(for: request, policy: self.auth.policy)
        self.print(status: response.statusCode, body: body)
        return response.statusCode
    }

    /// A streamed body, through `bytes(for:)`, line by line as it arrives; returns the status.
    private func streamLines(_ request: URLRequest, with session: LatchkeySession) async throws -> Int {
        let (bytes, response) = try await session.bytes(for: request, policy: self.auth.policy)
        for try await line in bytes.lines {
            var text = line
            if self.options.json,
                let json = try? JSONSerialization.data(withJSONObject: ["status": response.statusCode, "line": line], options: [.sortedKeys])
            {
                text = String(decoding: json, as: UTF8.self)
            }
            FileHandle.standardOutput.write(Data((text + "\n").utf8))  // unbuffered: each line as it arrives
        }
        return response.statusCode
    }

    private func print(status: Int, body: Data) {
        if self.options.json {
            let parsed = (try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed])) ?? String(decoding: body, as: UTF8.self)
            Output.printJSON(["status": status, "body": parsed])
        } else {
            Swift.print(String(decoding: body, as: UTF8.self))
        }
    }

    /// The documented exit code for an answer of the app's own API.
    static func exitCode(status: Int) -> Int32? {
        switch status {
        case 200..<400: nil
        case 401: 3
        case 429: 4
        case 500...: 5
        default: 1
        }
    }
}
