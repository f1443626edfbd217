import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

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
        let network = try OfflineEvernoteNamespaces(role: "w", network: 214, ipv6: ipv6, token: Self.token)
        let client = network.client
        var home = network.home
        home.extraEnvironment["ENLOG_LOCATION_GPSD"] = "127.0.0.1:\(try freeLoopbackPort())"   // no receiver here

        let watch = try WatchProcess(home: home, wrapper: ["/usr/sbin/ip", "netns", "exec", client])
        defer { watch.child.kill() }
        XCTAssertTrue(watch.waitFor("reachability", #""trigger":"start""#), watch.child.output)
        XCTAssertTrue(watch.waitFor("network-watch"), "subscribed to network changes while notes wait")

        let linkUp = DispatchTime.now().uptimeNanoseconds
        try network.bringClientUp()
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

        let stored = try network.storedNotes()
        XCTAssertEqual(stored.notes?.count, 3, stored.output)
    }
}
