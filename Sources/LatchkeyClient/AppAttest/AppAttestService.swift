import Foundation

/// A device's App Attest service: the four calls of DeviceCheck's `DCAppAttestService` the SDK makes, as a protocol,
/// so that an ``AppAttestProvider`` runs over Apple's service on a device and over a fake in tests.
///
/// The SDK keeps the key ID (in the ``SecureStore``, beside the device secret), decides when to attest and when to
/// assert, and computes every client data hash; an implementation only passes the calls on. It throws
/// ``AppAttestServiceError/invalidKey`` when the key, or the input given with it, is refused (DeviceCheck's
/// `DCError.invalidKey` and `.invalidInput`): the SDK then makes a new key and attests it, once.
public protocol AppAttestService: Sendable {
    /// Whether this device can attest keys (`false` on the simulator and on devices without App Attest): when it cannot,
    /// the SDK sends no App Attest evidence and the device stays unattested.
    var isSupported: Bool { get }
    /// Makes a new key in the Secure Enclave and returns its key ID (base64 of the SHA-256 of its public key).
    func generateKey() async throws -> String
    /// Has Apple attest the key `keyID` over `clientDataHash` (32 bytes) and returns the attestation object (CBOR).
    func attestKey(_ keyID: String, clientDataHash: Data) async throws -> Data
    /// Signs `clientDataHash` (32 bytes) with the key `keyID` and returns the assertion (CBOR
    /// `{signature, authenticatorData}`).
    func generateAssertion(_ keyID: String, clientDataHash: Data) async throws -> Data
}

/// What an ``AppAttestService`` throws for the SDK to act on; any other error leaves the device unattested for that
/// sign-in.
public enum AppAttestServiceError: Error, Sendable, Equatable {
    /// The key is unknown or unusable, or its input was refused (`DCError.invalidKey`, `DCError.invalidInput`): the
    /// SDK forgets the key, makes a new one and attests it, once.
    case invalidKey
}
