import Foundation
import GRDB
import XCTest
@testable import ENLogKit

/// The remembered NoteStore address: stored by a sync, probed by reachability, used when DNS fails.
final class SyncAddressTests: XCTestCase {
    func testRememberedAddressMigrationAndRoundTrip() async throws {
        let dir = try TemporaryDirectory()
        let outbox = try OutboxStore(path: dir.path("outbox.sqlite"))
        let applied = try await outbox.databaseWriter.read { db in try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations") }
        XCTAssertTrue(applied.contains(SyncState.addressMigrationName), "\(applied)")
        let state = try await SyncState(writer: outbox.databaseWriter)
        let none = try await state.rememberedAddress(host: "evernote.test")
        XCTAssertNil(none)
        try await state.rememberAddress("10.0.0.1:443", host: "Evernote.TEST")
        try await state.rememberAddress("[2001:db8::1]:443", host: "evernote.test")
        let remembered = try await state.rememberedAddress(host: "EVERNOTE.test")
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

    func testAddressingPinsTheLookupOrFallsBackToTheRememberedAddress() throws {
        let endpoint = try XCTUnwrap(NoteStoreEndpoint(url: "https://Evernote.test:8443/shard/s1/notestore"))
        XCTAssertEqual(endpoint, NoteStoreEndpoint(url: "https://evernote.test:8443/x"))
        XCTAssertTrue(endpoint.isName)
        XCTAssertFalse(try XCTUnwrap(NoteStoreEndpoint(url: "https://[::1]/x")).isName)

        let found = NoteStoreAddressing.decide(endpoint: endpoint, remembered: "10.0.0.1:8443", timeout: .seconds(1)) { _, port, _ in
            ([try! ReachabilityAddress(host: "192.0.2.5", port: port), try! ReachabilityAddress(host: "2001:db8::5", port: port)], false)
        }
        XCTAssertEqual(found.resolve, ["evernote.test:8443:192.0.2.5,[2001:db8::5]"])
        let timedOut = NoteStoreAddressing.decide(endpoint: endpoint, remembered: "[2001:db8::1]:8443", timeout: .seconds(1)) { _, _, _ in ([], true) }
        XCTAssertEqual(timedOut.resolve, ["evernote.test:8443:[2001:db8::1]"])
        XCTAssertTrue(timedOut.note?.contains("remembered") ?? false, "\(timedOut)")
        let nothing = NoteStoreAddressing.decide(endpoint: endpoint, remembered: nil, timeout: .seconds(1)) { _, _, _ in ([], false) }
        XCTAssertEqual(nothing.resolve, [])
        // An address literal is never looked up.
        let literal = NoteStoreAddressing.decide(endpoint: try XCTUnwrap(NoteStoreEndpoint(url: "https://192.0.2.1/x")),
                                                 remembered: "10.0.0.1:443", timeout: .seconds(1)) { _, _, _ in
            XCTFail("looked up a literal"); return ([], false)
        }
        XCTAssertEqual(literal, NoteStoreAddressing.Decision())
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

private final class Lines: @unchecked Sendable {
    private let lock = NSLock()
    private var parts: [String] = []
    func append(_ s: String) { lock.withLock { parts.append(s) } }
    var text: String { lock.withLock { parts.joined() } }
}

private final class ManualInstant: @unchecked Sendable {
    private let lock = NSLock()
    private var value = ContinuousClock.now
    var now: ContinuousClock.Instant { lock.withLock { value } }
    func advance(_ d: Duration) { lock.withLock { value += d } }
}
