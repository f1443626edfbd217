import Foundation
import GRDB
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
        public var source: Fix.Source
    }

    public struct StayVisit: Sendable, Equatable {
        public var latitude: Double
        public var longitude: Double
        public var start: Double
        public var end: Double
        public var name: String?
        public var semanticType: String?
    }

    /// Seconds since 1970 of a stored time ("yyyy-MM-dd HH:mm:ss.SSS", UTC), in SQL.
    private static func epochSeconds(_ column: String) -> String {
        "(julianday(\(column)) - 2440587.5) * 86400.0"
    }

    /// Fixes with `start <= timestamp < end`, oldest first.
    public func stayFixes(from start: Date, to end: Date) async throws(OutboxError) -> [StayFix] {
        try await read { db in
            let sql = """
                SELECT latitude, longitude, horizontalAccuracy, \(Self.epochSeconds("timestamp")), source
                FROM fix WHERE timestamp >= ? AND timestamp < ? ORDER BY timestamp, id
                """
            var fixes: [StayFix] = []
            let rows = try Row.fetchCursor(db, sql: sql, arguments: [start, end])
            while let row = try rows.next() {
                let source: String = row[4]
                fixes.append(StayFix(latitude: row[0], longitude: row[1], accuracy: row[2], time: row[3],
                                     source: Fix.Source(rawValue: source) ?? .imported))
            }
            return fixes
        }
    }

    /// Imported visits overlapping `start..<end`, oldest first.
    public func stayVisits(from start: Date, to end: Date) async throws(OutboxError) -> [StayVisit] {
        try await read { db in
            let sql = """
                SELECT latitude, longitude, \(Self.epochSeconds("start")), \(Self.epochSeconds("\"end\"")), name, semanticType
                FROM visit WHERE start < ? AND "end" > ? ORDER BY start, id
                """
            return try Row.fetchAll(db, sql: sql, arguments: [end, start]).map { row in
                StayVisit(latitude: row[0], longitude: row[1], start: row[2], end: row[3], name: row[4], semanticType: row[5])
            }
        }
    }
}
