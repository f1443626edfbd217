import Foundation
import GRDB
import XCTest
@testable import Capture
@testable import Compose
@testable import Outbox

/// The `exported` state: the migration that makes room for it keeps every row of an outbox an
/// older enlog wrote, and the state's rules (only queued notes become exported; `queue retry`
/// puts one back flagged for the exactly-once lookup; sync never sees it as due).
final class OutboxExportStateTests: XCTestCase {
    var directory: TemporaryDirectory!
    let fixTime = Date(timeIntervalSince1970: 1_795_330_800)

    override func setUpWithError() throws {
        directory = try TemporaryDirectory()
    }

    func draft(_ title: String) -> NoteDraft {
        var draft = NoteDraft(uid: UUID().uuidString, title: title, content: "<en-note>\(title)</en-note>", notebookName: nil,
                              tags: ["LocationHistory"], subjectDate: fixTime, source: "enlog", sourceApplication: "enlog")
        let body = Data("map of \(title)".utf8)
        draft.resources = [NoteResource(hash: MapImage.md5Hex(body), body: body, mime: "image/png", width: 4, height: 3,
                                        fileName: "map.png", latitude: 48.1, longitude: 11.5)]
        draft.message = "words of \(title)"
        return draft
    }

    /// An outbox as enlog wrote it before the migration: notes in every state, with resources,
    /// a pending map, a digest, words and sync flags, all referring to `note` rows that the
    /// migration builds again. None may be lost (foreign keys cascade on delete).
    func testTheMigrationKeepsEveryRowThatRefersToANote() async throws {
        let path = directory.path("old.sqlite")
        let queue = try DatabaseQueue(path: path)
        try OutboxSchema.migrator.migrate(queue, upTo: OutboxSchema.diaryMigration.identifier)
        let fixTime = self.fixTime
        let drafts = (0..<5).map { draft("note \($0)") }
        try await queue.write { db in
            for (index, state) in ["pending", "sending", "synced", "failed", "parked"].enumerated() {
                var fix = FixRecord(try Fix(latitude: 48.1, longitude: 11.5, timestamp: fixTime, source: .manual))
                try fix.insert(db)
                var note = try OutboxStore.insert(drafts[index], on: fix, db, now: fixTime)
                note.state = OutboxNote.State(rawValue: state)!
                try note.update(db)
                try db.execute(sql: "INSERT INTO syncNote (noteId, needsLookup) VALUES (?, 1)", arguments: [note.id])
                try db.execute(sql: "INSERT INTO pendingMap (noteId, attempts) VALUES (?, 0)", arguments: [note.id])
            }
            try db.execute(sql: "INSERT INTO digest (day, noteId, createdAt) VALUES ('2026-11-22', 1, ?)", arguments: [fixTime])
        }
        let counts: @Sendable (Database) throws -> [Int] = { db in
            try ["note", "resource", "noteMessage", "syncNote", "pendingMap", "digest"].map {
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \($0)")!
            }
        }
        let before = try await queue.read { db in try counts(db) }
        let rows = try await queue.read { db in try Row.fetchAll(db, sql: "SELECT * FROM note ORDER BY id").map(\.description) }
        try queue.close()

        let store = try OutboxStore(path: path)
        try await store.databaseWriter.read { db in
            XCTAssertEqual(try counts(db), before)
            XCTAssertEqual(try Row.fetchAll(db, sql: "SELECT * FROM note ORDER BY id").map(\.description), rows)
            XCTAssertEqual(try Row.fetchAll(db, sql: "PRAGMA foreign_key_check"), [])
            XCTAssertEqual(try String.fetchOne(db, sql: "PRAGMA integrity_check"), "ok")
            let indexes = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'note'")
            XCTAssertTrue(Set(indexes).isSuperset(of: ["note_on_state_id", "index_note_on_fixId"]), "\(indexes)")
        }
        let pending = try await store.notes(state: .pending)
        XCTAssertEqual(pending.count, 1)
        let marked = try await store.markExported([1, 2, 3, 4, 5], file: "/tmp/diary.enex", now: fixTime)
        XCTAssertEqual(marked, [1, 4], "only queued notes (pending, failed) become exported")
        let exported = try await store.note(id: 1)
        XCTAssertEqual(exported.state, .exported)
        let map = try await store.pendingMap(of: 1)
        XCTAssertNil(map, "an exported note waits for nothing")
        let record = try await store.exportRecord(of: 4)
        XCTAssertEqual(record?.file, "/tmp/diary.enex")
    }

    func testRetryPutsAnExportedNoteBackFlaggedForTheLookupAndSyncSkipsTheRest() async throws {
        let store = try OutboxStore(path: directory.path("outbox.sqlite"))
        for index in 1...3 {
            try await store.enqueue(fix: try Fix(latitude: 48.1, longitude: 11.5, timestamp: fixTime, source: .manual),
                                    note: draft("note \(index)"), now: fixTime)
        }
        _ = try await store.markExported([1, 2], file: "/tmp/a.enex", now: fixTime)
        let due = try await store.dueNotes(now: fixTime.addingTimeInterval(60), limit: 10).map(\.id)
        XCTAssertEqual(due, [3], "sync leaves exported notes alone")
        let counts = try await store.counts()
        XCTAssertEqual(counts[.exported], 2)

        do {
            _ = try await store.markSending(1)
            XCTFail("an exported note cannot be sent")
        } catch {
            XCTAssertEqual(error, .invalidTransition(id: 1, state: .exported, action: .markSending))
            XCTAssertTrue(error.recoverySuggestion?.contains("enlog queue retry ID") ?? false, "\(error)")
        }
        let retried = try await store.retry(1, now: fixTime)
        XCTAssertEqual(retried.state, .pending)
        let lookups = try await store.notesNeedingLookup()
        XCTAssertEqual(lookups, [1])
        let exportedBefore = try await store.notesExportedBefore()
        XCTAssertEqual(exportedBefore, [1])
        let record = try await store.exportRecord(of: 1)
        XCTAssertEqual(record?.file, "/tmp/a.enex", "where it went is kept")
        let dueNow = try await store.dueNotes(now: fixTime.addingTimeInterval(60), limit: 10).map(\.id)
        XCTAssertEqual(dueNow, [1, 3])
        let dropped = try await store.drop(2)
        XCTAssertEqual(dropped.state, .exported)
        let gone = try await store.exportRecord(of: 2)
        XCTAssertNil(gone, "deleted with its note")
    }
}
