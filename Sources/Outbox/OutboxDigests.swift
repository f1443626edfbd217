import Foundation
import GRDB
import Support
import EvernoteAPI
import Configuration
import Capture
import Compose

/// Which days have their digest note (`enlog digest`, `watch.digest`): one row per day, written in
/// the same transaction as the note, so a day's digest is written once whoever asks and however
/// often a watch restarts. Dropping the note (`queue drop`) deletes the row: the day can be
/// digested again.
struct DigestRecord: Codable, FetchableRecord, PersistableRecord, StoredDates {
    static let databaseTableName = "digest"
    /// yyyy-MM-dd in the time zone the digest was written for.
    var day: String
    var noteId: Int64
    var createdAt: Date
}

extension OutboxSchema {
    static let digestMigration = OutboxMigration("v5-digests") { db in
        try db.create(table: "digest") { t in
            t.primaryKey("day", .text)
            t.column("noteId", .integer).notNull().unique().references("note", onDelete: .cascade)
            t.column("createdAt", .datetime).notNull()
        }
    }
}

extension OutboxStore {
    package enum DigestStored: Sendable, Equatable {
        case written(OutboxNote)
        /// The day had its digest already (another process was quicker): this note, not stored.
        case alreadyThere(noteId: Int64)
    }

    /// The note holding `day`'s digest, if one was written.
    package func digestNote(day: String) async throws(OutboxError) -> Int64? {
        try await read { db in try DigestRecord.fetchOne(db, key: day)?.noteId }
    }

    /// Stores the digest note of `day` on one of its fixes, unless the day has one: both or neither.
    package func enqueueDigest(day: String, note draft: NoteDraft, onFix fixId: Int64, now: Date = Date()) async throws(OutboxError) -> DigestStored {
        try await write { db in
            if let existing = try DigestRecord.fetchOne(db, key: day) { return .alreadyThere(noteId: existing.noteId) }
            guard let fix = try FixRecord.fetchOne(db, id: fixId) else {
                throw OutboxError.storedFixInvalid(id: fixId, detail: "no such fix in the history")
            }
            let note = try Self.insert(draft, on: fix, db, now: now)
            try DigestRecord(day: day, noteId: note.id!, createdAt: now).insert(db)
            return .written(note)
        }
    }

    /// The day whose digest `noteId` is (nil: not a digest).
    package func digestDay(of noteId: Int64) async throws(OutboxError) -> String? {
        try await read { db in try DigestRecord.filter(Column("noteId") == noteId).fetchOne(db)?.day }
    }

    /// A digest made again (its route drawn at last): its title, content and resources replace
    /// the stored ones in one transaction, and it no longer waits for a map. Only a note not yet
    /// uploaded (pending or failed) is changed.
    package func replaceDigest(_ noteId: Int64, with draft: NoteDraft, now: Date = Date()) async throws(OutboxError) {
        _ = try await transition(noteId, .resolveAddress, allowedFrom: [.pending, .failed, .parked], alongside: { db in
            try NoteResource.filter(NoteResource.Columns.noteId == noteId).deleteAll(db)
            for var resource in draft.resources {
                resource.noteId = noteId
                try resource.insert(db)
            }
            try PendingMap.deleteOne(db, key: noteId)
        }) { note in
            note.title = draft.title
            note.content = draft.content
            note.updatedAt = now
        }
    }

    /// Notes written on fixes taken in `start..<end` (digests left out), in the fixes' time order.
    package func notedPlaces(from start: Date, to end: Date) async throws(OutboxError) -> [(note: OutboxNote, fix: FixRecord)] {
        try await readSkipping { db, unreadable in
            let notes = try Self.readableRecords(OutboxNote.filter(sql: """
                fixId IN (SELECT id FROM fix WHERE timestamp >= ? AND timestamp < ?)
                AND NOT EXISTS (SELECT 1 FROM digest WHERE digest.noteId = note.id)
                """, arguments: [start, end]), db, unreadable: &unreadable)
            var found: [(note: OutboxNote, fix: FixRecord)] = []
            for note in notes {
                let fix = try Self.readableRecords(FixRecord.filter(id: note.fixId), db, unreadable: &unreadable).first
                if let fix { found.append((note, fix)) }
            }
            found.sort { ($0.fix.timestamp, $0.note.id!) < ($1.fix.timestamp, $1.note.id!) }
            return found
        }
    }
}

extension OutboxStore {
    /// Lets go of what the connections keep after a big read (a day's fixes for a digest): every
    /// connection's page cache and statements, and the idle reader connections, which the next
    /// read opens again. Waits on a thread of its own for any access in progress to finish.
    package func releaseMemory() async {
        let writer = self.pool
        await BlockingCall.run("enlog.outbox") { _ in
            switch writer {
            case let pool as DatabasePool: pool.releaseMemory()
            case let queue as DatabaseQueue: queue.releaseMemory()
            default: break
            }
        }
    }
}
