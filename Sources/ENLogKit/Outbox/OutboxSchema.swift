import GRDB

enum OutboxSchema {
    /// The migration every outbox has applied, whatever enlog created it.
    static let firstMigration = "v1"

    /// Every table some step of the migrations has created (a later step may drop one that an
    /// older outbox still holds): what an outbox may contain, found by migrating an in-memory
    /// database one step at a time rather than by a list that could fall out of date.
    static let everyTableName: Set<String> = {
        var names: Set<String> = []
        do {
            let scratch = try DatabaseQueue()
            for identifier in migrator.migrations {
                try migrator.migrate(scratch, upTo: identifier)
                names.formUnion(try scratch.read { db in
                    try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
                })
            }
        } catch {
            preconditionFailure("enlog's own migrations fail on an empty in-memory database: \(error)")
        }
        return names
    }()

    /// Migrations are append-only: a released one is never edited, a change is a new "vN".
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration(firstMigration) { db in
            try db.create(table: "fix") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("latitude", .double).notNull().check { $0 >= -90 && $0 <= 90 }
                t.column("longitude", .double).notNull().check { $0 >= -180 && $0 <= 180 }
                t.column("altitude", .double)
                t.column("horizontalAccuracy", .double)
                t.column("speed", .double)
                t.column("course", .double)
                t.column("timestamp", .datetime).notNull()
                t.column("source", .text).notNull()
                t.column("createdAt", .datetime).notNull()
            }
            try db.create(index: "fix_on_timestamp", on: "fix", columns: ["timestamp"])

            try db.create(table: "note") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("uid", .text).notNull().unique()
                // RESTRICT: location history outlives the outbox, never the other way round.
                t.column("fixId", .integer).notNull().indexed()
                    .references("fix", onDelete: .restrict)
                t.column("title", .text).notNull()
                t.column("content", .text).notNull()
                t.column("notebookName", .text)
                t.column("tags", .text).notNull().defaults(to: "[]")
                t.column("latitude", .double)
                t.column("longitude", .double)
                t.column("altitude", .double)
                t.column("placeName", .text)
                t.column("subjectDate", .datetime)
                t.column("source", .text)
                t.column("sourceApplication", .text)
                t.column("addressPending", .boolean).notNull().defaults(to: false)
                t.column("state", .text).notNull().defaults(to: "pending")
                    .check(sql: "state IN ('pending', 'sending', 'synced', 'failed', 'parked')")
                t.column("guid", .text)
                t.column("usn", .integer)
                t.column("attempts", .integer).notNull().defaults(to: 0)
                t.column("lastAttemptAt", .datetime)
                t.column("nextAttemptAt", .datetime)
                t.column("lastError", .text)
                t.column("account", .text)
                t.column("createdAt", .datetime).notNull()
                t.column("updatedAt", .datetime).notNull()
            }
            // "Next notes in a state, oldest first" walks this index in order and stops after
            // LIMIT rows, whatever the table size; ids grow with insertion time.
            try db.create(index: "note_on_state_id", on: "note", columns: ["state", "id"])
        }
        GeocodeCache.registerMigrations(&migrator)
        SyncState.registerMigrations(&migrator)
        GeocodeCache.registerSlotClockMigration(&migrator)
        return migrator
    }
}
