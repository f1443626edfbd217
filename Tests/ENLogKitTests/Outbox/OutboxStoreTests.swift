@testable import Capture
@testable import Compose
@testable import Outbox
import GRDB
import XCTest

final class OutboxStoreTests: XCTestCase {
    var directory: TemporaryDirectory!
    var store: OutboxStore!
    let fixTime = Date(timeIntervalSince1970: 1_710_000_000)

    override func setUpWithError() throws {
        directory = try TemporaryDirectory()
        // In memory where the file is not the point; the tests of the file open it (`onFile`).
        store = try OutboxStore(DatabaseQueue())
    }

    /// The store on a file, for the tests about the file itself.
    func onFile() throws -> String {
        let path = directory.path("nested/deeper/outbox.sqlite")
        store = try OutboxStore(path: path)
        return path
    }

    override func tearDown() {
        store = nil
        directory = nil
    }

    func sampleFix(_ offset: TimeInterval = 0) throws -> Fix {
        try Fix(latitude: 48.1486, longitude: 11.5783, altitude: 521.2, horizontalAccuracy: 4.5,
                speed: 1.39, course: 54.1, timestamp: fixTime.addingTimeInterval(offset), source: .gpsd)
    }

    func draft(_ title: String = "Marienplatz", uid: String = UUID().uuidString) -> NoteDraft {
        NoteDraft(uid: uid, title: title, content: "<en-note>\(title)</en-note>", notebookName: "Diary",
                  tags: ["LocationHistory", "München & Umgebung"], placeName: "Munich",
                  subjectDate: fixTime, source: "enlog", sourceApplication: "enlog/0.1",
                  account: "sandbox.evernote.com/alice")
    }

    @discardableResult
    func enqueue(_ title: String = "note", offset: TimeInterval = 0) async throws -> OutboxNote {
        try await store.enqueue(fix: try sampleFix(offset), note: draft(title))
    }

    // MARK: Schema

    func testMigratesFromEmptyAndReopens() async throws {
        let path = try onFile()
        XCTAssertTrue(FileManager.default.fileExists(atPath: path), "parent directories created")
        try await store.databaseWriter.read { db in
            XCTAssertEqual(try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations"), ["v1", "v2-geocode-cache", "sync-v1", "sync-v2", "v3-geocode-slot-clock", "v4-resources", "v5-digests", "v6-diary", "v7-enex-export", "v8-history-import", "v9-places", "day-zones-v1", "day-names-place-sources", "day-moves-v1", "fix-identity-v1", "devices-v1", "digest-devices-v1", "device-index-own-v1", "device-index-unique-v1", "phone-diary-v1"])
            XCTAssertTrue(try db.tableExists("syncAddress"))
            XCTAssertTrue(try db.tableExists("visit"))
            XCTAssertTrue(try db.columns(in: "fix").contains { $0.name == "device" })
            XCTAssertTrue(try db.tableExists("fix"))
            XCTAssertTrue(try db.tableExists("geocodeCache"))
            XCTAssertTrue(try db.tableExists("note"))
            XCTAssertEqual(try String.fetchOne(db, sql: "PRAGMA journal_mode"), "wal")
            XCTAssertEqual(try Int.fetchOne(db, sql: "PRAGMA foreign_keys"), 1)
            XCTAssertEqual(try Int.fetchOne(db, sql: "PRAGMA synchronous"), 2, "FULL")
            let indexes = try db.indexes(on: "note").map(\.name)
            XCTAssertTrue(indexes.contains("note_on_state_id"), "\(indexes)")
            XCTAssertTrue(try db.indexes(on: "note").contains { $0.columns == ["fixId"] })
            XCTAssertTrue(try db.indexes(on: "note").contains { $0.columns == ["uid"] && $0.isUnique })
        }
        let writerTimeout = try await store.databaseWriter.write { db in try Int.fetchOne(db, sql: "PRAGMA busy_timeout") }
        XCTAssertEqual(writerTimeout, 5000)
        try await enqueue()
        store = nil
        let reopened = try OutboxStore(path: path)
        let counts = try await reopened.counts()
        XCTAssertEqual(counts[.pending], 1)
    }

    func testRefusesSchemaFromNewerVersion() async throws {
        let path = try onFile()
        try await store.databaseWriter.write { db in
            try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99')")
        }
        store = nil
        XCTAssertThrowsError(try OutboxStore(path: path)) { error in
            XCTAssertEqual(error as? OutboxError, .newerSchema(path: path))
        }
    }

    /// A database the caller opened (GRDB's `AppDatabase` way): set up as an outbox, and refused
    /// when it is another program's, as a file would be.
    func testAnOutboxOnADatabaseTheCallerOpened() async throws {
        let queue = try DatabaseQueue()
        let inMemory = try OutboxStore(queue)
        let note = try await inMemory.enqueue(fix: try sampleFix(), note: draft())
        let stored = try await inMemory.note(id: note.id!)
        XCTAssertEqual(stored.title, "Marienplatz")
        let stamp = try await queue.read { db in try Int32.fetchOne(db, sql: "PRAGMA application_id") }
        XCTAssertEqual(stamp, OutboxIdentity.applicationID)
        // Opened again on the same database: already set up, nothing lost.
        let again = try await OutboxStore(queue).counts()
        XCTAssertEqual(again[.pending], 1)

        let foreign = try DatabaseQueue()
        try await foreign.write { db in try db.execute(sql: "CREATE TABLE recipes (name TEXT)") }
        XCTAssertThrowsError(try OutboxStore(foreign)) { error in
            guard case .foreign = error as? OutboxError else { return XCTFail("\(error)") }
        }
    }

    // MARK: Enqueue and reading

    func testEnqueueStoresFixAndNoteTogether() async throws {
        let note = try await store.enqueue(fix: try sampleFix(), note: draft("Marienplatz", uid: "uid-1"))
        XCTAssertNotNil(note.id)
        XCTAssertEqual(note.uid, "uid-1")
        XCTAssertEqual(note.state, .pending)
        XCTAssertEqual(note.attempts, 0)
        XCTAssertEqual(note.latitude, 48.1486)
        XCTAssertEqual(note.longitude, 11.5783)
        XCTAssertEqual(note.altitude, 521.2)
        XCTAssertEqual(note.tags, ["LocationHistory", "München & Umgebung"])

        let stored = try await store.note(id: note.id!)
        XCTAssertEqual(stored, note)
        let history = try await store.history()
        XCTAssertEqual(history.count, 1)
        XCTAssertEqual(history[0].id, note.fixId)
        XCTAssertEqual(try history[0].fix(), try sampleFix())

        let rawTags = try await store.databaseWriter.read { db in
            try String.fetchOne(db, sql: "SELECT tags FROM note WHERE id = ?", arguments: [note.id])
        }
        XCTAssertEqual(rawTags, #"["LocationHistory","München & Umgebung"]"#, "tags stored as a JSON array")
    }

    func testEnqueueIsAllOrNothing() async throws {
        try await store.enqueue(fix: try sampleFix(), note: draft(uid: "same"))
        await assertThrows(OutboxError.duplicateNote(uid: "same")) {
            try await store.enqueue(fix: try sampleFix(60), note: draft(uid: "same"))
        }
        let fixes = try await store.history()
        XCTAssertEqual(fixes.count, 1, "the second fix was rolled back with its note")
    }

    func testListsOldestFirstWithLimit() async throws {
        for index in 0..<5 { try await enqueue("n\(index)", offset: Double(index)) }
        let firstThree = try await store.notes(state: .pending, limit: 3)
        XCTAssertEqual(firstThree.map(\.title), ["n0", "n1", "n2"])
        let all = try await store.notes(state: .pending)
        XCTAssertEqual(all.count, 5)
        let none = try await store.notes(state: .synced)
        XCTAssertEqual(none, [])
    }

    func testHistorySince() async throws {
        for offset in [0.0, 60, 120] { try await enqueue(offset: offset) }
        let recent = try await store.history(since: fixTime.addingTimeInterval(60))
        XCTAssertEqual(recent.map(\.timestamp), [fixTime.addingTimeInterval(60), fixTime.addingTimeInterval(120)])
        XCTAssertEqual(recent.map(\.source), [.gpsd, .gpsd])
    }

    // MARK: State transitions

    func testUploadLifecycle() async throws {
        let id = try await enqueue().id!
        let t0 = Date()
        let sending = try await store.markSending(id, now: t0)
        XCTAssertEqual(sending.state, .sending)
        XCTAssertEqual(sending.attempts, 1)

        let failed = try await store.markFailed(id, reason: "HTTP 503", now: t0)
        XCTAssertEqual(failed.state, .failed)
        XCTAssertEqual(failed.lastError, "HTTP 503")
        XCTAssertEqual(failed.nextAttemptAt!.timeIntervalSince(t0), 30, accuracy: 0.01)
        let dueNow = try await store.dueNotes(now: t0, limit: 10)
        XCTAssertEqual(dueNow, [], "not due before the backoff ends")
        let dueLater = try await store.dueNotes(now: t0.addingTimeInterval(31), limit: 10)
        XCTAssertEqual(dueLater.map(\.id), [id])

        let second = try await store.markSending(id)
        XCTAssertEqual(second.attempts, 2)
        let again = try await store.markFailed(id, reason: "timeout", now: t0)
        XCTAssertEqual(again.nextAttemptAt!.timeIntervalSince(t0), 60, accuracy: 0.01, "backoff doubles")

        _ = try await store.markSending(id)
        let synced = try await store.markSynced(id, guid: "7d8b0c2e-guid", usn: 4711)
        XCTAssertEqual(synced.state, .synced)
        XCTAssertEqual(synced.guid, "7d8b0c2e-guid")
        XCTAssertEqual(synced.usn, 4711)
        XCTAssertNil(synced.lastError)
        let stored = try await store.note(id: id)
        XCTAssertEqual(stored, synced)
    }

    func testParkRetryAndDrop() async throws {
        let id = try await enqueue().id!
        _ = try await store.markSending(id)
        let parked = try await store.park(id, reason: "ENML_VALIDATION: <script>")
        XCTAssertEqual(parked.state, .parked)
        let due = try await store.dueNotes(now: .distantFuture, limit: 10)
        XCTAssertEqual(due, [], "parked notes are not retried automatically")

        let retried = try await store.retry(id)
        XCTAssertEqual(retried.state, .pending)
        XCTAssertEqual(retried.attempts, 0)
        XCTAssertNil(retried.lastError)
        XCTAssertNil(retried.nextAttemptAt)

        try await store.drop(id)
        await assertThrows(OutboxError.noteNotFound(id: id)) { _ = try await store.note(id: id) }
        let history = try await store.history()
        XCTAssertEqual(history.count, 1, "the fix stays in the location history")
    }

    func testInvalidTransitionsAreRefused() async throws {
        let id = try await enqueue().id!
        await assertThrows(OutboxError.invalidTransition(id: id, state: .pending, action: .markSynced)) {
            try await store.markSynced(id, guid: "g", usn: 1)
        }
        await assertThrows(OutboxError.invalidTransition(id: id, state: .pending, action: .markFailed)) {
            try await store.markFailed(id, reason: "x")
        }
        _ = try await store.markSending(id)
        await assertThrows(OutboxError.invalidTransition(id: id, state: .sending, action: .drop)) { try await store.drop(id) }
        await assertThrows(OutboxError.invalidTransition(id: id, state: .sending, action: .retry)) { try await store.retry(id) }
        await assertThrows(OutboxError.invalidTransition(id: id, state: .sending, action: .markSending)) {
            try await store.markSending(id)
        }
        _ = try await store.markSynced(id, guid: "g", usn: 1)
        await assertThrows(OutboxError.invalidTransition(id: id, state: .synced, action: .retry)) { try await store.retry(id) }
        await assertThrows(OutboxError.invalidTransition(id: id, state: .synced, action: .park)) { try await store.park(id) }
        await assertThrows(OutboxError.invalidTransition(id: id, state: .synced, action: .markSending)) {
            try await store.markSending(id)
        }
        await assertThrows(OutboxError.noteNotFound(id: 999)) { try await store.markSending(999) }

        let error = OutboxError.invalidTransition(id: id, state: .sending, action: .drop)
        XCTAssertEqual(error.reason, "cannot drop note \(id): it is being sent right now")
        XCTAssertEqual(error.recoverySuggestion, "wait for the running sync to finish")
        XCTAssertEqual(OutboxError.invalidTransition(id: 3, state: .synced, action: .retry).reason,
                       "cannot retry note 3: it was already uploaded")
    }

    func testAddressPendingNotesWaitForTheirAddress() async throws {
        var pendingAddress = draft("somewhere")
        pendingAddress.addressPending = true
        pendingAddress.placeName = nil
        let id = try await store.enqueue(fix: try sampleFix(), note: pendingAddress).id!
        let before = try await store.dueNotes(limit: 10)
        XCTAssertEqual(before, [])
        let resolved = try await store.resolveAddress(id, placeName: "Marienplatz 1, München",
                                                      title: "Marienplatz", content: "<en-note>Marienplatz</en-note>")
        XCTAssertFalse(resolved.addressPending)
        XCTAssertEqual(resolved.placeName, "Marienplatz 1, München")
        let after = try await store.dueNotes(limit: 10)
        XCTAssertEqual(after.map(\.id), [id])
    }

    func testRequeuesNotesLeftSendingByADeadProcess() async throws {
        let old = try await enqueue("old").id!
        let fresh = try await enqueue("fresh").id!
        let now = Date()
        _ = try await store.markSending(old, now: now.addingTimeInterval(-600))
        _ = try await store.markSending(fresh, now: now)
        let requeued = try await store.requeueInterrupted(olderThan: 300, now: now)
        XCTAssertEqual(requeued, 1)
        let oldNote = try await store.note(id: old)
        let freshNote = try await store.note(id: fresh)
        XCTAssertEqual(oldNote.state, .pending)
        XCTAssertEqual(freshNote.state, .sending)
    }

    // MARK: Scale

    /// The sync engine's "next notes" queries must walk an index in order, never sort the table.
    func testQueriesUseTheStateIndexWithoutSorting() async throws {
        let plans = try await store.databaseWriter.read { db -> [String] in
            let requests = [
                OutboxStore.notesRequest(state: .pending, limit: 10),
                OutboxStore.dueRequest(state: .pending, now: Date(), limit: 10),
                OutboxStore.dueRequest(state: .failed, now: Date(), limit: 10),
            ]
            return try requests.map { request in
                let statement = try request.makePreparedRequest(db, forSingleResult: false).statement
                let rows = try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + statement.sql, arguments: statement.arguments)
                return rows.map { $0["detail"] as String }.joined(separator: "; ")
            }
        }
        for plan in plans {
            XCTAssertTrue(plan.contains("USING INDEX note_on_state_id"), plan)
            XCTAssertFalse(plan.contains("TEMP B-TREE"), plan)
        }
    }

    /// With a million notes, enqueue and "next pending" cost what they cost on an empty outbox.
    func testStaysFlatAtAMillionNotes() async throws {
        _ = try onFile()   // one fsync per commit: the file's cost is the point
        let rows = 1_000_000
        let started = Date()
        try await store.databaseWriter.write { db in
            try db.execute(sql: """
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
                INSERT INTO fix (latitude, longitude, timestamp, source, createdAt)
                SELECT 48.0, 11.0, '2024-03-09 10:00:00.000', 'gpsd', '2024-03-09 10:00:00.000' FROM n
                """, arguments: [rows])
            // Mostly synced, as in a long-used diary, with pending ones sprinkled through.
            try db.execute(sql: """
                INSERT INTO note (uid, fixId, title, content, tags, state, createdAt, updatedAt)
                SELECT 'bulk-' || id, id, 'bulk', '<en-note/>', '[]',
                       CASE WHEN id % 1000 = 0 THEN 'pending' ELSE 'synced' END,
                       '2024-03-09 10:00:00.000', '2024-03-09 10:00:00.000' FROM fix
                """)
        }
        print("filled \(rows) notes in \(String(format: "%.1f", Date().timeIntervalSince(started))) s")

        var enqueueTimes: [TimeInterval] = []
        var listTimes: [TimeInterval] = []
        for index in 0..<20 {
            var t = Date()
            try await enqueue("after \(index)")
            enqueueTimes.append(Date().timeIntervalSince(t))
            t = Date()
            let next = try await store.notes(state: .pending, limit: 10)
            listTimes.append(Date().timeIntervalSince(t))
            XCTAssertEqual(next.first?.uid, "bulk-1000")
        }
        let enqueueMedian = enqueueTimes.sorted()[10], listMedian = listTimes.sorted()[10]
        print(String(format: "at 1M notes: enqueue median %.2f ms, next-10-pending median %.2f ms",
                     enqueueMedian * 1000, listMedian * 1000))
        XCTAssertLessThan(enqueueMedian, 0.05)
        XCTAssertLessThan(listMedian, 0.02)
    }
}
