import Foundation
import LatchkeyClient
import Testing

@Suite struct AppleNonceTests {
    /// FIPS 180-4 / NIST example vectors, through the public API (the raw nonce is hashed as UTF-8).
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        (
            "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
        ),
    ])
    func sha256MatchesTheFIPSVectors(message: String, digest: String) {
        #expect(AppleNonce(raw: message).sha256 == digest)
    }

    @Test func sha256OfOneMillionAs() {
        #expect(
            AppleNonce(raw: String(repeating: "a", count: 1_000_000)).sha256 == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    /// Lengths around the padding boundaries (55 bytes fit one block with the length, 56 do not).
    @Test(arguments: [
        (55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"),
        (56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"),
        (63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"),
        (64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"),
        (65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"),
    ])
    func sha256AtThePaddingBoundaries(length: Int, digest: String) {
        #expect(AppleNonce(raw: String(repeating: "a", count: length)).sha256 == digest)
    }

    @Test func aNonceIsHashedAsUTF8LowercaseHex() {
        let nonce = AppleNonce(raw: "Hx8-wq2_ZtLkR0vYb3mN9pQs7uJcDfGa")
        #expect(nonce.raw == "Hx8-wq2_ZtLkR0vYb3mN9pQs7uJcDfGa")
        #expect(nonce.sha256 == "aed87e11b5b0c1f31c2bcba5a1afaaa7c99aabf90bfa1b962377190341508f19")
        #expect(AppleNonce(raw: "nonce-é✓").sha256 == "43feed6bed93a3b96a60ceda3f923fdd9308696eb778803265f4dbb7982b365e")
    }

    @Test func randomNoncesHaveTheLengthAndAlphabetAndDiffer() {
        let allowed = Set("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_")
        #expect(Set(AppleNonce.characters) == allowed)
        #expect(AppleNonce.characters.count == 64)
        let nonces = (0..<200).map { _ in AppleNonce.random() }
        for nonce in nonces {
            #expect(nonce.raw.count == 32)
            #expect(nonce.raw.allSatisfy(allowed.contains))
            #expect(nonce.sha256 == AppleNonce(raw: nonce.raw).sha256)
            #expect(nonce.sha256.count == 64)
            #expect(nonce.sha256.allSatisfy { "0123456789abcdef".contains($0) })
        }
        #expect(Set(nonces.map(\.raw)).count == nonces.count)
        // 200 × 32 draws: every one of the 64 characters turns up.
        #expect(Set(nonces.flatMap(\.raw)) == allowed)
        #expect(AppleNonce.random(length: 1).raw.count == 1)
        #expect(AppleNonce.random(length: 64).raw.count == 64)
    }

    @Test func aNonceNeverPrintsItsValues() {
        let nonce = AppleNonce.random()
        var dumped = ""
        dump(nonce, to: &dumped)
        for text in [String(describing: nonce), String(reflecting: nonce), dumped, "\(nonce)", String(describing: [nonce])] {
            #expect(!text.contains(nonce.raw), "the raw nonce leaked in: \(text)")
            #expect(!text.contains(nonce.sha256), "the nonce hash leaked in: \(text)")
        }
    }
}
