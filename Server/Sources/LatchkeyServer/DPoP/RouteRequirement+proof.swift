extension RouteRequirement where Context == LatchkeyRequestContext {
    /// An optional `DPoP` proof, checked before anything is counted, and the server nonce on every answer (see
    /// ``DPoPProofMiddleware``).
    static func proof(_ verifier: DPoPVerifier) -> RouteRequirement {
        RouteRequirement([DPoPProofMiddleware(verifier: verifier)]) { operation in
            operation.parameters.append(
                .init(
                    "DPoP", in: .header, required: false,
                    "A DPoP proof (RFC 9449) made with the device's P-256 key: typ `dpop+jwt`, ES256 with the public key in its `jwk` "
                        + "header, `htm` and `htu` naming this request, a unique `jti`, `iat`, and the nonce of the latest `DPoP-Nonce` "
                        + "answer header; with `ath` (the base64url SHA-256 of the request's access token) when it carries one, which a proof "
                        + "standing in for a recent sign-in must. A sign-in carrying one binds the new session to the key; refreshes of a "
                        + "bound session need one."))
            operation.addHeaderToEveryOutcome("DPoP-Nonce")
            operation.add(
                .init(
                    400, "The request or its DPoP proof is not valid (`invalid_dpop_proof`, or `use_dpop_nonce` with a fresh nonce).",
                    headers: ["DPoP-Nonce"]))
        }
    }
}
