import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif
@testable import Support
@testable import Auth

/// `enlog serve` in a network namespace whose link is down while notes wait: the test brings the
/// link up, and serve — woken by the kernel's rtnetlink events, not by its minute timer — uploads
/// to the SDK-based Evernote server in the namespace next door (as `WatchNamespaceTests` does
/// for `watch`).
final class ServeNamespaceTests: XCTestCase {
    static let token = "S=s1:U=1:E=serve:C=test:P=1:A=enlog:V=2:H=serve"

    func testLinkComingUpMakesServeUpload() throws {
        try requireNamespaces()
        let python = try PythonServer.interpreter(stdlibOnly: false)
        let openssl = "/usr/bin/openssl"
        guard FileManager.default.isExecutableFile(atPath: openssl) else {
            if ProcessInfo.processInfo.environment["CI"] == "true" { return XCTFail("CI=true: openssl missing") }
            throw XCTSkip("openssl not installed")
        }
        let subnet = Int.random(in: 1...254)
        let serverAddress = "10.215.\(subnet).1", clientAddress = "10.215.\(subnet).2"
        let server = enlogtName("ssrv"), client = enlogtName("scli")
        var created: [String] = []
        defer { for namespace in created.reversed() { _ = try? runCommand("/usr/sbin/ip", ["netns", "del", namespace]) } }
        try ip("netns", "add", server); created.append(server)
        try ip("netns", "add", client); created.append(client)
        try ip("-n", server, "link", "add", "veth0", "type", "veth", "peer", "name", "veth0", "netns", client)
        try ip("-n", server, "addr", "add", serverAddress + "/24", "dev", "veth0")
        for namespace in [server, client] { try ip("-n", namespace, "link", "set", "lo", "up") }
        try ip("-n", server, "link", "set", "veth0", "up")
        // The client's end stays down, without an address: offline.

        let dir = try TemporaryDirectory()
        let cert = dir.path("cert.pem"), key = dir.path("key.pem")
        let made = try runCommand(openssl, ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                                            "-days", "1", "-subj", "/CN=\(serverAddress)", "-addext", "subjectAltName=IP:\(serverAddress)"])
        XCTAssertEqual(made.status, 0, made.output)
        let port = Int.random(in: 20000...29999)
        let baseURL = "https://\(serverAddress):\(port)"
        let evernote = try ChildProcess("/usr/sbin/ip", ["netns", "exec", server, python,
                                                       PythonServer.supportDirectory.appendingPathComponent("evernote_server.py").path,
                                                       "--host", serverAddress, "--port", "\(port)", "--print-port",
                                                       "--token", Self.token, "--tls-cert", cert, "--tls-key", key,
                                                       "--public-url", baseURL])
        defer { evernote.kill() }
        XCTAssertTrue(evernote.waitForOutput(containing: "PORT=", within: .seconds(20)), "evernote_server.py did not start")

        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        home.extraEnvironment["ENLOG_NETWORK_CA_FILE"] = cert
        home.extraEnvironment["ENLOG_NETWORK_PROBES"] = "\(serverAddress):\(port)"
        try CredentialStore(path: home.directory.path("config/enlog/credentials.json")).save(Credentials(
            service: .custom, host: baseURL, authProtocol: .token, userId: 1,
            noteStoreUrl: baseURL + "/shard/s1/notestore", token: Self.token))
        for latitude in 1...3 { XCTAssertEqual(try home.run("log", "--at", "\(latitude),2", "--no-sync").status, 0) }

        let pairs = home.environment.map { "\($0.key)=\($0.value)" }.sorted()
        let serve = try ChildProcess("/usr/sbin/ip", ["netns", "exec", client, "/usr/bin/env", "-i"] + pairs
                                     + [Subprocess.enlog.path, "serve", "--listen", "127.0.0.1:0", "--json", "-v"])
        defer { if serve.isRunning { kill(serve.pid, SIGKILL); _ = serve.finish() } }
        // At start the notes waiting are tried, offline; then serve listens for the network.
        XCTAssertTrue(serve.waitForOutput(containing: #""trigger":"start""#, within: .seconds(60)), serve.output)
        XCTAssertTrue(serve.waitForOutput(containing: "listening for network changes", within: .seconds(60)), serve.output)

        try ip("-n", client, "addr", "add", clientAddress + "/24", "dev", "veth0")
        try ip("-n", client, "link", "set", "veth0", "up")
        XCTAssertTrue(serve.waitForOutput(within: .seconds(60)) { $0.contains(#""event":"synced""#) && $0.contains(#""uploaded":3"#) }, serve.output)
        kill(serve.pid, SIGTERM)
        let end = serve.finish()
        XCTAssertEqual(end.status, 0, end.output)

        let events = end.output.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let offline = try XCTUnwrap(events.first { $0["event"] as? String == "reachability" }, end.output)
        XCTAssertEqual(offline["trigger"] as? String, "start")
        XCTAssertEqual(offline["verdict"] as? String, "offline")
        XCTAssertTrue(events.contains { $0["event"] as? String == "network-change" }, end.output)
        let synced = try XCTUnwrap(events.first { $0["event"] as? String == "synced" }, end.output)
        XCTAssertEqual(synced["uploaded"] as? Int, 3)
        // The minute timer's own attempts say "timer": this one came from the network event.
        XCTAssertTrue((synced["trigger"] as? String)?.hasPrefix("network") == true, "\(synced)")

        let script = "import ssl,sys,urllib.request;c=ssl.create_default_context(cafile=sys.argv[2]);c.check_hostname=False;"
            + "sys.stdout.write(urllib.request.urlopen(sys.argv[1],context=c).read().decode())"
        let notes = try runCommand("/usr/sbin/ip", ["netns", "exec", server, python, "-c", script, baseURL + "/_test/notes", cert])
        let stored = try JSONSerialization.jsonObject(with: Data(notes.output.utf8)) as? [[String: Any]]
        XCTAssertEqual(stored?.count, 3, notes.output)
    }
}
