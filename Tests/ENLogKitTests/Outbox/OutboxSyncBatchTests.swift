@testable import Capture
@testable import Compose
@testable import Outbox
import GRDB
import XCTest
@testable import Support

/// The sync engine's batch transitions (`markSending(batch:)`, `markSynced(_:)`, `releaseUnsent`)
/// leave every note exactly as the one-note transitions do, and claim only what is still there
/// to claim.
final class OutboxSyncBatchTests: XCTestCase {
    var directory: TemporaryDirectory!

    override func setUpWithError() throws {
        directory = try TemporaryDirectory()
    }

    override func tearDown() {
        directory = nil
    }

    func queued(_ store: OutboxStore, _ count: Int, at time: Date) async throws -> [Int64] {
        var ids: [Int64] = []
        for index in 0..<count {
            let fix = try Fix(latitude: 1, longitude: 2, timestamp: time, source: .manual)
            let note = try await store.enqueue(fix: fix, note: NoteDraft(title: "n\(index)", content: "c\(index)", tags: ["a", "b \"c\""]),
                                               now: time)
            ids.append(note.id!)
        }
        return ids
    }

    func testBatchClaimMatchesTheOneNoteClaimAndSkipsWhatCannotBeClaimed() async throws {
        let store = try OutboxStore(path: directory.path("outbox.sqlite"))
        let logged = Date(timeIntervalSince1970: 1_700_000_000.25)
        let ids = try await queued(store, 5, at: logged)
        let now = Date(timeIntervalSince1970: 1_700_000_100.5)
        _ = try await store.markSending(ids[1], now: now)       // already sending: not claimed again
        _ = try await store.markFailed(ids[1], reason: "503", now: now)
        _ = try await store.markSending(ids[1], now: now)
        _ = try await store.drop(ids[3])                         // gone
        let oneByOne = try await store.markSending(ids[4], now: now)
        _ = try await store.markFailed(ids[4], reason: "timeout", now: now)   // failed: claimed again

        let claimed = try await store.markSending(batch: ids, now: now)

        XCTAssertEqual(claimed.map(\.id), [ids[0], ids[2], ids[4]])
        for note in claimed {
            let stored = try await store.note(id: note.id!)
            XCTAssertEqual(note, stored, "the claimed note is the stored row")
            XCTAssertEqual(note.state, .sending)
            XCTAssertEqual(note.tags, ["a", "b \"c\""])
            XCTAssertEqual(note.lastAttemptAt, now)
            XCTAssertEqual(note.updatedAt, now)
            XCTAssertNil(note.nextAttemptAt)
        }
        XCTAssertEqual(claimed[0].attempts, 1)
        XCTAssertEqual(claimed[2].attempts, oneByOne.attempts + 1)
        let stillSending = try await store.note(id: ids[1])
        XCTAssertEqual(stillSending.attempts, 2, "a note already sending is left alone")
    }

    func testBatchResultsAndReleaseMatchTheOneNoteTransitions() async throws {
        let store = try OutboxStore(path: directory.path("outbox.sqlite"))
        let logged = Date(timeIntervalSince1970: 1_700_000_000)
        let ids = try await queued(store, 4, at: logged)
        let sent = Date(timeIntervalSince1970: 1_700_000_050.125)
        _ = try await store.markSending(batch: ids, now: sent)
        try await store.setNeedsLookup(ids[0], true)
        let done = Date(timeIntervalSince1970: 1_700_000_060.75)
        let single = try await store.markSynced(ids[1], guid: "g1", usn: 7, now: done)

        try await store.markSynced([.init(id: ids[0], guid: "g0", usn: 6)], now: done)
        try await store.releaseUnsent([ids[2]], now: done)

        let first = try await store.note(id: ids[0])
        XCTAssertEqual(first.state, .synced)
        XCTAssertEqual(first.guid, "g0")
        XCTAssertEqual(first.usn, 6)
        XCTAssertEqual(first.updatedAt, single.updatedAt)
        let lookups = try await store.notesNeedingLookup()
        XCTAssertFalse(lookups.contains(ids[0]), "a synced note needs no lookup")
        let released = try await store.note(id: ids[2])
        XCTAssertEqual(released.state, .pending)
        XCTAssertEqual(released.attempts, 0, "an attempt that never left is not counted")
        XCTAssertEqual(released.updatedAt, done)
        let untouched = try await store.note(id: ids[3])
        XCTAssertEqual(untouched.state, .sending)
        XCTAssertEqual(untouched.updatedAt, sent)
    }
}
