import Foundation
import XCTest
@testable import Auth
@testable import Outbox

/// `enlog sync` in a namespace whose DNS hangs (`DNSBlackHole`), to an HTTPS NoteStore named
/// `evernote.test` (a self-signed certificate for that name, trusted through `network.ca_file`):
/// it must get through on the address remembered from an earlier sync, TLS verified against the name.
final class SyncNamespaceTests: XCTestCase {
    static let token = "S=s1:U=1:E=ns:C=test:P=1:A=enlog:V=2:H=ns"
    static let name = "evernote.test"

    func testSyncUsesTheRememberedAddressWhileDNSHangs() async throws {
        try requireNamespaces()
        let python = try PythonServer.interpreter(stdlibOnly: false)
        let dir = try TemporaryDirectory()
        let tls = try SelfSignedCertificate(in: dir, for: "DNS:\(Self.name)")
        let cert = tls.certificate, key = tls.key

        let hole = try DNSBlackHole()
        defer { hole.tearDown() }
        addTeardownBlock { hole.tearDown() }
        try hole.build()
        let port = hole.openPort + 2   // openPort has the plain listener, openPort + 1 is dropped
        let baseURL = "https://\(Self.name):\(port)"
        let server = try ChildProcess("/usr/sbin/ip", ["netns", "exec", hole.server, python,
                                                     PythonServer.supportDirectory.appendingPathComponent("evernote_server.py").path,
                                                     "--host", hole.serverAddress, "--port", "\(port)", "--print-port",
                                                     "--token", Self.token, "--tls-cert", cert, "--tls-key", key,
                                                     "--public-url", baseURL], environment: ChildProcess.cleanEnvironment)
        defer { server.kill() }
        XCTAssertTrue(server.waitForOutput(containing: "PORT="), "evernote_server.py did not start")

        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        home.extraEnvironment["ENLOG_NETWORK_CA_FILE"] = cert
        try CredentialStore(path: home.directory.path("config/enlog/credentials.json")).save(Credentials(
            service: .custom, host: baseURL, authProtocol: .token, userId: 1,
            noteStoreUrl: baseURL + "/shard/s1/notestore", token: Self.token))
        for latitude in 1...3 { XCTAssertEqual(try home.run("log", "--at", "\(latitude),2", "--no-sync").status, 0) }

        func syncInClient(_ arguments: String...) throws -> (status: Int32, output: String, milliseconds: Double) {
            let environment = home.environment.map { "\($0.key)=\($0.value)" }
            return try runCommand("/usr/sbin/ip", ["netns", "exec", hole.client, "/usr/bin/env", "-i"] + environment
                                    + [Subprocess.enlog.path, "sync"] + arguments)
        }
        func serverJSON(_ path: String) throws -> [[String: Any]] {
            // Read in the server's namespace, trusting the test certificate (the host cannot reach it).
            let script = "import ssl,sys,urllib.request;c=ssl.create_default_context(cafile=sys.argv[2]);c.check_hostname=False;"
                + "sys.stdout.write(urllib.request.urlopen(sys.argv[1],context=c).read().decode())"
            let result = try runCommand("/usr/sbin/ip", ["netns", "exec", hole.server, python, "-c", script,
                                                         "https://\(hole.serverAddress):\(port)\(path)", cert])
            XCTAssertEqual(result.status, 0, result.output)
            let json = try JSONSerialization.jsonObject(with: Data(result.output.utf8))
            return json as? [[String: Any]] ?? []
        }

        // The name does not resolve in the client namespace: the resolver hangs.
        let dns = try runCommand("/usr/bin/timeout", ["3", "/usr/sbin/ip", "netns", "exec", hole.client, "getent", "hosts", Self.name])
        print("sync black hole: getent hosts \(Self.name) -> exit \(dns.status) after \(Int(dns.milliseconds)) ms (124 = killed)")
        XCTAssertNotEqual(dns.status, 0, dns.output)

        // 1. Nothing remembered: only a name, which reachability never resolves -> not reachable, nothing sent.
        let before = try syncInClient()
        print("sync black hole, nothing remembered: exit \(before.status) after \(Int(before.milliseconds)) ms: \(before.output)")
        XCTAssertEqual(before.status, 75, before.output)
        XCTAssertEqual(try serverJSON("/_test/notes").count, 0)

        // 2. Remembered from an earlier sync: reachable by it, DNS bounded, connect to it with TLS verified for the name.
        let outbox = try OutboxStore(path: home.database)
        try await outbox.rememberNoteStoreAddress("\(hole.serverAddress):\(port)", host: Self.name)
        let sync = try syncInClient("-v")
        print("sync black hole, remembered \(hole.serverAddress):\(port): exit \(sync.status) after \(Int(sync.milliseconds)) ms "
              + "(network.dns_timeout 5 s): \(sync.output)")
        XCTAssertEqual(sync.status, 0, sync.output)
        XCTAssertTrue(sync.output.contains("uploaded 3, 0 remaining"), sync.output)
        XCTAssertTrue(sync.output.contains("using the remembered address"), sync.output)
        let notes = try serverJSON("/_test/notes")
        XCTAssertEqual(notes.count, 3)
        let creates = try serverJSON("/_test/requests").filter { ($0["method"] as? String) == "createNote" }
        XCTAssertEqual(creates.count, 3, "createNote sent other than exactly once per note")

        // 3. Again: nothing left to send, still nothing duplicated.
        let again = try syncInClient()
        print("sync black hole, second run: exit \(again.status) after \(Int(again.milliseconds)) ms: \(again.output)")
        XCTAssertEqual(again.status, 0, again.output)
        XCTAssertTrue(again.output.contains("uploaded 0, 0 remaining"), again.output)
        XCTAssertEqual(try serverJSON("/_test/notes").count, 3)
    }
}
