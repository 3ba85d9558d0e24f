import Foundation

/// The requests signed both here and by botocore: every corner of the canonicalisation that Latchkey can reach.
extension SigningVector {
    static let sessionToken = "FwoGZXIvYXdzEJr//////////wEaDOHUtm+aB/Ii4Rcw1iKrAQJ8aBz3rVJ7Xq=="
    static let form = [["Action", "AssumeRole"], ["Version", "2011-06-15"]]

    static let table: [SigningVector] = [
        // S3, signed in the headers.
        SigningVector(
            name: "S3 docs' GET with Range", path: "/test.txt", headers: [["Range", "bytes=0-9"]], accessKey: "AKIAIOSFODNN7EXAMPLE",
            secretKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", timestamp: "20130524T000000Z"),
        SigningVector(name: "S3 key with spaces and unicode", path: "/users/42/été 2013/naïve café 日本.jpg"),
        SigningVector(name: "S3 key with reserved characters", path: "/bucket/a+b=c&d$e(f)!'*,;:@~%25 %.txt"),
        SigningVector(name: "S3 key with empty and dot segments, kept as sent", path: "/bucket//a/./b/../c/"),
        SigningVector(
            name: "S3 ListObjectsV2 query", path: "/",
            query: [
                ["list-type", "2"], ["prefix", "users/ab cd/"], ["delimiter", "/"], ["continuation-token", "1/ab+cd=="], ["max-keys", "100"],
            ]),
        SigningVector(
            name: "S3 repeated, unsorted and empty query parameters", path: "/bucket",
            query: [["z", "1"], ["a", "2"], ["a", "1"], ["m", ""], ["acl", ""], ["B", "upper"]]),
        SigningVector(
            name: "S3 + ~ % = & and spaces inside query names and values", path: "/bucket/key",
            query: [["a+b", "c+d"], ["tilde~", "x~y"], ["percent", "100%"], ["equals", "a=b=c"], ["amp", "a&b"], ["space key", "v  v"]]),
        SigningVector(name: "S3 unicode query value", endpoint: "http://localhost:9000", path: "/bucket", query: [["prefix", "名前/é ü"]]),
        SigningVector(
            name: "S3 PUT with body, content type and whitespace in a header", method: "PUT", path: "/bucket/notes.txt",
            headers: [["Content-Type", "text/plain"], ["x-amz-meta-note", "  many   spaces\tand\t\ttabs  "]], body: body("Welcome to Amazon S3.")),
        SigningVector(
            name: "S3 PUT with a precomputed payload hash", method: "PUT", path: "/bucket/data.bin", body: body("precomputed"),
            payloadGivenAsHash: true),
        SigningVector(name: "S3 PUT with UNSIGNED-PAYLOAD", method: "PUT", path: "/bucket/stream.bin", body: "UNSIGNED"),
        SigningVector(
            name: "S3 GET with a session token", path: "/bucket/users/42/photo.jpg", accessKey: "ASIAEXAMPLE", sessionToken: sessionToken),
        SigningVector(
            name: "S3 SeaweedFS on a non-default port, path style", endpoint: "http://127.0.0.1:8333", path: "/latchkey/users/42/",
            query: [["list-type", "2"], ["prefix", "users/42/"]]),
        SigningVector(
            name: "S3 default port written out is not signed", endpoint: "https://s3.eu-central-1.amazonaws.com:443", path: "/bucket/key",
            region: "eu-central-1"),
        SigningVector(
            name: "S3 DELETE with an empty payload and a user agent left unsigned", method: "DELETE", endpoint: "https://S3.AMAZONAWS.COM",
            path: "/bucket/old.txt", headers: [["User-Agent", "latchkey/1.0"], ["x-amz-request-payer", "requester"]]),
        SigningVector(
            name: "S3 URL already percent-encoded, with raw + in path and query", endpoint: "http://minio:9000", path: "/bucket/a b/~tilde/c+d",
            query: [["x", "+"], ["y", "a+b"], ["flag", ""]], rawURL: "http://minio:9000/bucket/a%20b/%7Etilde/c+d?x=%2b&y=a+b&flag"),
        SigningVector(name: "S3 time with a fraction of a second", path: "/bucket/key", timestamp: "20240101T000001Z", secondsFraction: 0.999),
        // STS and other services: path normalised and encoded twice, no X-Amz-Content-SHA256.
        SigningVector(
            name: "STS AssumeRole form post", endpoint: "https://sts.amazonaws.com", service: "sts",
            formParameters: form + [
                ["RoleArn", "arn:aws:iam::123456789012:role/latchkey-storage"], ["RoleSessionName", "user-42"], ["DurationSeconds", "3600"],
                ["Policy", #"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"arn:aws:s3:::b/users/42/*"}]}"#],
            ]),
        SigningVector(
            name: "STS form post with a session token, regional endpoint", endpoint: "https://sts.eu-west-1.amazonaws.com", service: "sts",
            region: "eu-west-1", sessionToken: sessionToken, formParameters: [["Action", "GetCallerIdentity"], ["Version", "2011-06-15"]]),
        SigningVector(
            name: "STS GET with the action in the query", endpoint: "https://sts.amazonaws.com",
            query: [["Version", "2011-06-15"], ["Action", "GetCallerIdentity"]], service: "sts"),
        SigningVector(
            name: "non-S3 path with spaces, % and dot segments on a local port", endpoint: "http://localhost:4566", path: "/a b/c%d/./é/../f//g/",
            service: "execute-api"),
        SigningVector(
            name: "IAM docs' ListUsers", endpoint: "https://iam.amazonaws.com", query: [["Action", "ListUsers"], ["Version", "2010-05-08"]],
            headers: [["Content-Type", "application/x-www-form-urlencoded; charset=utf-8"]], service: "iam", timestamp: "20150830T123600Z"),
        SigningVector(
            name: "STS with UNSIGNED-PAYLOAD over https", method: "POST", endpoint: "https://sts.amazonaws.com", body: "UNSIGNED", service: "sts"),
        // Presigned URLs.
        SigningVector(
            name: "S3 docs' presigned GET", path: "/test.txt", body: "UNSIGNED", accessKey: "AKIAIOSFODNN7EXAMPLE",
            secretKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", timestamp: "20130524T000000Z", presignExpires: 86400),
        SigningVector(
            name: "S3 presigned GET with a session token, unicode key and response headers", path: "/bucket/users/42/résumé 2024.pdf",
            query: [["response-content-disposition", #"attachment; filename="résumé 2024.pdf""#], ["response-content-type", "application/pdf"]],
            body: "UNSIGNED", accessKey: "ASIAEXAMPLE", sessionToken: sessionToken, presignExpires: 900),
        SigningVector(
            name: "S3 presigned PUT signing content-type on a non-default port", method: "PUT", endpoint: "http://localhost:9000",
            path: "/latchkey/users/42/upload.png", headers: [["Content-Type", "image/png"]], body: "UNSIGNED", presignExpires: 300),
        SigningVector(
            name: "S3 presigned PUT with a token, metadata and content-type", method: "PUT", path: "/bucket/users/7/a+b.txt",
            headers: [["content-type", "text/plain; charset=utf-8"], ["X-Amz-Meta-Owner", " user  7 "]], body: "UNSIGNED", accessKey: "ASIAEXAMPLE",
            sessionToken: sessionToken, presignExpires: 3600),
        SigningVector(
            name: "S3 presigned with + & = and empty values in the query", path: "/bucket/key",
            query: [["versionId", "a+b/c=="], ["x-id", "GetObject"], ["empty", ""], ["amp", "1&2"]], body: "UNSIGNED", presignExpires: 60),
        SigningVector(
            name: "S3 presigned for seven days with spaces in the key", path: "/bucket/a key with spaces", body: "UNSIGNED", presignExpires: 604_800),
        SigningVector(
            name: "STS presigned GetCallerIdentity with a token", endpoint: "https://sts.amazonaws.com",
            query: [["Action", "GetCallerIdentity"], ["Version", "2011-06-15"]], service: "sts", sessionToken: sessionToken, presignExpires: 60),
    ]
}
