import Foundation
import XCTest
@testable import Network
#if canImport(Glibc)
import Glibc
#endif

final class ReachabilityParsingTests: XCTestCase {
    func testAcceptsIPv4AndIPv6Literals() throws {
        let v4 = try ReachabilityChecker.parse(address: "192.0.2.10:443")
        XCTAssertEqual(v4.family, .ipv4)
        XCTAssertEqual(v4.host, "192.0.2.10")
        XCTAssertEqual(v4.port, 443)
        let v6 = try ReachabilityChecker.parse(address: "[2001:db8::1]:8443")
        XCTAssertEqual(v6.family, .ipv6)
        XCTAssertEqual(v6.host, "2001:db8::1")
        XCTAssertEqual(v6.port, 8443)
        XCTAssertEqual(v6.description, "[2001:db8::1]:8443")
        XCTAssertEqual(try ReachabilityChecker.parse(address: " 127.0.0.1:1 ").description, "127.0.0.1:1")
    }

    func testRejectsHostNamesAtTheBoundary() {
        assertThrows(ReachabilityError.notAnAddress("evernote.com:443")) {
            _ = try ReachabilityChecker.parse(address: "evernote.com:443")
        }
        assertThrows(ReachabilityError.notAnAddress("localhost:80")) {
            _ = try ReachabilityChecker.parse(address: "localhost:80")
        }
        assertThrows(ReachabilityError.notAnAddress("[www.evernote.com]:443")) {
            _ = try ReachabilityChecker.parse(address: "[www.evernote.com]:443")
        }
        // Not literals either: shorthand forms inet_aton would take, zone ids.
        assertThrows(ReachabilityError.notAnAddress("10.1:443")) { _ = try ReachabilityChecker.parse(address: "10.1:443") }
        assertThrows(ReachabilityError.notAnAddress("[fe80::1%eth0]:443")) {
            _ = try ReachabilityChecker.parse(address: "[fe80::1%eth0]:443")
        }
        let error = ReachabilityError.notAnAddress("evernote.com:443")
        XCTAssertFalse(error.reason.contains("\n"))
        XCTAssertNotNil(error.recoverySuggestion)
    }

    func testRejectsMissingAndBadPorts() {
        assertThrows(ReachabilityError.missingPort("1.1.1.1")) { _ = try ReachabilityChecker.parse(address: "1.1.1.1") }
        assertThrows(ReachabilityError.missingPort("2001:db8::1")) { _ = try ReachabilityChecker.parse(address: "2001:db8::1") }
        assertThrows(ReachabilityError.missingPort("[2001:db8::1]")) { _ = try ReachabilityChecker.parse(address: "[2001:db8::1]") }
        assertThrows(ReachabilityError.invalidPort("1.1.1.1:0")) { _ = try ReachabilityChecker.parse(address: "1.1.1.1:0") }
        assertThrows(ReachabilityError.invalidPort("1.1.1.1:70000")) { _ = try ReachabilityChecker.parse(address: "1.1.1.1:70000") }
        assertThrows(ReachabilityError.invalidPort("1.1.1.1:+80")) { _ = try ReachabilityChecker.parse(address: "1.1.1.1:+80") }
    }

    func testValidateRejectsAConfiguredHostName() {
        let configuration = ReachabilityConfiguration(probeAddresses: ["127.0.0.1:1"], rememberedAddresses: ["evernote.com:443"])
        assertThrows(ReachabilityError.notAnAddress("evernote.com:443")) { try ReachabilityChecker.validate(configuration) }
    }

    func testProxyParsing() throws {
        XCTAssertEqual(try ProxyTarget(parsing: "http://192.0.2.7:3128/"),
                       .address(try ReachabilityAddress(host: "192.0.2.7", port: 3128)))
        XCTAssertEqual(try ProxyTarget(parsing: "http://user:secret@[2001:db8::7]:8080"),
                       .address(try ReachabilityAddress(host: "2001:db8::7", port: 8080)))
        XCTAssertEqual(try ProxyTarget(parsing: "proxy.corp.example"), .name("proxy.corp.example", 1080))
        XCTAssertEqual(try ProxyTarget(parsing: "https://proxy.corp.example"), .name("proxy.corp.example", 443))
        XCTAssertEqual(ReachabilityConfiguration.proxy(from: ["https_proxy": " "]), nil)
        XCTAssertEqual(ReachabilityConfiguration.proxy(from: ["HTTPS_PROXY": "http://10.0.0.1:3128"]), "http://10.0.0.1:3128")
        XCTAssertEqual(ReachabilityConfiguration().budget, .milliseconds(1500))
    }
}

/// In-process checks against loopback only.
final class ReachabilityLoopbackTests: XCTestCase {
    typealias Listener = LoopbackSocket

    func testListenerOnLoopbackIsReachable() async throws {
        let listener = try Listener()
        let report = await ReachabilityChecker.check(
            ReachabilityConfiguration(probeAddresses: ["127.0.0.1:\(listener.port)"]))
        XCTAssertEqual(report.verdict, .reachable(try ReachabilityAddress(host: "127.0.0.1", port: listener.port)))
        XCTAssertEqual(report.attempts.map(\.phase), [.route, .tcp])
        XCTAssertEqual(report.attempts.last?.outcome, .connected)
        print("loopback listener: \(report.json())")
    }

    func testClosedLoopbackPortIsRefusedWhichMeansTheNetworkAnswered() async throws {
        // Bound but not listening: nothing else can take the port while the test runs, and a SYN gets a RST.
        let closed = try Listener(listening: false)
        let report = await ReachabilityChecker.check(
            ReachabilityConfiguration(probeAddresses: ["127.0.0.1:\(closed.port)"]))
        XCTAssertEqual(report.verdict, .reachable(try ReachabilityAddress(host: "127.0.0.1", port: closed.port)))
        XCTAssertEqual(report.attempts.last?.outcome, .refused)
        XCTAssertEqual(report.attempts.last?.errorCode, ECONNREFUSED)
        XCTAssertTrue(report.json().contains("\"outcome\":\"refused\""))
    }

    func testRememberedAddressesComeFirstAndDuplicatesAreProbedOnce() async throws {
        let listener = try Listener()
        let address = "127.0.0.1:\(listener.port)"
        let report = await ReachabilityChecker.check(
            ReachabilityConfiguration(probeAddresses: [address], rememberedAddresses: [address]))
        XCTAssertEqual(report.attempts.filter { $0.phase == .route }.count, 1)
        XCTAssertEqual(report.verdict.name, "reachable")
    }

    func testProxyGivenAsLiteralIsProbedInsteadOfTheProbes() async throws {
        let proxy = try Listener()
        let closed = try Listener(listening: false)
        let report = await ReachabilityChecker.check(ReachabilityConfiguration(
            probeAddresses: ["127.0.0.1:\(closed.port)"], proxy: "http://127.0.0.1:\(proxy.port)"))
        XCTAssertEqual(report.verdict, .reachable(try ReachabilityAddress(host: "127.0.0.1", port: proxy.port)))
        XCTAssertNil(report.resolvedProxyName)
        XCTAssertFalse(report.attempts.contains { $0.address.hasSuffix(":\(closed.port)") })
    }

    func testProxyGivenByNameIsResolvedAndSaysSo() async throws {
        // "localhost" comes from /etc/hosts (nsswitch "files"): no DNS traffic.
        let proxy = try Listener()
        let report = await ReachabilityChecker.check(ReachabilityConfiguration(proxy: "http://localhost:\(proxy.port)"))
        XCTAssertEqual(report.resolvedProxyName, "localhost")
        XCTAssertFalse(report.notes.isEmpty)
        XCTAssertEqual(report.verdict.name, "reachable")
    }
}

/// Real network namespaces: only namespaces created here, only addresses inside them.
final class ReachabilityNamespaceTests: XCTestCase {
    func testNamespaceWithoutRoutesIsOfflineByTheRouteCheckAlone() throws {
        try requireNamespaces()
        let probe = reachProbeCommand()
        let namespace = enlogtName("off")
        try ip("netns", "add", namespace)
        addTeardownBlock { _ = try? runCommand("/usr/sbin/ip", ["netns", "del", namespace]) }

        for state in ["lo down", "lo up"] {
            if state == "lo up" { try ip("-n", namespace, "link", "set", "lo", "up") }
            let result = try ProbeResult(runCommand("/usr/sbin/ip", [
                "netns", "exec", namespace] + probe + ["--no-proxy", "--probe", "192.0.2.10:443"]))
            print("offline namespace (\(state)): verdict \(result.verdict) in \(result.elapsedMilliseconds) ms "
                  + "(process wall time \(Int(result.wallMilliseconds)) ms); \(result.raw)")
            XCTAssertEqual(result.verdict, "offline", result.raw)
            XCTAssertEqual(result.status, 75)
            XCTAssertTrue(result.decidedByRouteCheck, result.raw)
            XCTAssertEqual(result.outcomes(phase: "tcp"), [])
            XCTAssertEqual(result.outcomes(phase: "route"), ["noRoute"])
        }
    }

    func testDNSBlackHoleDoesNotSlowTheProbe() throws {
        try requireNamespaces()
        let probe = reachProbeCommand()
        let hole = try DNSBlackHole()
        defer { hole.tearDown() }
        addTeardownBlock { hole.tearDown() }
        try hole.build()

        // 1. The resolver in the client namespace hangs: its name server's port 53 is dropped.
        let dns = try runCommand("/usr/bin/timeout", ["3", "/usr/sbin/ip", "netns", "exec", hole.client,
                                                      "getent", "hosts", "example.invalid"])
        print("black hole: getent hosts example.invalid -> exit \(dns.status) after \(Int(dns.milliseconds)) ms "
              + "(124 = killed by timeout 3)")
        XCTAssertNotEqual(dns.status, 0, "getent answered: \(dns.output)")

        // 2. The same namespace, probed by address: reachable at once.
        let open = try ProbeResult(runCommand("/usr/sbin/ip", ["netns", "exec", hole.client] + probe + ["--no-proxy",
                                                               "--probe", "\(hole.serverAddress):\(hole.openPort)"]))
        print("black hole: reach-probe open port -> \(open.verdict) in \(open.elapsedMilliseconds) ms "
              + "(wall \(Int(open.wallMilliseconds)) ms) vs getent \(Int(dns.milliseconds)) ms; \(open.raw)")
        XCTAssertEqual(open.verdict, "reachable", open.raw)
        XCTAssertEqual(open.address, "\(hole.serverAddress):\(hole.openPort)")
        XCTAssertEqual(open.outcomes(phase: "tcp"), ["connected"])

        // 3. A port whose SYNs are dropped: route exists, nothing answers -> noUplink after the budget.
        let dropped = try ProbeResult(runCommand("/usr/sbin/ip", ["netns", "exec", hole.client] + probe + ["--no-proxy",
                                                                  "--probe", "\(hole.serverAddress):\(hole.droppedPort)"]))
        print("black hole: reach-probe dropped port -> \(dropped.verdict) in \(dropped.elapsedMilliseconds) ms "
              + "(budget 1500 ms); \(dropped.raw)")
        XCTAssertEqual(dropped.verdict, "noUplink", dropped.raw)
        XCTAssertEqual(dropped.status, 75)
        XCTAssertEqual(dropped.outcomes(phase: "route"), ["routed"])
        XCTAssertEqual(dropped.outcomes(phase: "tcp"), ["timedOut"])

        // 4. In parallel: a dropped address first does not delay the answering one.
        let both = try ProbeResult(runCommand("/usr/sbin/ip", ["netns", "exec", hole.client] + probe + ["--no-proxy",
                                                               "--probe", "\(hole.serverAddress):\(hole.droppedPort)",
                                                               "--probe", "\(hole.serverAddress):\(hole.openPort)"]))
        print("black hole: dropped + open in parallel -> \(both.verdict) in \(both.elapsedMilliseconds) ms; \(both.raw)")
        XCTAssertEqual(both.address, "\(hole.serverAddress):\(hole.openPort)")
        XCTAssertEqual(both.outcomes(phase: "tcp"), ["abandoned", "connected"])

        // 5. A proxy given by name: the one lookup is bounded by the same budget.
        let named = try ProbeResult(runCommand("/usr/sbin/ip", ["netns", "exec", hole.client] + probe + [
                                                                "--proxy", "http://proxy.example.invalid:3128"]))
        print("black hole: proxy by name -> \(named.verdict) in \(named.elapsedMilliseconds) ms "
              + "(lookup abandoned at the budget); \(named.raw)")
        XCTAssertEqual(named.verdict, "noUplink", named.raw)
        XCTAssertTrue(named.raw.contains("did not resolve within the budget"), named.raw)
    }
}

/// Two namespaces joined by a veth pair, created inside the namespaces (nothing in the host's):
/// server 10.213.X.1 (+ .53, whose port 53 an nft rule drops) runs a TCP listener; client 10.213.X.2
/// routes by default via the server and uses 10.213.X.53 as its name server.
final class DNSBlackHole {
    let suffix = String(UInt32.random(in: 0...0xFF_FFFF), radix: 16)
    let subnet = Int.random(in: 1...254)
    let openPort = Int.random(in: 20000...29999)
    var droppedPort: Int { openPort + 1 }
    var server: String { "enlogt-srv-\(suffix)" }
    var client: String { "enlogt-cli-\(suffix)" }
    var serverAddress: String { "10.213.\(subnet).1" }
    var clientAddress: String { "10.213.\(subnet).2" }
    var nameServer: String { "10.213.\(subnet).53" }
    var resolvDirectory: String { "/etc/netns/\(client)" }
    private var listener: ChildProcess?
    private var created: [String] = []
    private var tornDown = false

    init() throws {}

    func build() throws {
        try ip("netns", "add", server); created.append(server)
        try ip("netns", "add", client); created.append(client)
        try ip("-n", server, "link", "add", "veth0", "type", "veth", "peer", "name", "veth0", "netns", client)
        try ip("-n", server, "addr", "add", "\(serverAddress)/24", "dev", "veth0")
        try ip("-n", server, "addr", "add", "\(nameServer)/24", "dev", "veth0")
        try ip("-n", client, "addr", "add", "\(clientAddress)/24", "dev", "veth0")
        for namespace in [server, client] {
            try ip("-n", namespace, "link", "set", "lo", "up")
            try ip("-n", namespace, "link", "set", "veth0", "up")
        }
        try ip("-n", client, "route", "add", "default", "via", serverAddress)

        let rules = """
        table inet enlogt-\(suffix) {
            chain input {
                type filter hook input priority 0; policy accept;
                udp dport 53 drop
                tcp dport { 53, \(droppedPort) } drop
            }
        }
        """
        let rulesFile = NSTemporaryDirectory() + "enlogt-\(suffix).nft"
        try rules.write(toFile: rulesFile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: rulesFile) }
        let nft = try runCommand("/usr/sbin/ip", ["netns", "exec", server, "/usr/sbin/nft", "-f", rulesFile])
        guard nft.status == 0 else { XCTFail("nft: \(nft.output)"); throw NamespaceUnavailable(message: nft.output) }

        try FileManager.default.createDirectory(atPath: resolvDirectory, withIntermediateDirectories: true)
        try "nameserver \(nameServer)\n".write(toFile: resolvDirectory + "/resolv.conf", atomically: true, encoding: .utf8)

        let python = FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") ? "/usr/bin/python3" : "python3"
        let script = "import socket,time\n"
            + "s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
            + "s.bind(('\(serverAddress)', \(openPort))); s.listen(64); print('ready', flush=True)\n"
            + "while True:\n    c,_=s.accept(); c.close()\n"
        let child = try ChildProcess("/usr/sbin/ip", ["netns", "exec", server, python, "-c", script],
                                     environment: ChildProcess.cleanEnvironment)
        listener = child
        guard child.waitForOutput(containing: "ready") else {
            XCTFail("listener did not start")
            throw NamespaceUnavailable(message: "listener did not start")
        }
    }

    /// Idempotent; runs on success and failure alike.
    func tearDown() {
        guard !tornDown else { return }
        tornDown = true
        listener?.kill()
        listener = nil
        for namespace in created.reversed() {   // deleting a namespace destroys its veth end and nft table
            _ = try? runCommand("/usr/sbin/ip", ["netns", "del", namespace])
        }
        try? FileManager.default.removeItem(atPath: resolvDirectory)
    }
}
