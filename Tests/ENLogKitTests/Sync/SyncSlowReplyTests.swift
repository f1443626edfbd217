import Foundation
import XCTest
@testable import EvernoteAPI
@testable import Network
@testable import Sync

/// A reply slower than the client's timeout: the request may have been stored, so the note must
/// be looked up, not created again.
final class SyncSlowReplyTests: XCTestCase {
    func testAReplySlowerThanTheTimeoutIsLookedUpNotDuplicated() async throws {
        let f = try SyncFixture()
        let notes = try await f.enqueue(2)
        try await f.control("/_test/inject?kind=delay&ms=3000&method=createNote&match=\(notes[0].uid)")
        let impatient: SyncEngine.ClientFactory = { url, token in
            let http = HTTPClient(configuration: HTTPConfiguration(totalTimeout: .seconds(1)))
            return NoteStoreClient(transport: ThriftHTTPTransport(url: url, client: http), authenticationToken: token)
        }
        let first = try await SyncEngine(outbox: f.outbox, noteStoreURL: f.noteStoreURL, token: SyncFixture.token,
                                         makeClient: impatient, clock: { [clock = f.clock] in clock.now }).run()
        XCTAssertEqual(first.uploaded + first.failed, 2, "\(first)")
        XCTAssertGreaterThanOrEqual(first.failed, 1, "the slow createNote timed out: \(first)")
        // Let the slow request finish on the server, then retry once the backoff has passed.
        try await waitUntil("the server stored the slow note") { try await f.serverUIDs().contains(notes[0].uid) }
        f.clock.advance(6 * 3600)
        _ = try await f.engine().run()
        let uids = try await f.serverUIDs()
        XCTAssertEqual(uids.count, 2)
        XCTAssertEqual(Set(uids), Set(notes.map(\.uid)), "each note exactly once")
        let synced = try await f.outbox.counts()[.synced]
        XCTAssertEqual(synced, 2)
    }
}
