import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif
@testable import Support
@testable import EvernoteAPI
@testable import Configuration
@testable import Network
@testable import Auth
@testable import Capture
@testable import Compose
@testable import Outbox
@testable import Diary
@testable import Sync
@testable import Watch

/// `enlog watch` in a network namespace whose link is down while notes wait: the test brings the
/// link up, and watch — woken by the kernel's rtnetlink events, not by a timer — checks
/// reachability and uploads to the SDK-based Evernote server in the namespace next door.
final class WatchNamespaceTests: XCTestCase {
    static let token = "S=s1:U=1:E=watch:C=test:P=1:A=enlog:V=2:H=watch"

    func testLinkComingUpWakesWatchWhichUploadsWithoutPolling() throws {
        try linkComingUp(ipv6: false)
    }

    /// The same with the route coming back on IPv6 only: the client gets no IPv4 address at all.
    func testIPv6OnlyLinkComingUpWakesWatchWhichUploads() throws {
        try linkComingUp(ipv6: true)
    }

    private func linkComingUp(ipv6: Bool) throws {
        try requireNamespaces()
        let python = try PythonServer.interpreter(stdlibOnly: false)
        let openssl = "/usr/bin/openssl"
        guard FileManager.default.isExecutableFile(atPath: openssl) else {
            if ProcessInfo.processInfo.environment["CI"] == "true" { return XCTFail("CI=true: openssl missing") }
            throw XCTSkip("openssl not installed")
        }
        let subnet = Int.random(in: 1...254)
        let serverAddress = ipv6 ? "fd00:214:\(subnet)::1" : "10.214.\(subnet).1"
        let clientAddress = ipv6 ? "fd00:214:\(subnet)::2" : "10.214.\(subnet).2"
        let prefix = ipv6 ? "/64" : "/24"
        // nodad: the address is usable at once (duplicate detection would hold it back a second).
        let addressOptions = ipv6 ? ["nodad"] : []
        let urlHost = ipv6 ? "[\(serverAddress)]" : serverAddress
        let server = enlogtName("wsrv"), client = enlogtName("wcli")
        var created: [String] = []
        defer { for namespace in created.reversed() { _ = try? runCommand("/usr/sbin/ip", ["netns", "del", namespace]) } }
        try ip("netns", "add", server); created.append(server)
        try ip("netns", "add", client); created.append(client)
        try ip("-n", server, "link", "add", "veth0", "type", "veth", "peer", "name", "veth0", "netns", client)
        try ip(["-n", server, "addr", "add", serverAddress + prefix, "dev", "veth0"] + addressOptions)
        for namespace in [server, client] { try ip("-n", namespace, "link", "set", "lo", "up") }
        try ip("-n", server, "link", "set", "veth0", "up")
        // The client's end stays down, without an address: offline.

        let dir = try TemporaryDirectory()
        let cert = dir.path("cert.pem"), key = dir.path("key.pem")
        let made = try runCommand(openssl, ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                                            "-days", "1", "-subj", "/CN=\(serverAddress)", "-addext", "subjectAltName=IP:\(serverAddress)"])
        XCTAssertEqual(made.status, 0, made.output)
        let port = Int.random(in: 20000...29999)
        let baseURL = "https://\(urlHost):\(port)"
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
        home.extraEnvironment["ENLOG_NETWORK_PROBES"] = "\(urlHost):\(port)"
        home.extraEnvironment["ENLOG_LOCATION_GPSD"] = "127.0.0.1:\(try freeLoopbackPort())"   // no receiver here
        try CredentialStore(path: home.directory.path("config/enlog/credentials.json")).save(Credentials(
            service: .custom, host: baseURL, authProtocol: .token, userId: 1,
            noteStoreUrl: baseURL + "/shard/s1/notestore", token: Self.token))
        for latitude in 1...3 { XCTAssertEqual(try home.run("log", "--at", "\(latitude),2", "--no-sync").status, 0) }

        let watch = try WatchProcess(home: home, wrapper: ["/usr/sbin/ip", "netns", "exec", client])
        defer { watch.child.kill() }
        XCTAssertTrue(watch.waitFor("reachability", #""trigger":"start""#), watch.child.output)
        XCTAssertTrue(watch.waitFor("network-watch"), "subscribed to network changes while notes wait")

        let linkUp = DispatchTime.now().uptimeNanoseconds
        try ip(["-n", client, "addr", "add", clientAddress + prefix, "dev", "veth0"] + addressOptions)
        try ip("-n", client, "link", "set", "veth0", "up")
        XCTAssertTrue(watch.waitFor("synced", #""uploaded":3"#, seconds: 60), watch.child.output)
        let uploadedAfter = Double(DispatchTime.now().uptimeNanoseconds - linkUp) / 1e6
        let end = watch.terminate()
        XCTAssertEqual(end.status, 0, end.output)

        let checks = end.events.filter { $0["event"] as? String == "reachability" }
        let triggers = checks.compactMap { $0["trigger"] as? String }
        let changes = end.events.filter { $0["event"] as? String == "network-change" }.count
        let timers = end.events.filter { $0["event"] as? String == "sync-timer" }.count
        print("watch namespace (\(ipv6 ? "IPv6 only" : "IPv4")): uploaded 3 notes \(Int(uploadedAfter)) ms after the link came up; "
              + "reachability checks \(triggers) after \(changes) network-change batches, \(timers) backoff timers set")
        XCTAssertEqual(triggers.first, "start")
        XCTAssertEqual(checks.first?["verdict"] as? String, "offline")
        // Every check has a cause: the start, a settled burst of network changes, or a backoff
        // timer that was set and announced; nothing polls.
        XCTAssertTrue(triggers.allSatisfy { ["start", "network", "backoff"].contains($0) }, "\(triggers)")
        XCTAssertLessThanOrEqual(triggers.filter { $0 == "network" }.count, changes)
        XCTAssertLessThanOrEqual(triggers.filter { $0 == "backoff" }.count, timers)
        let upload = try XCTUnwrap(checks.last { $0["verdict"] as? String == "reachable" })
        XCTAssertEqual(upload["trigger"] as? String, "network", "the upload came from the network event")
        XCTAssertTrue(end.events.contains { $0["event"] as? String == "network-watch"
                        && ($0["message"] as? String ?? "").contains("no longer listening") },
                      "nothing pending: the subscription ends")

        let script = "import ssl,sys,urllib.request;c=ssl.create_default_context(cafile=sys.argv[2]);c.check_hostname=False;"
            + "sys.stdout.write(urllib.request.urlopen(sys.argv[1],context=c).read().decode())"
        let notes = try runCommand("/usr/sbin/ip", ["netns", "exec", server, python, "-c", script, baseURL + "/_test/notes", cert])
        let stored = try JSONSerialization.jsonObject(with: Data(notes.output.utf8)) as? [[String: Any]]
        XCTAssertEqual(stored?.count, 3, notes.output)
    }
}
