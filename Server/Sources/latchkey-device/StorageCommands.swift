import ArgumentParser
import Foundation
import LatchkeyAPI
import LatchkeyClient

struct Storage: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The signed-in user's folder: temporary S3 credentials, uploads and downloads through presigned URLs.",
        subcommands: [StorageCredentialsCommand.self, StoragePut.self, StorageGet.self])
}

struct StorageCredentialsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "credentials",
        abstract: "Fetch temporary S3 credentials for the user's folder (POST /storage/credentials) and show where they reach.",
        discussion:
            "Shows bucket, region, endpoint, prefix and expiry. The access key ID, secret access key and session token are printed only with --show-secrets."
    )
    @OptionGroup var options: DeviceOptions
    @Flag(help: "Also print access_key_id, secret_access_key and session_token.") var showSecrets = false

    func run() async throws {
        try await self.options.run { session in
            let credentials = try await session.storageCredentials()
            var result: [String: Any] = [
                "bucket": credentials.bucket, "region": credentials.region, "endpoint": credentials.endpoint, "prefix": credentials.prefix,
                "expiration": ISO8601DateFormatter().string(from: credentials.expiration), "expires_in": credentials.expiresIn,
            ]
            if self.showSecrets {
                result["access_key_id"] = credentials.accessKeyID
                result["secret_access_key"] = credentials.secretAccessKey
                result["session_token"] = credentials.sessionToken
            }
            Output.print(result, json: self.options.json)
        }
    }
}

struct StoragePut: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "put", abstract: "Upload FILE as KEY in the user's folder: a presigned PUT URL (POST /storage/presign), then a plain HTTP PUT.")
    @OptionGroup var options: DeviceOptions
    @Argument(help: "The file to upload.") var file: String
    @Argument(help: "The key relative to the user's folder, e.g. photos/a.jpg.") var key: String
    @Option(help: "The Content-Type to sign and send with the upload.") var contentType: String?

    func validate() throws {
        guard FileManager.default.isReadableFile(atPath: self.file) else { throw ValidationError("cannot read \(self.file)") }
    }

    func run() async throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: self.file))
        try await self.options.run { session in
            let presigned = try await session.presignedURL(key: self.key, method: .put, contentType: self.contentType)
            let response = try await PresignedTransfer.send(presigned, body: data)
            var result: [String: Any] = ["key": self.key, "bytes": data.count]
            if let etag = response.header("ETag") { result["etag"] = etag }
            Output.print(result, json: self.options.json)
        }
    }
}

struct StorageGet: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Download KEY from the user's folder: a presigned GET URL (POST /storage/presign), then a plain HTTP GET.",
        discussion: "The object goes to standard output, or to --output FILE (then its key and size are printed).")
    @OptionGroup var options: DeviceOptions
    @Argument(help: "The key relative to the user's folder, e.g. photos/a.jpg.") var key: String
    @Option(help: "Write the object to this file.") var output: String?

    func run() async throws {
        try await self.options.run { session in
            let presigned = try await session.presignedURL(key: self.key, method: .get)
            let body = try await PresignedTransfer.send(presigned).body
            guard let output = self.output else { return FileHandle.standardOutput.write(body) }
            try body.write(to: URL(fileURLWithPath: output), options: .atomic)
            Output.print(["key": self.key, "bytes": body.count, "output": output], json: self.options.json)
        }
    }
}
