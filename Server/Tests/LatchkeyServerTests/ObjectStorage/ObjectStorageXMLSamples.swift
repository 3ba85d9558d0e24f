import Foundation

/// Response bodies shaped as AWS documents them (STS API reference, S3 API reference), and as MinIO sends them.
enum ObjectStorageXMLSamples {
    /// STS API reference, AssumeRole, example response (the session token wrapped over lines as printed there).
    static let assumeRole = Data(
        """
        <AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
          <AssumeRoleResult>
          <SourceIdentity>Alice</SourceIdentity>
            <AssumedRoleUser>
              <Arn>arn:aws:sts::123456789012:assumed-role/demo/TestAR</Arn>
              <AssumedRoleId>ARO123EXAMPLE123:TestAR</AssumedRoleId>
            </AssumedRoleUser>
            <Credentials>
              <AccessKeyId>ASIAIOSFODNN7EXAMPLE</AccessKeyId>
              <SecretAccessKey>wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY</SecretAccessKey>
              <SessionToken>
               AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQW
               LWsKWHGBuFqwAeMicRXmxfpSPfIeoIYRqTflfKD8YUuwthAx7mSEI/qkPpKPi/kMcGd
               QrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0KPkyQDYwT7WZ0wq5VSXDvp75YU
               9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0rKwT38xVqr7ZD0u0iPPkUL64lIZbqBAz
               +scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/oLxBA==
              </SessionToken>
              <Expiration>2019-11-09T13:34:41Z</Expiration>
            </Credentials>
            <PackedPolicySize>6</PackedPolicySize>
          </AssumeRoleResult>
          <ResponseMetadata>
            <RequestId>c6104cbe-af31-11e0-8154-cbc7ccf896c7</RequestId>
          </ResponseMetadata>
        </AssumeRoleResponse>
        """.utf8)

    /// MinIO's STS answer to AssumeRoleWithWebIdentity: fractional seconds, an empty role user.
    static let assumeRoleWithWebIdentity = Data(
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleWithWebIdentityResult>\
        <AssumedRoleUser><Arn></Arn><AssumeRoleId></AssumeRoleId></AssumedRoleUser><Credentials>\
        <AccessKeyId>Y4RJU1RNFGK48LGO9I2S</AccessKeyId><SecretAccessKey>sYLRKS1Z7hSjluf6gEbb9066hnx315wHTiACPAjg</SecretAccessKey>\
        <Expiration>2019-08-08T20:26:12.359Z</Expiration><SessionToken>eyJhbGciOiJIUzUxMiIsInR5cCI6IkpXVCJ9.e30.sig</SessionToken>\
        </Credentials></AssumeRoleWithWebIdentityResult><ResponseMetadata></ResponseMetadata></AssumeRoleWithWebIdentityResponse>
        """.utf8)

    /// STS's error document (the Query API's `ErrorResponse`).
    static let stsError = Data(
        """
        <ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
          <Error>
            <Type>Sender</Type>
            <Code>AccessDenied</Code>
            <Message>User: arn:aws:iam::123456789012:user/latchkey is not authorized to perform: sts:AssumeRole on resource: \
        arn:aws:iam::123456789012:role/demo</Message>
          </Error>
          <RequestId>4a5c2b1e-7d3c-11e9-8f9e-2a86e4085a59</RequestId>
        </ErrorResponse>
        """.utf8)

    /// S3 API reference, "Error responses", example.
    static let s3Error = Data(
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <Error>
          <Code>NoSuchKey</Code>
          <Message>The resource you requested does not exist</Message>
          <Resource>/mybucket/myfoto.jpg</Resource>
          <RequestId>4442587FB7D0A2F9</RequestId>
        </Error>
        """.utf8)

    /// S3 API reference, ListObjectsV2, example 1: one page, not truncated (the ETag quoted as S3 sends it).
    static let listObjects = Data(
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
            <Name>bucket</Name>
            <Prefix/>
            <KeyCount>2</KeyCount>
            <MaxKeys>1000</MaxKeys>
            <IsTruncated>false</IsTruncated>
            <Contents>
                <Key>my-image.jpg</Key>
                <LastModified>2009-10-12T17:50:30.000Z</LastModified>
                <ETag>&quot;fba9dede5f27731c9771645a39863328&quot;</ETag>
                <Size>434234</Size>
                <StorageClass>STANDARD</StorageClass>
            </Contents>
            <Contents>
                <Key>my-third-image.jpg</Key>
                <LastModified>2009-10-12T17:50:30.000Z</LastModified>
                <ETag>"1b2cf535f27731c974343645a3985328"</ETag>
                <Size>64994</Size>
                <StorageClass>STANDARD_IA</StorageClass>
            </Contents>
        </ListBucketResult>
        """.utf8)

    /// ListObjectsV2, example 2: a truncated page with its continuation token.
    static let truncatedListObjects = Data(
        """
        <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
          <Name>bucket</Name>
          <Prefix></Prefix>
          <NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>
          <KeyCount>1</KeyCount>
          <MaxKeys>1</MaxKeys>
          <IsTruncated>true</IsTruncated>
          <Contents>
            <Key>happyface.jpg</Key>
            <LastModified>2014-11-21T19:40:05.000Z</LastModified>
            <ETag>"70ee1738b6b21e2c8a43f3a5ab0eee71"</ETag>
            <Size>11</Size>
            <StorageClass>STANDARD</StorageClass>
          </Contents>
        </ListBucketResult>
        """.utf8)

    /// ListObjectsV2 with `delimiter=/`: a folder's own marker object and two common prefixes.
    static let commonPrefixes = Data(
        """
        <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
          <Name>example-bucket</Name>
          <Prefix>photos/2006/</Prefix>
          <KeyCount>3</KeyCount>
          <MaxKeys>1000</MaxKeys>
          <Delimiter>/</Delimiter>
          <IsTruncated>false</IsTruncated>
          <Contents>
            <Key>photos/2006/</Key>
            <LastModified>2016-04-30T23:51:29.000Z</LastModified>
            <ETag>"d41d8cd98f00b204e9800998ecf8427e"</ETag>
            <Size>0</Size>
            <StorageClass>STANDARD</StorageClass>
          </Contents>
          <CommonPrefixes>
            <Prefix>photos/2006/February/</Prefix>
          </CommonPrefixes>
          <CommonPrefixes>
            <Prefix>photos/2006/January/</Prefix>
          </CommonPrefixes>
        </ListBucketResult>
        """.utf8)
}
