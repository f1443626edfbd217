import Foundation
import GRDB
import GRDBSQLite
import Support
import Capture

extension OutboxSchema {
    /// How far `enlog serve`'s diary has gone through the points phones sent: every received
    /// point (a device's, no import run) up to the fix row `decidedThrough` has been decided on
    /// (a note or not, its day's digest). The receiver answers a phone once its points are
    /// committed and only tells the diary that there are new ones; the diary reads them from here
    /// in pages, so that a diary behind a fast phone costs rows on disk, not points in memory, and
    /// points committed just before a crash are decided after the restart.
    ///
    /// One row. It starts at the newest fix: an outbox from before has nothing left to decide.
    static let phoneDiaryMigration = OutboxMigration("phone-diary-v1") { db in
        try db.execute(sql: """
            CREATE TABLE phone_diary (id INTEGER PRIMARY KEY CHECK (id = 1), decidedThrough INTEGER NOT NULL)
            """)
        try db.execute(sql: "INSERT INTO phone_diary (id, decidedThrough) SELECT 1, COALESCE(MAX(id), 0) FROM fix")
    }
}

extension OutboxStore {
    /// Received points after the diary's mark, in row order, at most a page of them.
    package struct PhoneDiaryPage: Sendable {
        package struct Point: Sendable {
            package var device: String
            package var fix: Fix
            package var id: Int64
        }

        package var points: [Point]
        /// The last row this page accounts for (the diary's mark once it has decided on
        /// `points`): the last point's when the page is full, else the newest row of the history
        /// when it was read, so the rows an import added are passed over once, not scanned again.
        package var through: Int64
        /// Whether received points after `through` may wait: read the next page.
        package var full: Bool
    }

    /// The row up to which the diary has decided (`phone_diary.decidedThrough`).
    package func phoneDiaryMark() async throws(OutboxError) -> Int64 {
        try await read { db in
            try Int64.fetchOne(db, sql: "SELECT decidedThrough FROM phone_diary WHERE id = 1") ?? 0
        }
    }

    /// Keeps the diary's mark. Not in the transaction of the notes it decided: deciding a point
    /// again after a crash writes nothing twice (a note's point is the device's anchor, and the
    /// points up to it are older than it; a digest is written once per device and day).
    package func setPhoneDiaryMark(_ row: Int64) async throws(OutboxError) {
        try await write { db in
            try db.execute(sql: "UPDATE phone_diary SET decidedThrough = ? WHERE id = 1", arguments: [row])
        }
    }

    /// Up to `limit` points phones sent after row `mark`, oldest row first; a stored value enlog
    /// cannot read is left out with its warning (`readSkipping`).
    ///
    /// Read through SQLite's C API (`RawStatement`, `StoredFixColumns`): decoding each row as a
    /// `FixRecord` through GRDB's `Decodable` support was a fifth of the receiver's CPU while the
    /// diary read back a fast phone's points (`perf record` of bench/ingest).
    package func phoneDiaryPage(after mark: Int64, limit: Int) async throws(OutboxError) -> PhoneDiaryPage {
        try await readSkipping { db, unreadable in
            // The newest row, in the same snapshot as the page: a rowid range the scan stays in.
            let newest = try Int64.fetchOne(db, sql: "SELECT MAX(id) FROM fix") ?? mark
            let query = try RawStatement(db.sqliteConnection, """
                SELECT id, device, \(StoredFixColumns.names) FROM fix
                WHERE id > ? AND id <= ? AND device IS NOT NULL AND importRun IS NULL ORDER BY id LIMIT ?
                """)
            try query.bind(1, mark)
            try query.bind(2, newest)
            try query.bind(3, Int64(limit))
            var points: [PhoneDiaryPage.Point] = []
            points.reserveCapacity(min(limit, 4096))
            var rows = 0
            var last = mark
            try query.eachRow { row in
                rows += 1
                last = sqlite3_column_int64(row, 0)
                do throws(StoredFixColumns.Unreadable) {
                    let device = String(cString: sqlite3_column_text(row, 1))
                    points.append(PhoneDiaryPage.Point(device: device, fix: try StoredFixColumns.fix(row, from: 2), id: last))
                } catch {
                    unreadable.append(UnreadableRow(table: FixRecord.databaseTableName, id: last, detail: error.detail))
                }
            }
            let full = rows >= limit
            return PhoneDiaryPage(points: points, through: full ? last : max(newest, mark), full: full)
        }
    }
}

/// A fix's columns as `RawStatement.bindFixColumns` writes them, read back from a row without
/// GRDB's records, checked as `FixRecord` and `readableRecords` check them: a number column
/// holding text, a time that is none, a value `Fix` refuses is `Unreadable`, with the words of
/// `UnreadableRow`.
enum StoredFixColumns {
    static let names = "latitude, longitude, altitude, horizontalAccuracy, speed, course, timestamp, source"
    private static let numbers = ["latitude", "longitude", "altitude", "horizontalAccuracy", "speed", "course"]

    struct Unreadable: Error {
        var detail: String
    }

    /// The fix in the row's columns `first`… (in the order of `names`).
    static func fix(_ row: OpaquePointer?, from first: Int32) throws(Unreadable) -> Fix {
        // Column by column, in the order of `names`: no array a row (every point the diary reads).
        func number(_ offset: Int) throws(Unreadable) -> Double? {
            let column = first + Int32(offset)
            switch sqlite3_column_type(row, column) {
            case SQLITE_NULL: return nil
            case SQLITE_INTEGER, SQLITE_FLOAT: return sqlite3_column_double(row, column)
            default: throw Unreadable(detail: "its \(numbers[offset]) holds \(shown(row, column)), which is not a number")
            }
        }
        let latitude = try number(0), longitude = try number(1), altitude = try number(2)
        let horizontalAccuracy = try number(3), speed = try number(4), course = try number(5)
        let timeColumn = first + 6, sourceColumn = first + 7
        guard let latitude, let longitude else {
            throw Unreadable(detail: "its \(latitude == nil ? "latitude" : "longitude") is empty")
        }
        guard let timestamp = time(row, timeColumn) else {
            throw Unreadable(detail: "its timestamp holds \(shown(row, timeColumn)), which is not a time")
        }
        guard sqlite3_column_type(row, sourceColumn) == SQLITE_TEXT,
              let source = Fix.Source(rawValue: String(cString: sqlite3_column_text(row, sourceColumn))) else {
            throw Unreadable(detail: "its source holds \(shown(row, sourceColumn)), which is not a source enlog knows")
        }
        do {
            return try Fix(latitude: latitude, longitude: longitude, altitude: altitude, horizontalAccuracy: horizontalAccuracy,
                           speed: speed, course: course, timestamp: timestamp, source: source)
        } catch {
            throw Unreadable(detail: error.reason)
        }
    }

    /// `StorageTime` text read at once; any other form as GRDB reads a `Date` (what `FixRecord` does).
    private static func time(_ row: OpaquePointer?, _ column: Int32) -> Date? {
        if sqlite3_column_type(row, column) == SQLITE_TEXT, let text = sqlite3_column_text(row, column),
           let date = StorageTime.date(UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(row, column)))) {
            return date
        }
        guard let row else { return nil }
        return Date.fromDatabaseValue(DatabaseValue(sqliteStatement: row, index: column))
    }

    private static func shown(_ row: OpaquePointer?, _ column: Int32) -> String {
        guard let row else { return "nothing" }
        return DatabaseValue(sqliteStatement: row, index: column).shown
    }
}
