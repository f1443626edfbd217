import Foundation
import GRDB

/// What the sync engine remembers between runs, in the outbox's own database file:
///
/// - `syncState` (key/value): `notBefore` — no Evernote call before this time (rate limit), with
///   the reason that set it.
/// - `syncNote` (one row per note that needs one, deleted with the note): `needsLookup` — an
///   earlier `createNote` for this note may have reached Evernote (timeout, lost connection,
///   unreadable reply), so the next attempt must look for it first; `addressTries` — failed
///   lookups of a deferred address.
/// - `syncAddress` (one row per NoteStore host, `sync-v2`): the `ip:port` a Thrift call last
///   reached, so that reachability can probe it and a sync can connect to it when DNS fails.
public struct SyncState: Sendable {
    public static let migrationName = "sync-v1"
    public static let addressMigrationName = "sync-v2"

    /// Registers the sync tables; call after the outbox's own migrations (`note` must exist).
    /// Append new migrations; a released one never changes (databases already ran it).
    public static func registerMigrations(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration(migrationName) { db in try createTables(db, ifNotExists: false) }
        migrator.registerMigration(addressMigrationName) { db in try createAddressTable(db) }
    }

    /// `IF NOT EXISTS`: `init(writer:)` may have created it on a database not yet migrated.
    static func createAddressTable(_ db: Database) throws {
        try db.create(table: "syncAddress", options: [.ifNotExists]) { t in
            t.primaryKey("host", .text)
            t.column("address", .text).notNull()
            t.column("updatedAt", .datetime).notNull()
        }
    }

    static func createTables(_ db: Database, ifNotExists: Bool) throws {
        try db.create(table: "syncState", options: ifNotExists ? [.ifNotExists] : []) { t in
            t.primaryKey("key", .text)
            t.column("value", .text)
            t.column("date", .datetime)
            t.column("updatedAt", .datetime).notNull()
        }
        try db.create(table: "syncNote", options: ifNotExists ? [.ifNotExists] : []) { t in
            t.primaryKey("noteId", .integer).references("note", onDelete: .cascade)
            t.column("needsLookup", .boolean).notNull().defaults(to: false)
            t.column("addressTries", .integer).notNull().defaults(to: 0)
        }
    }

    let writer: any DatabaseWriter

    /// Uses the sync tables in `writer`'s database. Until the main outbox migrator registers
    /// `registerMigrations`, this creates them when missing (`IF NOT EXISTS`, idempotent, and a
    /// no-op once the migration has run): a GRDB migration registered only here would make
    /// `OutboxStore` see an unknown applied migration and refuse the file as newer.
    public init(writer: any DatabaseWriter) async throws {
        self.writer = writer
        try await writer.write { db in
            if try !db.tableExists("syncState") || !db.tableExists("syncNote") {
                try Self.createTables(db, ifNotExists: true)
            }
            if try !db.tableExists("syncAddress") { try Self.createAddressTable(db) }
        }
    }

    /// The `ip:port` (IPv6 in brackets) last reached for NoteStore host `host`, if any.
    public func rememberedAddress(host: String) async throws -> String? {
        let key = host.lowercased()
        return try await writer.read { db in
            try String.fetchOne(db, sql: "SELECT address FROM syncAddress WHERE host = ?", arguments: [key])
        }
    }

    /// Remembers `address` (`ip:port`) for `host`; a no-op write when unchanged.
    public func rememberAddress(_ address: String, host: String, now: Date = Date()) async throws {
        let key = host.lowercased()
        try await writer.write { db in
            try db.execute(sql: """
                INSERT INTO syncAddress (host, address, updatedAt) VALUES (?, ?, ?)
                ON CONFLICT(host) DO UPDATE SET address = excluded.address, updatedAt = excluded.updatedAt
                WHERE address != excluded.address
                """, arguments: [key, address, now])
        }
    }

    public struct Hold: Sendable, Equatable, Codable {
        public var until: Date
        public var reason: String
    }

    /// The persisted "no call before" time, if any (also when already past).
    public func notBefore() async throws -> Hold? {
        try await writer.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT value, date FROM syncState WHERE key = 'notBefore'"),
                  let date: Date = row["date"] else { return nil }
            return Hold(until: date, reason: row["value"] ?? "")
        }
    }

    public func setNotBefore(_ hold: Hold?, now: Date = Date()) async throws {
        try await writer.write { db in
            if let hold {
                try db.execute(sql: """
                    INSERT INTO syncState (key, value, date, updatedAt) VALUES ('notBefore', ?, ?, ?)
                    ON CONFLICT(key) DO UPDATE SET value = excluded.value, date = excluded.date, updatedAt = excluded.updatedAt
                    """, arguments: [hold.reason, hold.until, now])
            } else {
                try db.execute(sql: "DELETE FROM syncState WHERE key = 'notBefore'")
            }
        }
    }

    /// Ids of the notes whose earlier upload may have reached Evernote.
    public func notesNeedingLookup() async throws -> Set<Int64> {
        try await writer.read { db in
            Set(try Int64.fetchAll(db, sql: "SELECT noteId FROM syncNote WHERE needsLookup"))
        }
    }

    public func setNeedsLookup(_ noteId: Int64, _ value: Bool) async throws {
        try await writer.write { db in
            try db.execute(sql: """
                INSERT INTO syncNote (noteId, needsLookup) VALUES (?, ?)
                ON CONFLICT(noteId) DO UPDATE SET needsLookup = excluded.needsLookup
                """, arguments: [noteId, value])
        }
    }

    /// Counts one more failed address lookup for the note; returns the new count, or nil when
    /// the note is gone (dropped meanwhile).
    public func recordAddressFailure(_ noteId: Int64) async throws -> Int? {
        try await writer.write { db in
            guard try Int.fetchOne(db, sql: "SELECT 1 FROM note WHERE id = ?", arguments: [noteId]) != nil else { return nil }
            try db.execute(sql: """
                INSERT INTO syncNote (noteId, addressTries) VALUES (?, 1)
                ON CONFLICT(noteId) DO UPDATE SET addressTries = addressTries + 1
                """, arguments: [noteId])
            return try Int.fetchOne(db, sql: "SELECT addressTries FROM syncNote WHERE noteId = ?", arguments: [noteId]) ?? 1
        }
    }

    /// Queued notes still waiting for their address, and the fewest failed lookups among them.
    public func addressWaits() async throws -> (count: Int, fewestTries: Int) {
        try await writer.read { db in
            let row = try Row.fetchOne(db, sql: """
                SELECT COUNT(*) AS count, MIN(COALESCE(syncNote.addressTries, 0)) AS fewest
                FROM note LEFT JOIN syncNote ON syncNote.noteId = note.id
                WHERE note.addressPending AND note.state IN ('pending', 'failed')
                """)
            return (row?["count"] ?? 0, row?["fewest"] ?? 0)
        }
    }
}
