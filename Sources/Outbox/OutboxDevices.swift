import Foundation
import GRDB
import GRDBSQLite
import Support
import EvernoteAPI
import Configuration
import Capture
import Compose

extension OutboxSchema {
    /// The phones `enlog serve` takes points from: a name and the hash of its secret (the secret
    /// itself is shown once, by `enlog devices add`, and kept nowhere). `fix_on_device_timestamp`
    /// serves the (device, time) lookup each received point makes.
    static let devicesMigration = OutboxMigration("devices-v1") { db in
        try db.create(table: "device") { t in
            t.primaryKey("name", .text)
            t.column("secretHash", .blob).notNull()
            t.column("createdAt", .datetime).notNull()
        }
        try db.execute(sql: "CREATE INDEX fix_on_device_timestamp ON fix(device, timestamp) WHERE device IS NOT NULL")
    }

    /// `fix_on_device_timestamp` holds only the points phones sent (no import run): an imported
    /// point with a device (Records.json's deviceTag) is kept unique by `fix_import_identity`
    /// already, and a third index holding its time cost the import a quarter of its CPU
    /// (bench/import, docs/benchmarks.md). Queries of a device's received points say
    /// `importRun IS NULL`, which lets SQLite use the partial index.
    static let deviceIndexOwnPointsMigration = OutboxMigration("device-index-own-v1") { db in
        try db.execute(sql: "DROP INDEX fix_on_device_timestamp")
        try db.execute(sql: """
            CREATE INDEX fix_on_device_timestamp ON fix(device, timestamp) WHERE device IS NOT NULL AND importRun IS NULL
            """)
    }

    /// A phone's point is once per (device, millisecond) by the rule of `fix_on_device_timestamp`
    /// itself, now unique: the receiver inserts with `ON CONFLICT DO NOTHING` instead of looking
    /// each point up first (one probe of the index per point instead of two).
    ///
    /// The receiver's lookup kept its own points apart, but an outbox may still hold two rows of a
    /// device's millisecond outside any import: imported twins a note was written on, which
    /// `fix-identity-v1` left outside their import, beside each other or beside a point the phone
    /// sent. The first (lowest id) stays; a note on a later one moves to it (the same device at
    /// the same millisecond: the same point), and the later ones go.
    static let deviceIndexUniqueMigration = OutboxMigration("device-index-unique-v1") { db in
        let firstTwin = """
            SELECT min(first.id) FROM fix AS first WHERE first.device = fix.device AND first.timestamp = fix.timestamp
                AND first.importRun IS NULL
            """
        let laterTwins = "SELECT id FROM fix WHERE device IS NOT NULL AND importRun IS NULL AND id > (\(firstTwin))"
        try db.execute(sql: """
            UPDATE note SET fixId = (SELECT (\(firstTwin)) FROM fix WHERE fix.id = note.fixId)
            WHERE fixId IN (\(laterTwins))
            """)
        try db.execute(sql: "DELETE FROM fix WHERE id IN (\(laterTwins))")
        try db.execute(sql: "DROP INDEX fix_on_device_timestamp")
        try db.execute(sql: """
            CREATE UNIQUE INDEX fix_on_device_timestamp ON fix(device, timestamp) WHERE device IS NOT NULL AND importRun IS NULL
            """)
    }
}

/// A row of `device`: a phone that may send points, known by its name.
package struct DeviceRecord: Sendable, Equatable, Codable {
    package var name: String
    package var secretHash: [UInt8]
    package var createdAt: Date

    package init(name: String, secretHash: [UInt8], createdAt: Date) {
        self.name = name
        self.secretHash = secretHash
        self.createdAt = createdAt
    }
}

extension OutboxStore {
    /// The one device whose fixes the history's day readers (`stayFixes`, `history(from:to:)`,
    /// `hasFixes`, `notedPlaces`; visits and segments, which are imports', are then none) see
    /// while set: `timeline --device`, `places --device`, `digest --device`. nil: all.
    @TaskLocal package static var deviceScope: String?

    /// How one request's points went into the history.
    package struct PhoneStoreResult: Sendable, Equatable {
        package var added = 0
        /// Points whose (device, millisecond) the history had already: a resent batch.
        package var alreadyThere = 0
    }

    /// Adds a device; false when the name is taken (nothing changes then).
    package func addDevice(_ device: DeviceRecord) async throws(OutboxError) -> Bool {
        try await write { db in
            try db.execute(sql: "INSERT INTO device (name, secretHash, createdAt) VALUES (?, ?, ?) ON CONFLICT(name) DO NOTHING",
                           arguments: [device.name, Data(device.secretHash), StorageTime.text(device.createdAt)])
            return db.changesCount == 1
        }
    }

    /// Removes a device (its points stay in the history, with its name); false when there was none.
    package func removeDevice(named name: String) async throws(OutboxError) -> Bool {
        try await write { db in
            try db.execute(sql: "DELETE FROM device WHERE name = ?", arguments: [name])
            return db.changesCount == 1
        }
    }

    /// Every device, by name, with how many points each has sent and when the last was taken.
    package func devices() async throws(OutboxError) -> [(device: DeviceRecord, points: Int, lastPoint: Date?)] {
        try await read { db in
            try Row.fetchAll(db, sql: """
                SELECT d.name, d.secretHash, d.createdAt,
                       (SELECT COUNT(*) FROM fix WHERE fix.device = d.name AND fix.importRun IS NULL) AS points,
                       (SELECT MAX(timestamp) FROM fix WHERE fix.device = d.name AND fix.importRun IS NULL) AS lastPoint
                FROM device d ORDER BY d.name
                """).map { row in
                let hash: Data = row["secretHash"]
                let last: Date? = row["lastPoint"]
                return (DeviceRecord(name: row["name"], secretHash: [UInt8](hash), createdAt: row["createdAt"]), row["points"], last)
            }
        }
    }

    /// Whether `name` is a device: one `enlog devices add` made, or one whose points the history
    /// holds (a removed device's stay, and an import's may carry one).
    package func knowsDevice(_ name: String) async throws(OutboxError) -> Bool {
        try await read { db in
            try Bool.fetchOne(db, sql: """
                SELECT EXISTS (SELECT 1 FROM device WHERE name = ?)
                    OR EXISTS (SELECT 1 FROM fix WHERE device = ? AND importRun IS NULL)
                    OR EXISTS (SELECT 1 FROM fix WHERE device = ? AND importRun IS NOT NULL)
                """, arguments: [name, name, name]) ?? false
        }
    }

    /// The names of the devices with a point in `start..<end`, by name.
    package func devicesWithFixes(from start: Date, to end: Date) async throws(OutboxError) -> [String] {
        try await read { db in
            try String.fetchAll(db, sql: """
                SELECT DISTINCT device FROM fix WHERE device IS NOT NULL AND timestamp >= ? AND timestamp < ? ORDER BY device
                """, arguments: [start, end])
        }
    }

    /// The device of this name, or nil.
    package func device(named name: String) async throws(OutboxError) -> DeviceRecord? {
        try await read { db in
            try Row.fetchOne(db, sql: "SELECT name, secretHash, createdAt FROM device WHERE name = ?", arguments: [name]).map { row in
                let hash: Data = row["secretHash"]
                return DeviceRecord(name: row["name"], secretHash: [UInt8](hash), createdAt: row["createdAt"])
            }
        }
    }

    /// One request's points: the phone's, and when they came (each row's `createdAt`).
    package struct PhonePoints: Sendable {
        package var fixes: [Fix]
        package var device: String
        package var receivedAt: Date

        package init(_ fixes: [Fix], device: String, receivedAt: Date = Date()) {
            self.fixes = fixes
            self.device = device
            self.receivedAt = receivedAt
        }
    }

    /// Adds one request's points of `device` to the history in one transaction, committed (the
    /// outbox syncs in full) before this returns: a point is acknowledged to the phone only after.
    /// A point whose millisecond the history has from the same device already is skipped, so a
    /// batch sent again (the app never saw the reply) adds nothing: the unique index
    /// `fix_on_device_timestamp` refuses it (`ON CONFLICT DO NOTHING`), no lookup first.
    package func storePhonePoints(_ fixes: [Fix], device: String, now: Date = Date()) async throws(OutboxError) -> PhoneStoreResult {
        guard !fixes.isEmpty else { return PhoneStoreResult() }
        return try await storePhonePoints([PhonePoints(fixes, device: device, receivedAt: now)])[0]
    }

    /// Adds several requests' points in one transaction, committed before this returns (the
    /// receiver's group commit: the requests that came while the last commit synced share the
    /// next one). Each request's points are all there or none; what became of each request's
    /// points, in the order given.
    ///
    /// Bound and stepped through SQLite's C API (`RawStatement`), the device's name and each
    /// time bound without a copy: GRDB's arguments, a `DatabaseValue` array per statement, were
    /// most of the transaction's CPU for an Overland batch.
    package func storePhonePoints(_ requests: [PhonePoints]) async throws(OutboxError) -> [PhoneStoreResult] {
        guard requests.contains(where: { !$0.fixes.isEmpty }) else { return requests.map { _ in PhoneStoreResult() } }
        return try await write { db in
            let connection = db.sqliteConnection
            return try requests.map { request in
                let fixes = request.fixes
                var result = PhoneStoreResult()
                guard !fixes.isEmpty else { return result }
                let created = StorageTime.text(request.receivedAt)
                var name = request.device
                try name.withUTF8 { name in
                    let rows = PhonePointInsert.rowsPerGroup
                    let many = fixes.count >= rows ? try PhonePointInsert(connection, rows: rows, created: created, device: name) : nil
                    let one = fixes.count % rows > 0 ? try PhonePointInsert(connection, rows: 1, created: created, device: name) : nil
                    var start = 0
                    while start < fixes.count {
                        guard let insert = fixes.count - start >= rows ? many : one else { break }
                        try insert.store(fixes[start..<start + insert.rows], into: &result)
                        start += insert.rows
                    }
                }
                return result
            }
        }
    }

    /// When `device`'s latest point before `time` was taken (nil: none): one probe of the (device, time) index.
    package func latestFixTime(device: String, before time: Date) async throws(OutboxError) -> Date? {
        try await read { db in
            try Date.fetchOne(db, sql: "SELECT timestamp FROM fix WHERE device = ? AND timestamp < ? AND importRun IS NULL ORDER BY timestamp DESC LIMIT 1",
                              arguments: [device, time])
        }
    }

    /// The latest fix of `device` that has a note (where its movement is measured from after a
    /// restart). A digest's fix is the day's last, no arrival: left out.
    package func latestNotedFix(device: String) async throws(OutboxError) -> FixRecord? {
        try await readSkipping { db, unreadable in
            try Self.readableRecords(FixRecord.filter(Column("device") == device && Column("importRun") == nil)
                .filter(sql: """
                    EXISTS (SELECT 1 FROM note WHERE note.fixId = fix.id
                            AND NOT EXISTS (SELECT 1 FROM digest WHERE digest.noteId = note.id))
                    """)
                .order(Column("timestamp").desc, Column("id").desc), db, limit: 1, unreadable: &unreadable).first
        }
    }
}

/// One INSERT of `rows` points of one phone, `ON CONFLICT DO NOTHING` (the unique index
/// `fix_on_device_timestamp` refuses a (device, millisecond) already there), many rows a
/// statement for the reason `FixInsert` has them: a statement's own start and end, and
/// AUTOINCREMENT's `sqlite_sequence`, are paid once for all its rows. Row r has its ten
/// parameters from 1 + 10 r, creation time and device among them. Anonymous (`?`), not numbered:
/// SQLite looks each `?NNN` up among the statement's earlier ones when preparing it, which for
/// 500 of them was the receiver's most costly function (`sqlite3VListNumToName`, 4.6 % of its CPU).
final class PhonePointInsert {
    static let rowsPerGroup = 50
    private static let perRow: Int32 = 10

    let rows: Int
    private let statement: RawStatement
    /// Each row's time as `StorageTime` text, bound without a copy (SQLITE_STATIC) until the step.
    private let times: UnsafeMutablePointer<UInt8>
    /// What each row's source is bound to now (bindings outlive a reset): rebound only when it differs.
    private var sources: [Fix.Source?]

    /// `device`, the phone's name, is bound without a copy: the caller keeps it as it is while this lives.
    init(_ connection: OpaquePointer?, rows: Int, created: String, device: UnsafeBufferPointer<UInt8>) throws {
        self.rows = rows
        let row = "(" + Array(repeating: "?", count: Int(Self.perRow)).joined(separator: ", ") + ")"
        statement = try RawStatement(connection, """
            INSERT INTO fix (latitude, longitude, altitude, horizontalAccuracy, speed, course, timestamp, source, createdAt, device)
            VALUES \(Array(repeating: row, count: rows).joined(separator: ", ")) ON CONFLICT DO NOTHING
            """)
        times = .allocate(capacity: rows * StorageTime.length)
        sources = Array(repeating: nil, count: rows)
        for slot in 0..<Int32(rows) {
            try statement.bind(1 + slot * Self.perRow + 8, created)
            try statement.bindUnchanged(1 + slot * Self.perRow + 9, device.baseAddress, count: device.count)
        }
    }

    deinit { times.deallocate() }

    /// Inserts `points` (`rows` of them), adding to `result` how many were new and how many there already.
    func store(_ points: ArraySlice<Fix>, into result: inout OutboxStore.PhoneStoreResult) throws {
        precondition(points.count == rows, "a group is filled whole")
        for (slot, fix) in zip(0..., points) {
            try statement.bindFixColumns(fix, from: 1 + Int32(slot) * Self.perRow, time: times + slot * StorageTime.length,
                                         boundSource: &sources[slot])
        }
        let added = try statement.executeAdds()
        result.added += added
        result.alreadyThere += rows - added
    }
}
