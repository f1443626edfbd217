import GRDB
import Support
import EvernoteAPI
import Configuration
import Capture
import Compose

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
        registerGeocodeCacheMigration(&migrator)
        migrator.registerMigration(syncMigration) { db in
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
        migrator.registerMigration(syncAddressMigration) { db in
            // `IF NOT EXISTS`: enlog versions before this migration existed created the table
            // themselves on first use, so an outbox may hold it already.
            try db.create(table: "syncAddress", options: [.ifNotExists]) { t in
                t.primaryKey("host", .text)
                t.column("address", .text).notNull()
                t.column("updatedAt", .datetime).notNull()
            }
        }
        migrator.registerMigration(geocodeSlotClockMigration) { db in
            try db.alter(table: "geocodeRateLimit") { t in
                t.add(column: "reservedAt", .double).notNull().defaults(to: 0)
            }
        }
        registerResourceMigration(&migrator)
        registerDigestMigration(&migrator)
        registerDiaryMigration(&migrator)
        registerENEXExportMigration(&migrator)
        registerHistoryImportMigration(&migrator)
        registerPlacesMigration(&migrator)
        registerDayZonesMigration(&migrator)
        registerPlaceNameSourcesMigration(&migrator)
        registerDayMovesMigration(&migrator)
        registerFixIdentityMigration(&migrator)
        registerDevicesMigration(&migrator)
        registerDigestDevicesMigration(&migrator)
        return migrator
    }

    static let geocodeCacheMigration = "v2-geocode-cache"
    /// The sync engine's tables (`OutboxSyncRecords`).
    static let syncMigration = "sync-v1"
    /// The NoteStore address remembered per host.
    static let syncAddressMigration = "sync-v2"
    /// `reservedAt` beside the geocoding request slot.
    static let geocodeSlotClockMigration = "v3-geocode-slot-clock"

    /// The geocode cache's tables (`OutboxGeocodeRecords`).
    static func registerGeocodeCacheMigration(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration(geocodeCacheMigration) { db in
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
    }
}
