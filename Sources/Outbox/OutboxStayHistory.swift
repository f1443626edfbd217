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
    public struct StayFix: Sendable, Equatable {
        public var latitude: Double
        public var longitude: Double
        public var accuracy: Double?
        /// Seconds since 1970.
        public var time: Double
        /// Typed by hand (`--at`): a position the person chose.
        public var typed: Bool
    }

    public struct StayVisit: Sendable, Equatable {
        public var latitude: Double
        public var longitude: Double
        public var start: Double
        public var end: Double
        public var name: String?
        public var semanticType: String?
        public var address: String?
    }

    /// Seconds since 1970 of a stored time ("yyyy-MM-dd HH:mm:ss.SSS", UTC), in SQL.
    private static func epochSeconds(_ column: String) -> String {
        "(julianday(\(column)) - 2440587.5) * 86400.0"
    }

    /// Fixes with `start <= timestamp < end`, oldest first. Stepped through SQLite's C API: for
    /// millions of fixes, GRDB's rows cost several times the query itself.
    public func stayFixes(from start: Date, to end: Date) async throws(OutboxError) -> [StayFix] {
        try await read { db in
            let sql = """
                SELECT latitude, longitude, horizontalAccuracy, \(Self.epochSeconds("timestamp")), source = ?
                FROM fix WHERE timestamp >= ? AND timestamp < ? ORDER BY timestamp, id
                """
            let statement = try db.makeStatement(sql: sql)
            try statement.setArguments([Fix.Source.manual.rawValue, start, end])
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
                let accuracy = sqlite3_column_type(raw, 2) == SQLITE_NULL ? nil : sqlite3_column_double(raw, 2)
                fixes.append(StayFix(latitude: sqlite3_column_double(raw, 0), longitude: sqlite3_column_double(raw, 1),
                                     accuracy: accuracy, time: sqlite3_column_double(raw, 3), typed: sqlite3_column_int(raw, 4) != 0))
            }
            return fixes
        }
    }

    /// The time of the history's oldest fix (nil: no fix): the first entry of the timestamp index.
    public func firstFixTime() async throws(OutboxError) -> Date? {
        try await read { db in try Date.fetchOne(db, sql: "SELECT MIN(timestamp) FROM fix") }
    }

    /// Whether a fix was taken in `start..<end`: one probe of the timestamp index, however long the history.
    static let hasFixesSQL = "SELECT EXISTS (SELECT 1 FROM fix WHERE timestamp >= ? AND timestamp < ?)"

    public func hasFixes(from start: Date, to end: Date) async throws(OutboxError) -> Bool {
        try await read { db in try Bool.fetchOne(db, sql: Self.hasFixesSQL, arguments: [start, end]) ?? false }
    }

    /// Imported visits overlapping `start..<end`, oldest first.
    public func stayVisits(from start: Date, to end: Date) async throws(OutboxError) -> [StayVisit] {
        try await read { db in
            let sql = """
                SELECT latitude, longitude, \(Self.epochSeconds("start")), \(Self.epochSeconds("\"end\"")), name, semanticType, address
                FROM visit WHERE start < ? AND "end" > ? ORDER BY start, id
                """
            return try Row.fetchAll(db, sql: sql, arguments: [end, start]).map { row in
                StayVisit(latitude: row[0], longitude: row[1], start: row[2], end: row[3], name: row[4], semanticType: row[5],
                          address: row[6])
            }
        }
    }
}
