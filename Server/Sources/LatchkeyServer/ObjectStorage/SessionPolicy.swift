import Foundation

/// The inline session policy of vended credentials: the configured actions on `arn:aws:s3:::<bucket>/<prefix>*`, and
/// `s3:ListBucket` on the bucket only for keys under `<prefix>` (`s3:prefix` like `<prefix>*`). The prefix ends with
/// `/`, so user `…a1` never reaches `…a1b/`. The effective permissions are the role's policy intersected with this one.
struct SessionPolicy: Encodable {
    struct Statement: Encodable {
        var effect = "Allow"
        var action: [String]
        var resource: [String]
        var condition: [String: [String: [String]]]?

        enum CodingKeys: String, CodingKey {
            case effect = "Effect"
            case action = "Action"
            case resource = "Resource"
            case condition = "Condition"
        }
    }

    var version = "2012-10-17"
    var statement: [Statement]

    enum CodingKeys: String, CodingKey {
        case version = "Version"
        case statement = "Statement"
    }

    init(bucket: String, prefix: String, actions: [String]) {
        self.statement = [
            Statement(action: actions, resource: ["arn:aws:s3:::\(bucket)/\(prefix)*"]),
            Statement(
                action: ["s3:ListBucket"], resource: ["arn:aws:s3:::\(bucket)"], condition: ["StringLike": ["s3:prefix": ["\(prefix)*"]]]),
        ]
    }

    /// The policy as compact JSON (STS limits it to 2048 characters).
    var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(self)) ?? Data(), as: UTF8.self)
    }

    /// `lk-<user id>`: at most 64 characters of `[\w+=,.@-]`, as STS requires; it shows in CloudTrail beside the role.
    static func roleSessionName(forUser userID: String) -> String {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_+=,.@-")
        return String(("lk-" + userID).filter { allowed.contains($0) }.prefix(64))
    }
}
