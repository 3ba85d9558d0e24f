/// The bytes of hexadecimal text; spaces are ignored.
func hex(_ text: String) -> [UInt8] {
    let digits = Array(text.filter { !$0.isWhitespace })
    precondition(digits.count % 2 == 0)
    return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
}

/// A real attestation object (format none, an ES256 credential), from py_webauthn's
/// tests/test_verify_registration_response.py (test_verifies_none_attestation_response).
let realAttestationObject = hex(
    """
    a363666d74646e6f6e656761747453746d74a068617574684461746158c449960de5880e8c687434170f6476605b8fe4aeb9
    a28632c7995cf3ba831d97634500000017000000000000000000000000000000000040f72d7103c4e6835144993f9ceff7ef
    599feea13ba88a1dcebd1e39fe800af9cc075a101b5eb976abada22d54e38b2119eceee7f8244e398e3de24ed0df1aecffa5
    0102032620012158204856d4245fb8d94837a5d33cac3445bbf379a22544cac3c307a9faeabffb7590225820d4567077f459
    46ca92fea80a083bdc561ed272828da37c398797efde28544b0c
    """)
