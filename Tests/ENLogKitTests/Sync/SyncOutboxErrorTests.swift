import Foundation
import GRDB
import XCTest
@testable import EvernoteAPI
@testable import Capture
@testable import Compose
@testable import Outbox
@testable import Sync

/// A database failure during a sync or a geocode lookup is the outbox's own error (locked: 75),
/// never a service failure, and no note is marked wrongly.
final class SyncOutboxErrorTests: XCTestCase {
    static let token = "S=s1:U=1:E=fast:C=test:P=1:A=enlog:V=2:H=mem"

    /// Another connection holding the outbox's write lock (as another process would).
    final class WriteLock {
        let queue: DatabaseQueue

        init(path: String) throws {
            var configuration = Configuration()
            configuration.allowsUnsafeTransactions = true   // the transaction outlives one access: that is the point
            queue = try DatabaseQueue(path: path, configuration: configuration)
            try queue.writeWithoutTransaction { db in try db.execute(sql: "BEGIN IMMEDIATE") }
        }

        func release() throws {
            try queue.writeWithoutTransaction { db in try db.execute(sql: "COMMIT") }
        }
    }

    func testASyncOnALockedOutboxReportsTheOutboxLockedAndMarksNothing() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("outbox.sqlite")
        let outbox = try OutboxStore(path: path, busyTimeout: 0.2)
        let fix = try Fix(latitude: 10, longitude: 20, timestamp: Date(), source: .manual)
        let note = try await outbox.enqueue(fix: fix, note: try NoteRenderer(style: NoteStyle()).render(fix: fix, place: Place(address: "Marunouchi, Tokyo")))
        // Left `sending` by a sync that died: this run must look it up, which it records first.
        try await outbox.markSending(note.id!)
        let evernote = InProcessEvernote(token: Self.token)
        func engine(clock: @escaping @Sendable () -> Date = { Date() }) -> SyncEngine {
            SyncEngine(outbox: outbox, noteStoreURL: "https://in-process.invalid/shard/s1/notestore", token: Self.token,
                       makeClient: { _, token in NoteStoreClient(transport: evernote, authenticationToken: token) }, clock: clock)
        }

        let lock = try WriteLock(path: path)
        do {
            let summary = try await engine().run()
            XCTFail("a sync on a locked outbox finished: \(summary)")
        } catch let error as OutboxError {
            XCTAssertEqual(error, .locked(path: path, waited: 0.2))
        } catch {
            XCTFail("not the outbox's error: \(type(of: error)) \(error)")
        }
        try lock.release()

        let unchanged = try await outbox.note(id: note.id!)
        XCTAssertEqual(unchanged.state, .sending, "still waiting for its lookup")
        XCTAssertTrue(evernote.notes.isEmpty)
        // Once the lock is gone the note goes, exactly once: looked up (not there), due again
        // (a minute on, so that no retry time rounded to the millisecond is still ahead), created.
        let summary = try await engine(clock: { Date().addingTimeInterval(60) }).run()
        XCTAssertEqual(summary.uploaded + summary.alreadyPresent, 1, "\(summary)")
        XCTAssertEqual(evernote.notes.count, 1)
        let synced = try await outbox.note(id: note.id!)
        XCTAssertEqual(synced.state, .synced)
    }

    func testTheGeocodeCacheOnALockedOutboxReportsTheOutboxLocked() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("outbox.sqlite")
        let cache = GeocodeCache(outbox: try OutboxStore(path: path, busyTimeout: 0.2))
        let lock = try WriteLock(path: path)
        defer { try? lock.release() }
        let key = cache.key(latitude: 35.6812, longitude: 139.7671, language: "en")
        await assertThrows(OutboxError.locked(path: path, waited: 0.2)) { try await cache.store([0x7b, 0x7d], for: key) }
        await assertThrows(OutboxError.locked(path: path, waited: 0.2)) {
            try await cache.reserveRequestSlot(minimumInterval: 1, latestStart: Date().addingTimeInterval(10))
        }
    }
}
