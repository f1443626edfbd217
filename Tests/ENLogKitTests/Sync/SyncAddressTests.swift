import Foundation
import Synchronization
import GRDB
import XCTest
@testable import Network
@testable import Auth
@testable import Outbox
@testable import Sync

/// The remembered NoteStore address: stored by a sync, probed by reachability, used when DNS fails.
final class SyncAddressTests: XCTestCase {
    func testRememberedAddressMigrationAndRoundTrip() async throws {
        let dir = try TemporaryDirectory()
        let outbox = try OutboxStore(path: dir.path("outbox.sqlite"))
        let applied = try await outbox.databaseWriter.read { db in try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations") }
        XCTAssertTrue(applied.contains(OutboxSchema.syncAddressMigration.identifier), "\(applied)")
        let none = try await outbox.noteStoreAddress(host: "evernote.test")
        XCTAssertNil(none)
        try await outbox.rememberNoteStoreAddress("10.0.0.1:443", host: "Evernote.TEST")
        try await outbox.rememberNoteStoreAddress("[2001:db8::1]:443", host: "evernote.test")
        let remembered = try await outbox.noteStoreAddress(host: "EVERNOTE.test")
        XCTAssertEqual(remembered, "[2001:db8::1]:443")
    }

    func testReachabilityProbesTheRememberedAddressOnlyForNames() {
        let named = SyncReachability.configuration(noteStoreURL: "https://evernote.test/shard/s1/notestore", probes: [],
                                                   budget: .seconds(1), environment: [:],
                                                   remembered: ["10.0.0.1:443", "evernote.test:443"])
        XCTAssertEqual(named.rememberedAddresses, ["10.0.0.1:443"])
        XCTAssertEqual(named.probeAddresses, ReachabilityConfiguration().probeAddresses)
        let literal = SyncReachability.configuration(noteStoreURL: "https://192.0.2.1/x", probes: ["192.0.2.9:1"],
                                                     budget: .seconds(1), environment: [:], remembered: ["10.0.0.1:443"])
        XCTAssertEqual(literal.rememberedAddresses, ["192.0.2.1:443"])
        XCTAssertEqual(literal.probeAddresses, ["192.0.2.9:1"])
    }

    func testAddressingPinsTheLookupOrFallsBackToTheRememberedAddress() async throws {
        let endpoint = try XCTUnwrap(NoteStoreEndpoint(url: "https://Evernote.test:8443/shard/s1/notestore"))
        XCTAssertEqual(endpoint, NoteStoreEndpoint(url: "https://evernote.test:8443/x"))
        XCTAssertTrue(endpoint.isName)
        XCTAssertFalse(try XCTUnwrap(NoteStoreEndpoint(url: "https://[::1]/x")).isName)

        let found = try await NoteStoreAddressing.decide(endpoint: endpoint, remembered: "10.0.0.1:8443", timeout: .seconds(60)) { _, port, _ in
            .found(["192.0.2.5", "2001:db8::5"], port: port)
        }
        XCTAssertEqual(found.resolve, ["evernote.test:8443:192.0.2.5,[2001:db8::5]"])
        let hanging = HangingResolver()
        defer { hanging.release() }
        let timedOut = try await NoteStoreAddressing.decide(endpoint: endpoint, remembered: "[2001:db8::1]:8443",
                                                            timeout: .milliseconds(100), resolver: hanging.resolver)
        XCTAssertEqual(timedOut.resolve, ["evernote.test:8443:[2001:db8::1]"])
        XCTAssertTrue(timedOut.note?.contains("did not resolve within") ?? false, "\(timedOut)")
        XCTAssertTrue(timedOut.note?.contains("remembered") ?? false, "\(timedOut)")
        let nothing = try await NoteStoreAddressing.decide(endpoint: endpoint, remembered: nil, timeout: .seconds(60)) { _, _, _ in
            NameLookup.Answer(status: EAI_NONAME, entries: [])
        }
        XCTAssertEqual(nothing.resolve, [])
        XCTAssertEqual(nothing.note, "evernote.test did not resolve; no remembered address")
        // An address literal is never looked up.
        let literal = try await NoteStoreAddressing.decide(endpoint: try XCTUnwrap(NoteStoreEndpoint(url: "https://192.0.2.1/x")),
                                                           remembered: "10.0.0.1:443", timeout: .seconds(1)) { _, _, _ in
            XCTFail("looked up a literal"); return NameLookup.Answer(status: EAI_NONAME, entries: [])
        }
        XCTAssertEqual(literal, NoteStoreAddressing.Decision())
    }

    /// `getaddrinfo` waits for up to `network.dns_timeout`: it must wait on a thread of its own, never
    /// on one of the few threads of the cooperative pool that every other task of the process shares.
    func testNoteStoreLookupBlocksNoCooperativeThread() async throws {
        let endpoint = try XCTUnwrap(NoteStoreEndpoint(url: "https://evernote.test/shard/s1/notestore"))
        let seen = Lines()
        let decision = try await NoteStoreAddressing.decide(endpoint: endpoint, remembered: nil, timeout: .seconds(60)) { _, port, _ in
            seen.append(withUnsafeCurrentTask { $0 == nil } ? "outside any task" : "on a task's thread")
            return .found(["192.0.2.5"], port: port)
        }
        XCTAssertEqual(seen.text, "outside any task")
        XCTAssertEqual(decision.resolve, ["evernote.test:443:192.0.2.5"])
    }

    /// A cancelled sync stops waiting for a hanging lookup at once (the lookup is abandoned).
    func testCancellingASyncEndsItsWaitForAHangingLookup() async throws {
        let endpoint = try XCTUnwrap(NoteStoreEndpoint(url: "https://evernote.test/shard/s1/notestore"))
        let hanging = HangingResolver()
        defer { hanging.release() }
        // A budget far longer than the test: only the cancellation can end the wait early.
        let decision = Task {
            try await NoteStoreAddressing.decide(endpoint: endpoint, remembered: nil, timeout: .seconds(600),
                                                 resolver: hanging.resolver)
        }
        let name = await hanging.firstCall()
        XCTAssertEqual(name, "evernote.test")
        decision.cancel()
        do {
            let unexpected = try await decision.value
            XCTFail("a cancelled lookup decided \(unexpected)")
        } catch is CancellationError {}
    }

    func testResolveFallbackStillRefusesPlainHTTPToANonLoopbackAddress() async {
        let client = HTTPClient(configuration: HTTPConfiguration(resolve: ["localhost:80:10.0.0.1"]))
        do {
            _ = try await client.send(HTTPRequest(url: "http://localhost/x"))
            XCTFail("plain http to 10.0.0.1 allowed")
        } catch let error as HTTPError {
            XCTAssertEqual(error, .insecureURL("localhost"))
        } catch { XCTFail("\(error)") }
    }

    func testProgressLineAndVerboseLines() {
        let box = Lines()
        let clock = ManualInstant()
        let printer = SyncProgressPrinter(terminal: true, verbose: true, write: { box.append($0) }, now: { clock.now })
        printer.handle(.started(total: 4))
        clock.advance(.seconds(2))
        printer.handle(.note(id: 7, action: .uploaded, guid: "g-7"))
        printer.finish()
        let text = box.text
        XCTAssertTrue(text.contains("sync: 0/4 notes"), text)
        XCTAssertTrue(text.contains("note 7 uploaded g-7\n"), text)
        XCTAssertTrue(text.contains("sync: 1/4 notes, about 6 s left"), text)
        XCTAssertTrue(text.hasSuffix("\r\u{1B}[K"), text)

        let pipe = Lines()
        let quiet = SyncProgressPrinter(terminal: false, verbose: false, write: { pipe.append($0) })
        quiet.handle(.started(total: 2))
        quiet.handle(.note(id: 1, action: .uploaded, guid: "g"))
        quiet.handle(.notice("x"))
        quiet.finish()
        XCTAssertEqual(pipe.text, "")
    }
}

private final class Lines: Sendable {
    private let parts = Mutex<[String]>([])
    func append(_ s: String) { parts.withLock { $0.append(s) } }
    var text: String { parts.withLock { $0.joined() } }
}

private final class ManualInstant: Sendable {
    private let value = Mutex(ContinuousClock.now)
    var now: ContinuousClock.Instant { value.withLock { $0 } }
    func advance(_ d: Duration) { value.withLock { $0 += d } }
}

/// Issue 8: `enlog reachability` probed public anycast addresses even when signed in to a host
/// whose address a sync had remembered. It checks what `sync` checks, and says which targets.
final class ReachabilityCommandTargetTests: XCTestCase {
    func testSignedInItProbesTheRememberedNoteStoreAddressAndNamesTheTargets() async throws {
        let server = try NominatimTestServer()   // any loopback listener: only its port answers
        defer { server.stop() }
        var home = try EnlogHome()
        let closed = try freeLoopbackPort()
        home.extraEnvironment["ENLOG_NETWORK_PROBES"] = "127.0.0.1:\(closed)"
        try CredentialStore(path: home.directory.path("config/enlog/credentials.json")).save(Credentials(
            service: .custom, host: "https://notestore.invalid", authProtocol: .token, userId: 1,
            noteStoreUrl: "https://notestore.invalid/shard/s1/notestore", token: "S=s1:U=1:E=r:C=t:P=1:A=enlog:V=2:H=r"))
        XCTAssertEqual(try home.run("log", "--at", "1,1", "--no-geocode", "--no-sync").status, 0)
        let outbox = try OutboxStore(path: home.database)
        try await outbox.rememberNoteStoreAddress("127.0.0.1:\(server.port)", host: "notestore.invalid")

        let text = try home.run("reachability")
        XCTAssertEqual(text.status, 0, text.standardOutput + text.standardError)
        XCTAssertEqual(text.standardOutput.split(separator: "\n").first.map(String.init),
                       "targets: NoteStore address 127.0.0.1:\(server.port); probes 127.0.0.1:\(closed)")
        // The closed probe answers too (a reset is an answer): either may win the race.
        XCTAssertTrue(text.standardOutput.contains("reachable: 127.0.0.1:"), text.standardOutput)

        let json = try home.run("reachability", "--json")
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        let targets = try XCTUnwrap(report["targets"] as? [String: Any])
        XCTAssertEqual(targets["remembered"] as? [String], ["127.0.0.1:\(server.port)"])
        XCTAssertEqual(targets["probes"] as? [String], ["127.0.0.1:\(closed)"])
        let attempted = (report["attempts"] as? [[String: Any]] ?? []).compactMap { $0["address"] as? String }
        XCTAssertTrue(attempted.contains("127.0.0.1:\(server.port)"), "the remembered address is checked: \(attempted)")
    }
}
