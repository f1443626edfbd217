import GRDB
import Support
import EvernoteAPI
import Configuration
import Capture
import Compose

/// Tells an enlog outbox from any other SQLite file before enlog writes a byte to it, so that
/// `--db` pointed at another program's database never extends that database with enlog's tables.
///
/// An outbox carries `PRAGMA application_id` = "enlg" in its header (the field SQLite keeps for
/// exactly this, and `file(1)` reads). Outboxes created before the stamp existed are recognised by
/// their content: GRDB's `grdb_migrations` table with enlog's first migration, and no table
/// enlog's migrations never created; a writing command stamps them on its next open.
enum OutboxIdentity: Equatable {
    /// No tables and no stamp: a new file, or one another tool created empty. Safe to set up.
    case blank
    case outbox(stamped: Bool)
    /// Another program's database; `detail` says what gave it away.
    case foreign(detail: String)

    /// "enlg" in ASCII.
    static let applicationID: Int32 = 0x656E_6C67

    static func of(_ db: Database) throws -> OutboxIdentity {
        let applicationID = try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0
        if applicationID == Self.applicationID { return .outbox(stamped: true) }
        if applicationID != 0 {
            return .foreign(detail: "its header names another application (application_id \(String(format: "0x%08X", UInt32(bitPattern: applicationID))))")
        }
        let tables = Set(try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"))
        if tables.isEmpty { return .blank }
        let strangers = tables.subtracting(OutboxSchema.everyTableName).sorted()
        if !strangers.isEmpty {
            let shown = strangers.prefix(3).joined(separator: ", ") + (strangers.count > 3 ? ", …" : "")
            return .foreign(detail: "it holds tables enlog never creates (\(shown))")
        }
        // Another enlog may be migrating the file right now: GRDB creates its table first, then
        // commits each migration with its row. A file without it has tables someone else made.
        guard tables.contains("grdb_migrations") else {
            return .foreign(detail: "its tables were not created by enlog's migrations")
        }
        let applied = try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations")
        guard applied.isEmpty || applied.contains(OutboxSchema.firstMigration.identifier) else {
            return .foreign(detail: "its migrations are another program's")
        }
        return .outbox(stamped: false)
    }

    /// Marks the file as an outbox; part of the transaction that sets it up.
    static func stamp(_ db: Database) throws {
        try db.execute(sql: "PRAGMA application_id = \(applicationID)")
    }
}
