import Foundation
import GRDB
import Support
import EvernoteAPI
import Configuration
import Capture
import Compose

/// Which days have their digest note (`enlog digest`, `watch.digest`, `enlog serve`): one row per
/// day and device, written in the same transaction as the note, so a day's digest is written once
/// whoever asks and however often a watch restarts. The whole history's digest is device '' (no
/// device name is empty); a phone's (`digest --device`) is its name, so neither stands in the
/// other's way. Dropping the note (`queue drop`) deletes the row: the day can be digested again.
struct DigestRecord: Codable, FetchableRecord, PersistableRecord, StoredDates {
    static let databaseTableName = "digest"
    /// yyyy-MM-dd in the time zone the digest was written for.
    var day: String
    /// The device whose points it tells; '' for the whole history.
    var device: String
    var noteId: Int64
    var createdAt: Date

    static func key(day: String, device: String?) -> [String: any DatabaseValueConvertible] {
        ["day": day, "device": device ?? ""]
    }
}

extension OutboxSchema {
    static let digestMigration = OutboxMigration("v5-digests") { db in
        try db.create(table: "digest") { t in
            t.primaryKey("day", .text)
            t.column("noteId", .integer).notNull().unique().references("note", onDelete: .cascade)
            t.column("createdAt", .datetime).notNull()
        }
    }

    /// A digest per (day, device): the table made again with `device` in its key (SQLite cannot
    /// change a primary key in place); the digests written before are the whole history's ('').
    static let digestDevicesMigration = OutboxMigration("digest-devices-v1") { db in
        try db.create(table: "digest_new") { t in
            t.column("day", .text).notNull()
            t.column("device", .text).notNull().defaults(to: "")
            t.column("noteId", .integer).notNull().unique().references("note", onDelete: .cascade)
            t.column("createdAt", .datetime).notNull()
            t.primaryKey(["day", "device"])
        }
        try db.execute(sql: "INSERT INTO digest_new (day, device, noteId, createdAt) SELECT day, '', noteId, createdAt FROM digest")
        try db.drop(table: "digest")
        try db.rename(table: "digest_new", to: "digest")
    }
}

extension OutboxStore {
    package enum DigestStored: Sendable, Equatable {
        case written(OutboxNote)
        /// The day had its digest already (another process was quicker): this note, not stored.
        case alreadyThere(noteId: Int64)
    }

    /// The note holding `day`'s digest (of `device`'s points; nil: the whole history's), if one was written.
    package func digestNote(day: String, device: String? = nil) async throws(OutboxError) -> Int64? {
        try await read { db in try DigestRecord.fetchOne(db, key: DigestRecord.key(day: day, device: device))?.noteId }
    }

    /// Stores the digest note of `day` (of `device`'s points; nil: the whole history's) on one of
    /// its fixes, unless it has one: both or neither.
    package func enqueueDigest(day: String, device: String? = nil, note draft: NoteDraft, onFix fixId: Int64,
                               now: Date = Date()) async throws(OutboxError) -> DigestStored {
        try await write { db in
            if let existing = try DigestRecord.fetchOne(db, key: DigestRecord.key(day: day, device: device)) {
                return .alreadyThere(noteId: existing.noteId)
            }
            guard let fix = try FixRecord.fetchOne(db, id: fixId) else {
                throw OutboxError.storedFixInvalid(id: fixId, detail: "no such fix in the history")
            }
            let note = try Self.insert(draft, on: fix, db, now: now)
            try DigestRecord(day: day, device: device ?? "", noteId: note.id!, createdAt: now).insert(db)
            return .written(note)
        }
    }

    /// The day whose digest `noteId` is (nil: not a digest).
    package func digestDay(of noteId: Int64) async throws(OutboxError) -> String? {
        try await digestKey(of: noteId)?.day
    }

    /// The day and device (nil: the whole history) whose digest `noteId` is; nil: not a digest.
    package func digestKey(of noteId: Int64) async throws(OutboxError) -> (day: String, device: String?)? {
        try await read { db in
            try DigestRecord.filter(Column("noteId") == noteId).fetchOne(db).map { ($0.day, $0.device.isEmpty ? nil : $0.device) }
        }
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

    /// Notes written on fixes taken in `start..<end` (digests left out), in the fixes' time order;
    /// under `deviceScope`, on that device's fixes only.
    package func notedPlaces(from start: Date, to end: Date) async throws(OutboxError) -> [(note: OutboxNote, fix: FixRecord)] {
        let device = Self.deviceScope
        return try await readSkipping { db, unreadable in
            var arguments: StatementArguments = [start, end]
            if let device { arguments += [device] }
            let notes = try Self.readableRecords(OutboxNote.filter(sql: """
                fixId IN (SELECT id FROM fix WHERE timestamp >= ? AND timestamp < ?\(device == nil ? "" : " AND device = ?"))
                AND NOT EXISTS (SELECT 1 FROM digest WHERE digest.noteId = note.id)
                """, arguments: arguments), db, unreadable: &unreadable)
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
