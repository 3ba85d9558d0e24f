import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyAppAttestPeer
import LatchkeyServer
import Testing
import X509

/// The console's user page says whether each of the user's devices is attested.
@Suite
struct AppAttestConsoleTests {
    @Test func theUserPageShowsWhetherTheDeviceIsAttested() async throws {
        let bench = try AppAttestBench()
        let root = try bench.authority.root.serializeAsPEM().pemString
        try await AdminConsoleTests.withConsole(
            clock: ManualClock(start: TestAttestationAuthority.now),
            { configuration in
                configuration.appAttest.policy = .guests
                configuration.appAttest.appIDs = [TestAttestationAuthority.appID]
                configuration.appAttest.roots = [root]
            }
        ) { browser, client, server in
            try await browser.setUp(server)
            let attested = UUID().uuidString.lowercased()
            #expect(try await client.registerDevice(attested, evidence: try await bench.evidence(client, .init())).status == .created)
            let plain = UUID().uuidString.lowercased()
            #expect(try await client.registerDevice(plain, evidence: nil).status == .created)

            let page = try await browser.get("/admin/users/\(attested)")
            #expect(page.status == .ok && page.text.contains("<th>Attested</th>"))
            // Registered without a DPoP key: no key, attested.
            #expect(page.text.contains("<td>—</td><td>yes</td>"), "\(page.text)")
            let other = try await browser.get("/admin/users/\(plain)")
            #expect(other.text.contains("<td>—</td><td>no</td>"), "\(other.text)")
        }
    }
}
