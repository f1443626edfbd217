import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// `enlog serve` in a network namespace whose link is down while notes wait: the test brings the
/// link up, and serve — woken by the kernel's rtnetlink events, not by its minute timer — uploads
/// to the SDK-based Evernote server in the namespace next door (as `WatchNamespaceTests` does
/// for `watch`).
final class ServeNamespaceTests: XCTestCase {
    static let token = "S=s1:U=1:E=serve:C=test:P=1:A=enlog:V=2:H=serve"

    func testLinkComingUpMakesServeUpload() throws {
        let network = try OfflineEvernoteNamespaces(role: "s", network: 215, token: Self.token)
        let client = network.client, home = network.home

        let pairs = home.environment.map { "\($0.key)=\($0.value)" }.sorted()
        let serve = try ChildProcess("/usr/sbin/ip", ["netns", "exec", client, "/usr/bin/env", "-i"] + pairs
                                     + [Subprocess.enlog.path, "serve", "--listen", "127.0.0.1:0", "--json", "-v"])
        defer { if serve.isRunning { kill(serve.pid, SIGKILL); _ = serve.finish() } }
        // At start the notes waiting are tried, offline; then serve listens for the network.
        XCTAssertTrue(serve.waitForOutput(containing: #""trigger":"start""#, within: .seconds(60)), serve.output)
        XCTAssertTrue(serve.waitForOutput(containing: "listening for network changes", within: .seconds(60)), serve.output)

        try network.bringClientUp()
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

        let stored = try network.storedNotes()
        XCTAssertEqual(stored.notes?.count, 3, stored.output)
    }
}
