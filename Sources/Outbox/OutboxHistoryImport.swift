import Foundation
import GRDB
import GRDBSQLite
import Support
import EvernoteAPI
import Configuration
import Capture
import Compose

extension OutboxSchema {
    static let historyImportMigration = "v8-history-import"

    /// `fix.device` keeps apart the points several devices recorded at the same millisecond;
    /// `fix.importRun` and `visit.importRun` name the `enlog import` of a file that added them,
    /// so a file that turns out bad half-way can take back exactly what it added (see
    /// `HistoryImportWriter`). `visit` holds the stays another program judged.
    static func registerHistoryImportMigration(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration(historyImportMigration) { db in
            try db.alter(table: "fix") { t in
                t.add(column: "device", .text)
                t.add(column: "importRun", .integer)
            }
            try db.create(table: "importRun") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("path", .text).notNull()
                t.column("format", .text).notNull()
                t.column("state", .text).notNull().check(sql: "state IN ('running', 'done')")
                t.column("startedAt", .datetime).notNull()
                t.column("finishedAt", .datetime)
            }
            try db.create(index: "importRun_on_path_state", on: "importRun", columns: ["path", "state"])
            // Deleting a failed file's rows finds them here, not by a scan of the whole history.
            try db.execute(sql: "CREATE INDEX fix_on_importRun ON fix(importRun) WHERE importRun IS NOT NULL")
            try db.create(table: "visit") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("start", .datetime).notNull()
                t.column("end", .datetime).notNull()
                t.column("latitude", .double).notNull().check { $0 >= -90 && $0 <= 90 }
                t.column("longitude", .double).notNull().check { $0 >= -180 && $0 <= 180 }
                t.column("name", .text)
                t.column("address", .text)
                t.column("placeId", .text)
                t.column("semanticType", .text)
                t.column("format", .text).notNull()
                t.column("importRun", .integer)
                t.column("createdAt", .datetime).notNull()
            }
            // One stay once, however often its file is imported.
            try db.execute(sql: "CREATE UNIQUE INDEX visit_identity ON visit(start, end, ifnull(placeId, ''), latitude, longitude)")
        }
    }
}

/// Writes one file's points and visits into the history for `enlog import`, a chunk per
/// transaction, so that memory stays bounded and other writers (`watch`, `log`) wait at most
/// one chunk.
///
/// Why chunks and still "a bad file adds nothing": every row written carries the id of this
/// file's import run (`importRun`, a row naming the file, 'running' until the file has been
/// read to its end). A file that fails half-way is taken back with `abandon()`: its run's rows,
/// and those of earlier runs of the same file that never finished (a killed import), are
/// deleted in one transaction. A killed import leaves whole chunks, each a consistent part of
/// the history; the next run of the same file finds them "already there", adds what is missing,
/// and marks every unfinished run of that file done.
///
/// A point is already there when the history has one at the same millisecond from the same
/// device (no device: the device of enlog's own fixes). The lookup is served by
/// `fix_on_timestamp`; rows are bound through SQLite's C API on statements prepared once per
/// chunk, which is what makes an import of millions of points take seconds.
package final class HistoryImportWriter {
    package struct Counts: Sendable, Equatable {
        package var added = 0
        package var alreadyThere = 0
        package var visitsAdded = 0
        package var segmentsAdded = 0
    }

    let store: OutboxStore
    let path: String
    let format: String
    package let run: Int64

    package init(store: OutboxStore, path: String, format: String, now: Date = Date()) throws(OutboxError) {
        self.store = store
        self.path = path
        self.format = format
        run = try store.writeNow { db in
            try db.execute(sql: "INSERT INTO importRun (path, format, state, startedAt) VALUES (?, ?, 'running', ?)",
                           arguments: [path, format, now])
            return db.lastInsertedRowID
        }
    }

    /// Adds `points` and `visits` in one transaction.
    package func add(points: [HistoryPoint], visits: [HistoryVisit], segments: [HistorySegment] = [],
                     now: Date = Date()) throws(OutboxError) -> Counts {
        guard !points.isEmpty || !visits.isEmpty || !segments.isEmpty else { return Counts() }
        let run = self.run, format = self.format
        return try store.writeNow { db in
            var counts = Counts()
            let connection = db.sqliteConnection
            let created = StorageTime.text(now)
            if !points.isEmpty {
                let existing = try RawStatement(connection, "SELECT 1 FROM fix WHERE timestamp = ?1 AND device IS ?2 LIMIT 1")
                let insert = try RawStatement(connection, """
                    INSERT INTO fix (latitude, longitude, altitude, horizontalAccuracy, speed, course, timestamp, source, createdAt, device, importRun, utcOffset)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
                    """)
                for point in points {
                    let fix = point.fix
                    let time = StorageTime.text(fix.timestamp)
                    existing.bind(1, time)
                    existing.bind(2, point.device)
                    if try existing.stepFindsRow() {
                        counts.alreadyThere += 1
                        continue
                    }
                    insert.bind(1, fix.latitude)
                    insert.bind(2, fix.longitude)
                    insert.bind(3, fix.altitude)
                    insert.bind(4, fix.horizontalAccuracy)
                    insert.bind(5, fix.speed)
                    insert.bind(6, fix.course)
                    insert.bind(7, time)
                    insert.bind(8, fix.source.rawValue)
                    insert.bind(9, created)
                    insert.bind(10, point.device)
                    insert.bind(11, run)
                    insert.bind(12, point.utcOffset.map(Int64.init))
                    try insert.execute()
                    counts.added += 1
                }
            }
            if !visits.isEmpty {
                let insert = try RawStatement(connection, """
                    INSERT INTO visit (start, end, latitude, longitude, name, address, placeId, semanticType, format, importRun, createdAt, utcOffset)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) ON CONFLICT DO NOTHING
                    """)
                for visit in visits {
                    insert.bind(1, StorageTime.text(visit.start))
                    insert.bind(2, StorageTime.text(visit.end))
                    insert.bind(3, visit.latitude)
                    insert.bind(4, visit.longitude)
                    insert.bind(5, visit.name)
                    insert.bind(6, visit.address)
                    insert.bind(7, visit.placeId)
                    insert.bind(8, visit.semanticType)
                    insert.bind(9, format)
                    insert.bind(10, run)
                    insert.bind(11, created)
                    insert.bind(12, visit.utcOffset.map(Int64.init))
                    try insert.execute()
                    counts.visitsAdded += Int(sqlite3_changes(connection))
                }
            }
            counts.segmentsAdded = try HistoryImportWriter.insert(segments, format: format, run: run, created: created, connection: connection)
            return counts
        }
    }

    /// The file was read to its end: this run and every unfinished earlier run of the same file
    /// are done, their rows now part of the history like any other.
    package func finish(now: Date = Date()) throws(OutboxError) {
        let path = self.path, run = self.run
        try store.writeNow { db in
            try db.execute(sql: "UPDATE importRun SET state = 'done', finishedAt = ? WHERE id = ? OR (path = ? AND state = 'running')",
                           arguments: [now, run, path])
        }
    }

    /// The file is bad: what this run and the unfinished earlier runs of the same file added is
    /// taken back (rows a note was written on stay: a note's fix outlives its import).
    package func abandon() throws(OutboxError) {
        let path = self.path, run = self.run
        try store.writeNow { db in
            let runs = "SELECT id FROM importRun WHERE id = \(run) OR (path = ? AND state = 'running')"
            try db.execute(sql: "DELETE FROM fix WHERE importRun IN (\(runs)) AND id NOT IN (SELECT fixId FROM note)", arguments: [path])
            try db.execute(sql: "DELETE FROM visit WHERE importRun IN (\(runs))", arguments: [path])
            try db.execute(sql: "DELETE FROM segment WHERE importRun IN (\(runs))", arguments: [path])
            try db.execute(sql: "DELETE FROM importRun WHERE id IN (\(runs))", arguments: [path])
        }
    }
}

extension OutboxStore {
    /// Stays in the history (`visit`), oldest first.
    package func visits() async throws(OutboxError) -> [[String: DatabaseValue]] {
        try await read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM visit ORDER BY start, id").map { row in
                Dictionary(uniqueKeysWithValues: row.columnNames.map { ($0, row[$0] as DatabaseValue) })
            }
        }
    }
}

/// A statement prepared on the connection for one transaction's rows, bound and stepped through
/// SQLite's C API; errors become GRDB's `DatabaseError` so the store maps them as any other.
final class RawStatement {
    private let connection: OpaquePointer?
    private var statement: OpaquePointer?
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    init(_ connection: OpaquePointer?, _ sql: String) throws {
        self.connection = connection
        let code = sqlite3_prepare_v2(connection, sql, -1, &statement, nil)
        guard code == SQLITE_OK else { throw failure(code) }
    }

    deinit { sqlite3_finalize(statement) }

    func bind(_ index: Int32, _ value: Double?) {
        if let value { sqlite3_bind_double(statement, index, value) } else { sqlite3_bind_null(statement, index) }
    }

    func bind(_ index: Int32, _ value: Int64) {
        sqlite3_bind_int64(statement, index, value)
    }

    func bind(_ index: Int32, _ value: Int64?) {
        if let value { sqlite3_bind_int64(statement, index, value) } else { sqlite3_bind_null(statement, index) }
    }

    func bind(_ index: Int32, _ value: String?) {
        guard var text = value else {
            sqlite3_bind_null(statement, index)
            return
        }
        _ = text.withUTF8 { sqlite3_bind_text(statement, index, $0.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) }, Int32($0.count), Self.transient) }
    }

    /// Steps a query: whether it gave a row. Resets the statement for the next row.
    func stepFindsRow() throws -> Bool {
        defer { sqlite3_reset(statement) }
        let code = sqlite3_step(statement)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw failure(code)
        }
    }

    func execute() throws {
        defer { sqlite3_reset(statement) }
        let code = sqlite3_step(statement)
        guard code == SQLITE_DONE else { throw failure(code) }
    }

    private func failure(_ code: Int32) -> DatabaseError {
        DatabaseError(resultCode: ResultCode(rawValue: sqlite3_extended_errcode(connection)),
                      message: String(cString: sqlite3_errmsg(connection)))
    }
}
