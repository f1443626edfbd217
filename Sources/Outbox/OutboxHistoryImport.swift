import Foundation
import GRDB
import GRDBSQLite
import Support
import EvernoteAPI
import Configuration
import Capture
import Compose

extension OutboxSchema {
    /// `fix.device` keeps apart the points several devices recorded at the same millisecond;
    /// `fix.importRun` and `visit.importRun` name the `enlog import` of a file that added them,
    /// so a file that turns out bad half-way can take back exactly what it added (see
    /// `HistoryImportWriter`). `visit` holds the stays another program judged.
    static let historyImportMigration = OutboxMigration("v8-history-import") { db in
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

extension OutboxSchema {
    /// The duplicate rule of `enlog import` kept by SQLite itself rather than by a lookup per
    /// point: a unique index on an imported point's time and device (no device: ''). Outboxes
    /// that already hold equal imported times keep the first (the lowest id); later ones are
    /// deleted, except one a note was written on, which stays as a fix outside any import (a
    /// note's fix outlives its import). enlog's own fixes (`log`, `watch`: no import run) may
    /// share a time, and an imported point without a device is refused at the time of one of
    /// them: `fix_own_on_timestamp` finds those, and holds only enlog's own fixes.
    ///
    /// `fix_on_importRun` gives way to `importRun.firstFix`: the first fix id a run can have
    /// written (ids only grow), so taking back a failed file's rows walks the rows since then
    /// in id order rather than an index every imported point paid for.
    static let fixIdentityMigration = OutboxMigration("fix-identity-v1") { db in
        let laterTwin = """
            importRun IS NOT NULL AND EXISTS (SELECT 1 FROM fix AS first WHERE first.timestamp = fix.timestamp
                AND first.importRun IS NOT NULL AND ifnull(first.device, '') = ifnull(fix.device, '') AND first.id < fix.id)
            """
        try db.execute(sql: "DELETE FROM fix WHERE \(laterTwin) AND id NOT IN (SELECT fixId FROM note)")
        try db.execute(sql: "UPDATE fix SET importRun = NULL WHERE \(laterTwin)")
        try db.execute(sql: "CREATE UNIQUE INDEX fix_import_identity ON fix(timestamp, ifnull(device, '')) WHERE importRun IS NOT NULL")
        try db.execute(sql: "CREATE INDEX fix_own_on_timestamp ON fix(timestamp) WHERE importRun IS NULL")
        try db.execute(sql: "DROP INDEX fix_on_importRun")
        try db.alter(table: "importRun") { t in t.add(column: "firstFix", .integer) }
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
/// device (no device: the device of enlog's own fixes). Among imported points the unique index
/// `fix_import_identity` refuses it as it is inserted (`ON CONFLICT DO NOTHING`); a point
/// without a device is also looked up among enlog's own fixes, and only when the chunk's time
/// span holds one. The statements are prepared once per writer and bound through SQLite's C
/// API, every return code checked: what makes an import of millions of points take seconds.
package final class HistoryImportWriter {
    package struct Counts: Sendable, Equatable {
        package var added = 0
        package var alreadyThere = 0
        package var visitsAdded = 0
        package var segmentsAdded = 0

        package init() {}

        package static func += (total: inout Counts, more: Counts) {
            total.added += more.added
            total.alreadyThere += more.alreadyThere
            total.visitsAdded += more.visitsAdded
            total.segmentsAdded += more.segmentsAdded
        }
    }

    let store: OutboxStore
    let path: String
    let format: String
    package let run: Int64
    /// Prepared on the writer connection at the first chunk, kept for the following ones.
    private var statements: ImportStatements?
    /// Which of the chunk's points the slots of the group statement hold, until it is full.
    private var groupPoints = [Int](repeating: 0, count: FixInsert.rowsPerGroup)

    package init(store: OutboxStore, path: String, format: String, now: Date = Date()) throws(OutboxError) {
        self.store = store
        self.path = path
        self.format = format
        run = try store.writeNow { db in
            try db.execute(sql: """
                INSERT INTO importRun (path, format, state, startedAt, firstFix)
                VALUES (?, ?, 'running', ?, ifnull((SELECT seq FROM sqlite_sequence WHERE name = 'fix'), 0) + 1)
                """, arguments: [path, format, now])
            return db.lastInsertedRowID
        }
    }

    deinit {
        // Finalized on the writer connection's own queue: SQLite's connection is not shared between threads.
        if statements != nil {
            try? store.writeNowWithoutTransaction { db in
                // The connection's own setting back, unless the store has opened another since.
                if db.sqliteConnection == statements?.connection {
                    sqlite3_exec(db.sqliteConnection, "PRAGMA temp_store = DEFAULT", nil, nil, nil)
                }
                statements = nil
            }
        }
    }

    /// Adds `points` and `visits` in one transaction.
    package func add(points: [HistoryPoint], visits: [HistoryVisit], segments: [HistorySegment] = [],
                     now: Date = Date()) throws(OutboxError) -> Counts {
        guard !points.isEmpty || !visits.isEmpty || !segments.isEmpty else { return Counts() }
        let run = self.run, format = self.format
        // A statement of many rows that could stop half-way (a CHECK) keeps a statement journal
        // to undo its own rows; with temporary files on disk SQLite wrote it to a file in
        // /var/tmp, six times the writes of the import itself (strace). In memory it is the few
        // pages one statement touches. Set outside the transaction (SQLite refuses it inside one
        // once the connection has its temporary schema open), a no-op after the first chunk;
        // only speed depends on it, so a refusal is no failure.
        try store.writeNowWithoutTransaction { db in
            _ = sqlite3_exec(db.sqliteConnection, "PRAGMA temp_store = MEMORY", nil, nil, nil)
        }
        return try store.writeNow { db in
            var counts = Counts()
            let connection = db.sqliteConnection
            let statements = try self.statements(on: connection)
            let created = StorageTime.text(now)
            if !points.isEmpty {
                counts.added = try insert(points, statements, created: created)
                counts.alreadyThere = points.count - counts.added
            }
            if !visits.isEmpty {
                let insert = statements.insertVisit
                try insert.bind(9, format)
                try insert.bind(10, run)
                try insert.bind(11, created)
                for visit in visits {
                    try insert.bind(1, StorageTime.text(visit.start))
                    try insert.bind(2, StorageTime.text(visit.end))
                    try insert.bind(3, visit.latitude)
                    try insert.bind(4, visit.longitude)
                    try insert.bind(5, visit.name)
                    try insert.bind(6, visit.address)
                    try insert.bind(7, visit.placeId)
                    try insert.bind(8, visit.semanticType)
                    try insert.bind(12, visit.utcOffset.map(Int64.init))
                    try insert.execute()
                    counts.visitsAdded += Int(sqlite3_changes(connection))
                }
            }
            counts.segmentsAdded = try HistoryImportWriter.insert(segments, format: format, run: run, created: created, connection: connection)
            return counts
        }
    }

    /// The points new to the history, inserted; the number added. Whole groups of
    /// `FixInsert.rowsPerGroup` go in one statement each; the rest one by one.
    private func insert(_ points: [HistoryPoint], _ statements: ImportStatements, created: String) throws -> Int {
        let group = statements.insertFixes, single = statements.insertFix
        let own = try ownFixTimes(within: points, statements)
        // Bindings outlive `sqlite3_reset`: what is the same for the whole chunk is bound once.
        try group.bindChunk(created: created, run: run)
        try single.bindChunk(created: created, run: run)
        var added = 0
        var slots = 0
        for index in points.indices {
            let point = points[index]
            if point.device == nil, let own, own.contains(StorageTime.text(point.fix.timestamp)) { continue }
            try group.bind(point, slot: slots)
            groupPoints[slots] = index
            slots += 1
            if slots == group.rows {
                added += try group.executeAdds()
                slots = 0
            }
        }
        for slot in 0..<slots {
            try single.bind(points[groupPoints[slot]], slot: 0)
            added += try single.executeAdds()
        }
        return added
    }

    /// The times (as stored) of enlog's own fixes that points without a device might meet: nil,
    /// the usual answer, when the chunk's span holds none (one probe of a small index).
    private func ownFixTimes(within points: [HistoryPoint], _ statements: ImportStatements) throws -> Set<String>? {
        var first = Date.distantFuture, last = Date.distantPast
        for point in points where point.device == nil {
            first = min(first, point.fix.timestamp)
            last = max(last, point.fix.timestamp)
        }
        guard first <= last else { return nil }
        let span = statements.ownFixesWithin
        try span.bind(1, StorageTime.text(first))
        try span.bind(2, StorageTime.text(last))
        var times: Set<String> = []
        try span.eachRow { statement in
            if let text = sqlite3_column_text(statement, 0) { times.insert(String(cString: text)) }
        }
        return times.isEmpty ? nil : times
    }

    private func statements(on connection: OpaquePointer?) throws -> ImportStatements {
        if let statements, statements.connection == connection { return statements }
        let prepared = try ImportStatements(connection)
        statements = prepared
        return prepared
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
    /// taken back (rows a note was written on stay: a note's fix outlives its import). The rows
    /// are found from the first fix id the earliest of those runs could have written on.
    package func abandon() throws(OutboxError) {
        let path = self.path, run = self.run
        try store.writeNow { db in
            let runs = "SELECT id FROM importRun WHERE id = \(run) OR (path = ? AND state = 'running')"
            let first = try Int64.fetchOne(db, sql: "SELECT min(ifnull(firstFix, 0)) FROM importRun WHERE id IN (\(runs))", arguments: [path]) ?? 0
            try db.execute(sql: "DELETE FROM fix WHERE id >= ? AND importRun IN (\(runs)) AND id NOT IN (SELECT fixId FROM note)",
                           arguments: [first, path])
            try db.execute(sql: "DELETE FROM visit WHERE importRun IN (\(runs))", arguments: [path])
            try db.execute(sql: "DELETE FROM segment WHERE importRun IN (\(runs))", arguments: [path])
            try db.execute(sql: "DELETE FROM importRun WHERE id IN (\(runs))", arguments: [path])
        }
    }
}

/// The statements of an import, prepared once on the writer connection.
final class ImportStatements {
    let connection: OpaquePointer?
    let insertFixes: FixInsert
    let insertFix: FixInsert
    let ownFixesWithin: RawStatement
    let insertVisit: RawStatement

    init(_ connection: OpaquePointer?) throws {
        self.connection = connection
        insertFixes = try FixInsert(connection, rows: FixInsert.rowsPerGroup)
        insertFix = try FixInsert(connection, rows: 1)
        ownFixesWithin = try RawStatement(connection, "SELECT timestamp FROM fix WHERE importRun IS NULL AND timestamp BETWEEN ?1 AND ?2")
        insertVisit = try RawStatement(connection, """
            INSERT INTO visit (start, end, latitude, longitude, name, address, placeId, semanticType, format, importRun, createdAt, utcOffset)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) ON CONFLICT DO NOTHING
            """)
    }
}

/// One INSERT of `rows` imported points (`ON CONFLICT DO NOTHING`: the unique index
/// `fix_import_identity` refuses a point already there). Many rows a statement because a
/// statement's own cost is most of an insert's: its start and end, and AUTOINCREMENT reading
/// and writing `sqlite_sequence` once per statement (`perf`: 50 rows a statement cut SQLite's
/// CPU per point by about a third). Parameters ?1 and ?2 (creation time, import run) are
/// shared by the rows; row r has the ten from 3 + 10 r.
final class FixInsert {
    static let rowsPerGroup = 50
    private static let perRow: Int32 = 10

    let rows: Int
    private let statement: RawStatement
    /// Each row's time as `StorageTime` text, bound without a copy (SQLITE_STATIC) until the step.
    private let times: UnsafeMutablePointer<UInt8>
    /// What each row's source and device are bound to now (bindings outlive a reset; nothing
    /// bound is NULL): rebound only when a point's differs.
    private var sources: [Fix.Source?]
    private var devices: [String?]

    init(_ connection: OpaquePointer?, rows: Int) throws {
        self.rows = rows
        let values = (0..<Int32(rows)).map { row in
            let first = 3 + row * Self.perRow
            let own = (0..<Self.perRow).map { "?\(first + $0)" }
            // latitude … source, createdAt, device, importRun, utcOffset
            return "(" + (own[0...7] + ["?1", own[8], "?2", own[9]]).joined(separator: ", ") + ")"
        }
        statement = try RawStatement(connection, """
            INSERT INTO fix (latitude, longitude, altitude, horizontalAccuracy, speed, course, timestamp, source, createdAt, device, importRun, utcOffset)
            VALUES \(values.joined(separator: ", ")) ON CONFLICT DO NOTHING
            """)
        times = .allocate(capacity: rows * StorageTime.length)
        sources = Array(repeating: nil, count: rows)
        devices = Array(repeating: nil, count: rows)
    }

    deinit { times.deallocate() }

    /// What every row of a chunk shares.
    func bindChunk(created: String, run: Int64) throws {
        try statement.bind(1, created)
        try statement.bind(2, run)
    }

    func bind(_ point: HistoryPoint, slot: Int) throws {
        let fix = point.fix
        let first = 3 + Int32(slot) * Self.perRow
        try statement.bindFixColumns(fix, from: first, time: times + slot * StorageTime.length, boundSource: &sources[slot])
        if point.device != devices[slot] {
            try statement.bind(first + 8, point.device)
            devices[slot] = point.device
        }
        try statement.bind(first + 9, point.utcOffset.map(Int64.init))
    }

    /// Steps the statement with every row bound: how many of them it added.
    func executeAdds() throws -> Int { try statement.executeAdds() }
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

extension RawStatement {
    /// A fix's own eight columns from parameter `first`, in the order the fix inserts list them
    /// (`FixInsert`, `PhonePointInsert`): latitude, longitude, altitude, horizontalAccuracy, speed,
    /// course, timestamp (written as `StorageTime` text into `time`, bound without a copy) and
    /// source, bound only when it differs from `boundSource`, what the parameter holds already.
    func bindFixColumns(_ fix: Fix, from first: Int32, time: UnsafeMutablePointer<UInt8>, boundSource: inout Fix.Source?) throws {
        StorageTime.write(fix.timestamp, into: time)
        try bind(first, fix.latitude)
        try bind(first + 1, fix.longitude)
        try bind(first + 2, fix.altitude)
        try bind(first + 3, fix.horizontalAccuracy)
        try bind(first + 4, fix.speed)
        try bind(first + 5, fix.course)
        try bindUnchanged(first + 6, time, count: StorageTime.length)
        if fix.source != boundSource {
            try bind(first + 7, fix.source.rawValue)
            boundSource = fix.source
        }
    }
}

/// A statement prepared on the connection, bound and stepped through SQLite's C API, every return
/// code checked; errors become GRDB's `DatabaseError` so the store maps them as any other.
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

    private func check(_ code: Int32) throws {
        guard code == SQLITE_OK else { throw failure(code) }
    }

    func bind(_ index: Int32, _ value: Double?) throws {
        try check(value.map { sqlite3_bind_double(statement, index, $0) } ?? sqlite3_bind_null(statement, index))
    }

    func bind(_ index: Int32, _ value: Int64) throws {
        try check(sqlite3_bind_int64(statement, index, value))
    }

    func bind(_ index: Int32, _ value: Int64?) throws {
        try check(value.map { sqlite3_bind_int64(statement, index, $0) } ?? sqlite3_bind_null(statement, index))
    }

    /// Text SQLite copies: the value may go away after the call.
    func bind(_ index: Int32, _ value: String?) throws {
        guard var text = value else { return try check(sqlite3_bind_null(statement, index)) }
        try check(text.withUTF8 { sqlite3_bind_text(statement, index, $0.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) }, Int32($0.count), Self.transient) })
    }

    /// Text SQLite does not copy (SQLITE_STATIC): the bytes must stay as they are until the next
    /// step has returned.
    func bindUnchanged(_ index: Int32, _ bytes: UnsafePointer<UInt8>?, count: Int) throws {
        // No bytes at all is the empty text, not NULL (which a null pointer would bind).
        guard let bytes else { return try check(sqlite3_bind_text(statement, index, "", 0, Self.transient)) }
        try check(sqlite3_bind_text(statement, index, UnsafeRawPointer(bytes).assumingMemoryBound(to: CChar.self), Int32(count), nil))
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

    /// Steps a query to its end, `body` called on each row; resets the statement.
    func eachRow(_ body: (OpaquePointer?) throws -> Void) throws {
        defer { sqlite3_reset(statement) }
        while true {
            let code = sqlite3_step(statement)
            switch code {
            case SQLITE_ROW: try body(statement)
            case SQLITE_DONE: return
            default: throw failure(code)
            }
        }
    }

    func execute() throws {
        defer { sqlite3_reset(statement) }
        let code = sqlite3_step(statement)
        guard code == SQLITE_DONE else { throw failure(code) }
    }

    /// Steps an insert that may do nothing (`ON CONFLICT DO NOTHING`): 1 when it added its row.
    func executeAdds() throws -> Int {
        try execute()
        return Int(sqlite3_changes(connection))
    }

    /// The connection's extended code when it is about this failure (a step's), else the code
    /// itself (a bind's, which the connection may not record).
    private func failure(_ code: Int32) -> DatabaseError {
        let extended = sqlite3_extended_errcode(connection)
        return DatabaseError(resultCode: ResultCode(rawValue: extended & 0xFF == code & 0xFF ? extended : code),
                             message: String(cString: sqlite3_errstr(code)) + ": " + String(cString: sqlite3_errmsg(connection)))
    }
}
