import Foundation
import GRDB
import Support
import EvernoteAPI
import Configuration
import Capture
import Compose

/// The words a note was logged with (`log -m`, `--message-file`, `-e`): a row of `noteMessage`,
/// stored in the note's transaction and deleted with it. The rendered ENML already holds them;
/// this copy is what re-rendering (an address or a map filled in at sync) renders again.
package struct NoteMessage: Codable, Sendable, Equatable, FetchableRecord, PersistableRecord, StoredDates {
    package static let databaseTableName = "noteMessage"

    package var noteId: Int64
    package var text: String
}

extension OutboxSchema {
    static let diaryMigration = OutboxMigration("v6-diary") { db in
        try db.alter(table: "resource") { t in
            t.add(column: "userFile", .boolean).notNull().defaults(to: false)
        }
        try db.create(table: "noteMessage") { t in
            t.primaryKey("noteId", .integer).references("note", onDelete: .cascade)
            t.column("text", .text).notNull()
        }
    }
}

extension OutboxStore {
    /// What the user put into a note beside its fix: the words and the files, as the renderer
    /// takes them, for rendering the note again.
    package func diaryEntry(of noteId: Int64) async throws(OutboxError) -> DiaryEntry {
        let message = try await read { db in try NoteMessage.fetchOne(db, key: noteId)?.text }
        let files = try await resources(of: noteId).filter(\.userFile)
        return DiaryEntry(message: message, attachments: files)
    }
}
