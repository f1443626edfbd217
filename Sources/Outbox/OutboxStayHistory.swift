import Foundation
import GRDB
import GRDBSQLite
import Support
import Configuration
import Capture

/// The history as stay detection reads it: every fix of a span (notes, watch's track, imports)
/// as plain numbers, and the visits imports brought. Read straight from SQLite rows, times as
/// seconds since 1970 computed by SQLite, so millions of fixes load in seconds.
extension OutboxStore {
    package struct StayFix: Sendable, Equatable {
        package var latitude: Double
        package var longitude: Double
        package var accuracy: Double?
        /// Seconds since 1970.
        package var time: Double
        /// Typed by hand (`--at`): a position the person chose.
        package var typed: Bool
    }

    package struct StayVisit: Sendable, Equatable {
        package var latitude: Double
        package var longitude: Double
        package var start: Double
        package var end: Double
        package var name: String?
        package var semanticType: String?
        package var address: String?
    }

    private static func epochSeconds(_ column: String) -> String { epochSecondsSQL(column) }

    /// Fixes with `start <= timestamp < end`, oldest first. Stepped through SQLite's C API: for
    /// millions of fixes, GRDB's rows cost several times the query itself.
    package func stayFixes(from start: Date, to end: Date) async throws(OutboxError) -> [StayFix] {
        let device = Self.deviceScope
        return try await readSkipping { db, unreadable in
            let sql = """
                SELECT latitude, longitude, horizontalAccuracy, \(Self.epochSeconds("timestamp")), source = ?, id
                FROM fix WHERE timestamp >= ? AND timestamp < ?\(device == nil ? "" : " AND device = ?") ORDER BY timestamp, id
                """
            let statement = try db.makeStatement(sql: sql)
            var arguments: [any DatabaseValueConvertible] = [Fix.Source.manual.rawValue, start, end]
            if let device { arguments.append(device) }
            try statement.setArguments(StatementArguments(arguments))
            let raw = statement.sqliteStatement
            var fixes: [StayFix] = []
            while true {
                let code = sqlite3_step(raw)
                guard code == SQLITE_ROW else {
                    guard code == SQLITE_DONE else {
                        throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
                    }
                    break
                }
                // sqlite3_column_double turns text into 0: a fix whose values are not numbers is
                // left out (with a warning) rather than placed at 0,0.
                let isNumber = { (column: Int32) in [SQLITE_INTEGER, SQLITE_FLOAT].contains(sqlite3_column_type(raw, column)) }
                let accuracyType = sqlite3_column_type(raw, 2)
                guard isNumber(0), isNumber(1), isNumber(3), accuracyType == SQLITE_NULL || isNumber(2) else {
                    // Rare: the row is read again through the checked reader, which names the bad value.
                    let id = sqlite3_column_int64(raw, 5)
                    _ = try Self.checkedRows(db, sql: """
                        SELECT latitude, longitude, horizontalAccuracy, \(Self.epochSeconds("timestamp")), id FROM fix WHERE id = ?
                        """, arguments: [id], table: "fix", columns: Self.stayFixColumns, unreadable: &unreadable)
                    continue
                }
                let accuracy = accuracyType == SQLITE_NULL ? nil : sqlite3_column_double(raw, 2)
                fixes.append(StayFix(latitude: sqlite3_column_double(raw, 0), longitude: sqlite3_column_double(raw, 1),
                                     accuracy: accuracy, time: sqlite3_column_double(raw, 3), typed: sqlite3_column_int(raw, 4) != 0))
            }
            return fixes
        }
    }

    /// What a fix read for stays must hold: latitude, longitude, accuracy and its time.
    static let stayFixColumns: [(name: String, kind: StoredKind)] = [
        ("latitude", .number), ("longitude", .number), ("horizontalAccuracy", .optionalNumber), ("timestamp", .time(column: "timestamp")),
    ]

    /// The time of the history's oldest fix (nil: no fix): the first entry of the timestamp index.
    package func firstFixTime() async throws(OutboxError) -> Date? {
        // The first entry of the timestamp index that is a time: a fix whose timestamp is none
        // (sqlite3 wrote a number, which sorts first, or text) is left out with a warning.
        try await readSkipping { db, unreadable in
            let rows = try Row.fetchCursor(db, sql: "SELECT timestamp, id FROM fix ORDER BY timestamp")
            while let row = try rows.next() {
                let value = row[0] as DatabaseValue
                if case .string = value.storage, let time = Date.fromDatabaseValue(value) { return time }
                unreadable.append(UnreadableRow(table: "fix", id: Int64.fromDatabaseValue(row[1] as DatabaseValue),
                                                detail: "its timestamp holds \(value.shown), which is not a time"))
            }
            return nil
        }
    }

    /// Whether a fix was taken in `start..<end`: one probe of the timestamp index, however long the history.
    static let hasFixesSQL = "SELECT EXISTS (SELECT 1 FROM fix WHERE timestamp >= ? AND timestamp < ?)"

    package func hasFixes(from start: Date, to end: Date) async throws(OutboxError) -> Bool {
        if let device = Self.deviceScope {
            // The (device, time) index: one probe too.
            return try await read { db in
                try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM fix WHERE device = ? AND timestamp >= ? AND timestamp < ?)",
                                  arguments: [device, start, end]) ?? false
            }
        }
        return try await read { db in try Bool.fetchOne(db, sql: Self.hasFixesSQL, arguments: [start, end]) ?? false }
    }

    /// Imported visits overlapping `start..<end`, oldest first. A visit holding a value of
    /// another type (text for a latitude, a start that is no time) is left out with a warning.
    package func stayVisits(from start: Date, to end: Date) async throws(OutboxError) -> [StayVisit] {
        // Visits are another program's judgement of an imported file: no phone's.
        if Self.deviceScope != nil { return [] }
        return try await readSkipping { db, unreadable in
            let sql = """
                SELECT latitude, longitude, \(Self.epochSeconds("start")), \(Self.epochSeconds("\"end\"")), name, semanticType, address, id
                FROM visit WHERE start < ? AND "end" > ? ORDER BY start, id
                """
            let columns: [(name: String, kind: StoredKind)] = [
                ("latitude", .number), ("longitude", .number), ("start", .time(column: "start")), ("end", .time(column: "end")),
                ("name", .optionalText), ("semanticType", .optionalText), ("address", .optionalText),
            ]
            return try Self.checkedRows(db, sql: sql, arguments: [end, start], table: "visit", columns: columns,
                                        unreadable: &unreadable).map { row in
                StayVisit(latitude: row[0], longitude: row[1], start: row[2], end: row[3], name: row[4], semanticType: row[5],
                          address: row[6])
            }
        }
    }
}
