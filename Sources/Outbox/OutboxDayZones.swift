import Foundation
import GRDB
import GRDBSQLite
import Support
import Configuration
import Capture

extension OutboxSchema {
    /// `utcOffset` (seconds east of UTC) beside an imported fix and visit: the clock the source
    /// wrote its time in (Google's newer exports say `+10:00`), so the day it was lived is read in
    /// that zone rather than in note.time_zone. NULL when the source said only the instant.
    static let dayZonesMigration = OutboxMigration("day-zones-v1") { db in
        let range = "BETWEEN \(Fix.Limits.utcOffset.lowerBound) AND \(Fix.Limits.utcOffset.upperBound)"
        try db.alter(table: "fix") { t in
            t.add(column: "utcOffset", .integer).check(sql: "utcOffset IS NULL OR utcOffset \(range)")
        }
        try db.alter(table: "visit") { t in
            t.add(column: "utcOffset", .integer).check(sql: "utcOffset IS NULL OR utcOffset \(range)")
        }
    }
}

extension OutboxStore {
    /// An offset the history states for an instant: a fix's, or a visit's start or end.
    package struct LivedOffset: Sendable, Equatable {
        /// Seconds since 1970.
        package var time: Double
        /// Seconds east of UTC.
        package var offset: Int
    }

    /// The offsets the history's fixes and visits state in `start..<end` (a visit at its start
    /// and its end, in the offset its start stated), oldest first. Served by `fix_on_timestamp`; fixes without an offset are skipped
    /// in SQLite, not loaded.
    package func livedOffsets(from start: Date, to end: Date) async throws(OutboxError) -> [LivedOffset] {
        try await readSkipping { db, unreadable in
            let sql = """
                SELECT \(Self.epochSecondsSQL("timestamp")) AS t, utcOffset, id, 'fix' FROM fix
                WHERE timestamp >= ?1 AND timestamp < ?2 AND utcOffset IS NOT NULL
                UNION ALL
                SELECT \(Self.epochSecondsSQL("start")) AS t, utcOffset, id, 'visit' FROM visit
                WHERE start >= ?1 AND start < ?2 AND utcOffset IS NOT NULL
                UNION ALL
                SELECT \(Self.epochSecondsSQL(#""end""#)) AS t, utcOffset, id, 'visit' FROM visit
                WHERE "end" >= ?1 AND "end" < ?2 AND "end" > start AND utcOffset IS NOT NULL
                ORDER BY t
                """
            // An offset that is no whole number is left out with a warning. A time SQLite cannot
            // read comes out NULL and is dropped here without one: the reads of the same rows
            // for stays (`stayFixes`, `stayVisits`) name it.
            return try Self.checkedRows(db, sql: sql, arguments: [start, end], table: nil,
                                        columns: [("t", .optionalNumber), ("utcOffset", .wholeNumber)],
                                        unreadable: &unreadable).compactMap { row in
                (row[0] as Double?).map { LivedOffset(time: $0, offset: row[1]) }
            }
        }
    }
}
