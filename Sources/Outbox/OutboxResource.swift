import Foundation
import GRDB
import Support
import EvernoteAPI
import Configuration
import Capture
import Compose

/// A resource is a row of `resource`, written with its note.
extension NoteResource: FetchableRecord, MutablePersistableRecord, StoredDates {
    package static let databaseTableName = "resource"

    package mutating func didInsert(_ inserted: InsertionSuccess) {
        id = inserted.rowID
    }

    package enum Columns {
        package static let noteId = Column("noteId")
        package static let hash = Column("hash")
    }
}

/// A note whose map could not be made when it was logged (offline, tile server down): sync makes
/// it before upload, re-rendering the note from the place it was rendered with.
package struct PendingMap: Codable, Sendable, Equatable, FetchableRecord, PersistableRecord, StoredDates {
    package static let databaseTableName = "pendingMap"

    package var noteId: Int64
    /// The address the note was rendered with (nil: none, or still pending).
    package var address: String?
    package var displayName: String?
    /// Failed sync runs so far; past `SyncOptions.mapAttempts` the note goes without its map.
    package var attempts: Int
    package var lastError: String?

    package var place: Place? { address.map { Place(address: $0, displayName: displayName) } }

    package enum Columns {
        package static let noteId = Column(CodingKeys.noteId)
    }
}

extension OutboxSchema {
    static let resourceMigration = OutboxMigration("v4-resources") { db in
        try db.create(table: "resource") { t in
            t.autoIncrementedPrimaryKey("id")
            t.column("noteId", .integer).notNull().indexed().references("note", onDelete: .cascade)
            t.column("hash", .text).notNull()
            t.column("body", .blob).notNull()
            t.column("mime", .text).notNull()
            t.column("width", .integer)
            t.column("height", .integer)
            t.column("fileName", .text)
            t.column("latitude", .double)
            t.column("longitude", .double)
            t.uniqueKey(["noteId", "hash"])
        }
        try db.create(table: "pendingMap") { t in
            t.primaryKey("noteId", .integer).references("note", onDelete: .cascade)
            t.column("address", .text)
            t.column("displayName", .text)
            t.column("attempts", .integer).notNull().defaults(to: 0)
            t.column("lastError", .text)
        }
    }
}

extension OutboxStore {
    /// A note's resources, in the order they were stored.
    package func resources(of noteId: Int64) async throws(OutboxError) -> [NoteResource] {
        try await read { db in
            try NoteResource.filter(NoteResource.Columns.noteId == noteId).order(Column("id")).fetchAll(db)
        }
    }

    /// The map a note carries, as the renderer references it.
    package func mapReference(of noteId: Int64) async throws(OutboxError) -> MapReference? {
        try await resources(of: noteId).first { !$0.userFile && $0.fileName == "map.png" }.map(MapReference.init)
    }

    /// The note's pending map, if it is waiting for one.
    package func pendingMap(of noteId: Int64) async throws(OutboxError) -> PendingMap? {
        try await read { db in try PendingMap.fetchOne(db, key: noteId) }
    }

    /// Pending or failed notes waiting for their map, oldest first.
    package func notesWithPendingMaps(limit: Int) async throws(OutboxError) -> [(OutboxNote, PendingMap, FixRecord?)] {
        try await read { db in
            let rows = try PendingMap.order(PendingMap.Columns.noteId).fetchAll(db)
            var found: [(OutboxNote, PendingMap, FixRecord?)] = []
            for row in rows {
                guard found.count < limit, let note = try OutboxNote.fetchOne(db, id: row.noteId),
                      [.pending, .failed].contains(note.state) else { continue }
                found.append((note, row, try FixRecord.fetchOne(db, id: note.fixId)))
            }
            return found
        }
    }

    /// The map arrived: the note's new title and content (re-rendered with the map) and its
    /// resource, in one transaction; the note is no longer waiting.
    @discardableResult
    package func attachMap(_ noteId: Int64, resource: NoteResource, title: String, content: String,
                          now: Date = Date()) async throws(OutboxError) -> OutboxNote {
        try await transition(noteId, .resolveAddress, allowedFrom: [.pending, .failed, .parked], alongside: { db in
            var resource = resource
            resource.noteId = noteId
            try resource.insert(db, onConflict: .replace)
            try PendingMap.deleteOne(db, key: noteId)
        }) { note in
            note.title = title
            note.content = content
            note.updatedAt = now
        }
    }

    /// One more failed run for a note's map; returns the attempts so far (nil: not waiting).
    package func recordMapFailure(_ noteId: Int64, reason: String) async throws(OutboxError) -> Int? {
        try await write { db in
            guard var row = try PendingMap.fetchOne(db, key: noteId) else { return nil }
            row.attempts += 1
            row.lastError = reason
            try row.update(db)
            return row.attempts
        }
    }

    /// Gives up on a note's map: it is uploaded as rendered at log time (no image).
    package func releaseWithoutMap(_ noteId: Int64) async throws(OutboxError) {
        try await write { db in _ = try PendingMap.deleteOne(db, key: noteId) }
    }

    /// The address a note got at sync time, for the map it is waiting for (none waiting: nothing).
    package func rememberPlace(_ noteId: Int64, _ place: Place?) async throws(OutboxError) {
        try await write { db in
            try db.execute(sql: "UPDATE pendingMap SET address = ?, displayName = ? WHERE noteId = ?",
                           arguments: [place?.address, place?.displayName, noteId])
        }
    }

    /// The ids of the notes that wait for their map (`queue list` marks them).
    package func noteIdsWithPendingMaps() async throws(OutboxError) -> Set<Int64> {
        try await read { db in Set(try Int64.fetchAll(db, sql: "SELECT noteId FROM pendingMap")) }
    }

    /// How many notes wait for their map.
    package func pendingMapCount() async throws(OutboxError) -> Int {
        try await read { db in try PendingMap.fetchCount(db) }
    }
}
