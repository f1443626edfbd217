import GRDB
import Support
import EvernoteAPI
import Configuration
import Capture
import Compose

enum OutboxSchema {
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

    /// Every step of the schema, in the order they are applied. Migrations are append-only: a
    /// released one is never edited, a change is a new step at the end of this list.
    static let migrations: [OutboxMigration] = [
        firstMigration, geocodeCacheMigration, syncMigration, syncAddressMigration, geocodeSlotClockMigration,
        resourceMigration, digestMigration, diaryMigration, enexExportMigration, historyImportMigration, placesMigration,
        dayZonesMigration, placeNameSourcesMigration, dayMovesMigration, fixIdentityMigration, devicesMigration,
        digestDevicesMigration, deviceIndexOwnPointsMigration, deviceIndexUniqueMigration, phoneDiaryMigration,
    ]

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        for step in migrations { migrator.registerMigration(step.identifier, migrate: step.migrate) }
        return migrator
    }

    /// The migration every outbox has applied, whatever enlog created it.
    static let firstMigration = OutboxMigration("v1") { db in
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

    /// The geocode cache's tables (`OutboxGeocodeRecords`).
    static let geocodeCacheMigration = OutboxMigration("v2-geocode-cache") { db in
        try db.create(table: "geocodeCache") { t in
            // Coordinates × 10^precision, rounded: integers compare exactly.
            t.column("latitudeKey", .integer).notNull()
            t.column("longitudeKey", .integer).notNull()
            t.column("precision", .integer).notNull()
            t.column("language", .text).notNull()
            t.column("reply", .blob).notNull()
            t.column("fetchedAt", .datetime).notNull()
            t.primaryKey(["latitudeKey", "longitudeKey", "precision", "language"])
        }
        try db.create(index: "geocodeCache_on_fetchedAt", on: "geocodeCache", columns: ["fetchedAt"])
        // One row: when the latest request to the service started (or is scheduled to start),
        // in seconds since 1970. Processes reserve their slot here before asking.
        try db.create(table: "geocodeRateLimit") { t in
            t.primaryKey("id", .integer).check { $0 == 1 }
            t.column("lastRequestAt", .double).notNull()
        }
        try db.execute(sql: "INSERT INTO geocodeRateLimit (id, lastRequestAt) VALUES (1, 0)")
    }

    /// The sync engine's tables (`OutboxSyncRecords`).
    static let syncMigration = OutboxMigration("sync-v1") { db in
        // OutboxSyncRecords: the rate-limit hold, and per note the lookup flag and address tries.
        try db.create(table: "syncState") { t in
            t.primaryKey("key", .text)
            t.column("value", .text)
            t.column("date", .datetime)
            t.column("updatedAt", .datetime).notNull()
        }
        try db.create(table: "syncNote") { t in
            t.primaryKey("noteId", .integer).references("note", onDelete: .cascade)
            t.column("needsLookup", .boolean).notNull().defaults(to: false)
            t.column("addressTries", .integer).notNull().defaults(to: 0)
        }
    }

    /// The NoteStore address remembered per host.
    static let syncAddressMigration = OutboxMigration("sync-v2") { db in
        // `IF NOT EXISTS`: enlog versions before this migration existed created the table
        // themselves on first use, so an outbox may hold it already.
        try db.create(table: "syncAddress", options: [.ifNotExists]) { t in
            t.primaryKey("host", .text)
            t.column("address", .text).notNull()
            t.column("updatedAt", .datetime).notNull()
        }
    }

    /// `reservedAt` beside the geocoding request slot.
    static let geocodeSlotClockMigration = OutboxMigration("v3-geocode-slot-clock") { db in
        try db.alter(table: "geocodeRateLimit") { t in
            t.add(column: "reservedAt", .double).notNull().defaults(to: 0)
        }
    }
}

/// One step of the outbox's schema: its identifier, which never changes once released, and what
/// it does. Each step is declared beside the records it makes (`OutboxSchema.migrations` lists
/// them in order), so GRDB's migrator is registered in one place.
struct OutboxMigration: Sendable {
    let identifier: String
    let migrate: @Sendable (Database) throws -> Void

    init(_ identifier: String, migrate: @escaping @Sendable (Database) throws -> Void) {
        self.identifier = identifier
        self.migrate = migrate
    }
}
