import Foundation
import GRDB
import Support
import EvernoteAPI
import Configuration
import Capture
import Compose

/// Where and when a note last went out as ENEX (`export --enex FILE --new`): a row of
/// `enexExport`, written in the transaction that makes the note `exported`, deleted with the
/// note. It outlives a `queue retry`: the note may be in Evernote through that file, which the
/// sync's lookup must allow for.
package struct ENEXExportRecord: Codable, Sendable, Equatable, FetchableRecord, PersistableRecord, StoredDates {
    package static let databaseTableName = "enexExport"

    package var noteId: Int64
    /// The file's absolute path, or "-" for standard output.
    package var file: String
    package var exportedAt: Date
}

/// Which notes an export takes.
package struct ExportSelection: Sendable, Equatable {
    package enum Kind: String, Sendable, CaseIterable {
        case all
        /// Notes logged at a place (not digests).
        case notes
        /// Day digests only.
        case digests
    }

    /// Only notes in these states (nil: every state).
    package var states: Set<OutboxNote.State>?
    package var kind: Kind
    /// The note's fix taken in `from..<to` (nil: open).
    package var from: Date?
    package var to: Date?

    package init(states: Set<OutboxNote.State>? = nil, kind: Kind = .all, from: Date? = nil, to: Date? = nil) {
        self.states = states
        self.kind = kind
        self.from = from
        self.to = to
    }

    /// What an export that is the notes' destination takes: what no sync and no export has
    /// taken yet (pending, or failed and waiting for a retry).
    package static let queued: Set<OutboxNote.State> = [.pending, .failed]
}

extension OutboxSchema {
    /// The `exported` state needs the `note` table's state check widened, which SQLite can only
    /// do by building the table again: from its own definition, check widened, so every column
    /// stays as it is (GRDB runs the migration with foreign keys off, so the rows that reference
    /// notes stay too). And the table that says where each note went.
    static let enexExportMigration = OutboxMigration("v7-enex-export") { db in
        let head = "CREATE TABLE \"note\" ("
        let check = "CHECK (state IN ('pending', 'sending', 'synced', 'failed', 'parked'))"
        guard let definition = try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'note'"),
              definition.hasPrefix(head), definition.contains(check) else {
            throw DatabaseError(resultCode: .SQLITE_CORRUPT, message: "the note table is not the one enlog's migrations made")
        }
        let widened = definition.dropFirst(head.count)
            .replacingOccurrences(of: check, with: "CHECK (state IN ('pending', 'sending', 'synced', 'failed', 'parked', 'exported'))")
        try db.execute(sql: "CREATE TABLE \"newNote\" (" + widened)
        try db.execute(sql: "INSERT INTO newNote SELECT * FROM note")
        try db.drop(table: "note")
        try db.rename(table: "newNote", to: "note")
        try db.create(index: "index_note_on_fixId", on: "note", columns: ["fixId"])
        try db.create(index: "note_on_state_id", on: "note", columns: ["state", "id"])

        try db.create(table: "enexExport") { t in
            t.primaryKey("noteId", .integer).references("note", onDelete: .cascade)
            t.column("file", .text).notNull()
            t.column("exportedAt", .datetime).notNull()
        }
    }
}

extension OutboxStore {
    /// How many notes `selection` takes (for an export's progress line).
    package func exportCount(_ selection: ExportSelection) async throws(OutboxError) -> Int {
        try await read { db in try Self.exportRequest(selection, afterId: nil).fetchCount(db) }
    }

    /// The next notes `selection` takes after note `afterId` (nil: from the first), oldest
    /// first: an export reads the outbox a page at a time, never all of it at once.
    package func exportPage(_ selection: ExportSelection, afterId: Int64?, limit: Int) async throws(OutboxError) -> [OutboxNote] {
        try await read { db in try Self.exportRequest(selection, afterId: afterId).limit(limit).fetchAll(db) }
    }

    /// The ids of a note's resources, in stored order, so that an export reads their bodies one at a time.
    package func resourceIds(of noteId: Int64) async throws(OutboxError) -> [Int64] {
        try await read { db in
            try Int64.fetchAll(db, sql: "SELECT id FROM resource WHERE noteId = ? ORDER BY id", arguments: [noteId])
        }
    }

    /// One resource, body included (nil: gone).
    package func resource(id: Int64) async throws(OutboxError) -> NoteResource? {
        try await read { db in try NoteResource.fetchOne(db, key: id) }
    }

    /// pending or failed → exported for the notes an ENEX file now holds, with where and when,
    /// in one transaction. They are final as they were written: no longer waiting for an address
    /// or a map. Returns the ids marked; a note no longer queued (dropped, sent) is left out.
    package func markExported(_ ids: [Int64], file: String, now: Date = Date()) async throws(OutboxError) -> [Int64] {
        guard !ids.isEmpty else { return [] }
        return try await write { db in
            let update = try db.cachedStatement(sql: """
                UPDATE note SET state = 'exported', addressPending = 0, nextAttemptAt = NULL, updatedAt = ?
                WHERE id = ? AND state IN ('pending', 'failed')
                """)
            var marked: [Int64] = []
            for id in ids {
                try update.execute(arguments: [now, id])
                guard db.changesCount == 1 else { continue }
                try PendingMap.deleteOne(db, key: id)
                try ENEXExportRecord(noteId: id, file: file, exportedAt: now).insert(db, onConflict: .replace)
                marked.append(id)
            }
            return marked
        }
    }

    /// Where and when the note last went out as ENEX (nil: never).
    package func exportRecord(of noteId: Int64) async throws(OutboxError) -> ENEXExportRecord? {
        try await read { db in
            guard try db.tableExists(ENEXExportRecord.databaseTableName) else { return nil }
            return try ENEXExportRecord.fetchOne(db, key: noteId)
        }
    }

    /// Every note's export record, by note id (`queue list`).
    package func exportRecords() async throws(OutboxError) -> [Int64: ENEXExportRecord] {
        try await read { db in
            // An outbox read as it is, not migrated yet, has no exports.
            guard try db.tableExists(ENEXExportRecord.databaseTableName) else { return [:] }
            return Dictionary(uniqueKeysWithValues: try ENEXExportRecord.fetchAll(db).map { ($0.noteId, $0) })
        }
    }

    /// Ids of the queued notes that went out as ENEX before `queue retry` put them back: the user
    /// may have imported them into any notebook, so sync's lookup searches every notebook.
    package func notesExportedBefore() async throws(OutboxError) -> Set<Int64> {
        try await read { db in
            Set(try Int64.fetchAll(db, sql: """
                SELECT enexExport.noteId FROM enexExport JOIN note ON note.id = enexExport.noteId
                WHERE note.state IN ('pending', 'failed', 'sending')
                """))
        }
    }

    static func exportRequest(_ selection: ExportSelection, afterId: Int64?) -> QueryInterfaceRequest<OutboxNote> {
        var request = OutboxNote.order(OutboxNote.Columns.id)
        if let afterId { request = request.filter(OutboxNote.Columns.id > afterId) }
        if let states = selection.states { request = request.filter(states.contains(OutboxNote.Columns.state)) }
        switch selection.kind {
        case .all: break
        case .notes: request = request.filter(sql: "NOT EXISTS (SELECT 1 FROM digest WHERE digest.noteId = note.id)")
        case .digests: request = request.filter(sql: "EXISTS (SELECT 1 FROM digest WHERE digest.noteId = note.id)")
        }
        if selection.from != nil || selection.to != nil {
            request = request.filter(sql: "fixId IN (SELECT id FROM fix WHERE timestamp >= ? AND timestamp < ?)",
                                     arguments: [selection.from ?? .distantPast, selection.to ?? .distantFuture])
        }
        return request
    }
}
