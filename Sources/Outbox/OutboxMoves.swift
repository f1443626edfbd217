import Foundation
import GRDB
import GRDBSQLite
import Support
import Configuration
import Capture

extension OutboxSchema {
    /// `segment` keeps the stretches of movement an import's source judged (Google's
    /// `activitySegment`, the on-device `activity`): their times, ends, the distance and mode
    /// the source states, and the untimed waypoints between the ends ("lat,lon;lat,lon", in
    /// order). A day's moves take their distance and mode from here (`Timeline`).
    static let dayMovesMigration = OutboxMigration("day-moves-v1") { db in
        try db.create(table: "segment") { t in
            t.autoIncrementedPrimaryKey("id")
            t.column("start", .datetime).notNull()
            t.column("end", .datetime).notNull()
            t.column("startLatitude", .double).check { $0 >= -90 && $0 <= 90 }
            t.column("startLongitude", .double).check { $0 >= -180 && $0 <= 180 }
            t.column("endLatitude", .double).check { $0 >= -90 && $0 <= 90 }
            t.column("endLongitude", .double).check { $0 >= -180 && $0 <= 180 }
            t.column("distance", .double).check { $0 >= 0 }
            t.column("mode", .text)
            t.column("waypoints", .text).notNull().defaults(to: "")
            t.column("format", .text).notNull()
            t.column("importRun", .integer)
            t.column("createdAt", .datetime).notNull()
        }
        // One segment once, however often its file is imported.
        try db.execute(sql: """
            CREATE UNIQUE INDEX segment_identity ON segment(start, end, ifnull(startLatitude, 999), ifnull(startLongitude, 999))
            """)
        try db.create(index: "segment_on_end", on: "segment", columns: ["end"])
    }

    /// "lat,lon;lat,lon" with 7 decimals (Google's E7 precision).
    static func waypointsText(_ waypoints: [HistorySegment.Waypoint]) -> String {
        waypoints.map { String(format: "%.7f,%.7f", $0.latitude, $0.longitude) }.joined(separator: ";")
    }

    static func waypoints(_ text: String) -> [HistorySegment.Waypoint] {
        text.split(separator: ";").compactMap { pair in
            let parts = pair.split(separator: ",")
            guard parts.count == 2, let latitude = Double(parts[0]), let longitude = Double(parts[1]),
                  Fix.Limits.latitude.contains(latitude), Fix.Limits.longitude.contains(longitude) else { return nil }
            return HistorySegment.Waypoint(latitude: latitude, longitude: longitude)
        }
    }
}

extension HistoryImportWriter {
    /// Adds `segments` inside the transaction of `add`; the number new to the history.
    static func insert(_ segments: [HistorySegment], format: String, run: Int64, created: String,
                       connection: OpaquePointer?) throws -> Int {
        guard !segments.isEmpty else { return 0 }
        let insert = try RawStatement(connection, """
            INSERT INTO segment (start, end, startLatitude, startLongitude, endLatitude, endLongitude, distance, mode,
                                 waypoints, format, importRun, createdAt)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) ON CONFLICT DO NOTHING
            """)
        var added = 0
        for segment in segments {
            try insert.bind(1, StorageTime.text(segment.start))
            try insert.bind(2, StorageTime.text(segment.end))
            try insert.bind(3, segment.startPoint?.latitude)
            try insert.bind(4, segment.startPoint?.longitude)
            try insert.bind(5, segment.endPoint?.latitude)
            try insert.bind(6, segment.endPoint?.longitude)
            try insert.bind(7, segment.distance)
            try insert.bind(8, segment.mode)
            try insert.bind(9, OutboxSchema.waypointsText(segment.waypoints))
            try insert.bind(10, format)
            try insert.bind(11, run)
            try insert.bind(12, created)
            try insert.execute()
            added += Int(sqlite3_changes(connection))
        }
        return added
    }
}

extension OutboxStore {
    /// A source's stretch of movement as the timeline reads it: times in seconds since 1970.
    package struct StaySegment: Sendable, Equatable {
        package var start: Double
        package var end: Double
        package var startLatitude: Double?
        package var startLongitude: Double?
        package var endLatitude: Double?
        package var endLongitude: Double?
        /// Metres, the source's own figure.
        package var distance: Double?
        /// The source's own word.
        package var mode: String?
        package var waypoints: [(latitude: Double, longitude: Double)]

        package static func == (a: StaySegment, b: StaySegment) -> Bool {
            a.start == b.start && a.end == b.end && a.startLatitude == b.startLatitude && a.startLongitude == b.startLongitude
                && a.endLatitude == b.endLatitude && a.endLongitude == b.endLongitude && a.distance == b.distance
                && a.mode == b.mode && a.waypoints.elementsEqual(b.waypoints) { $0 == $1 }
        }
    }

    /// Imported segments overlapping `start..<end`, oldest first.
    package func staySegments(from start: Date, to end: Date) async throws(OutboxError) -> [StaySegment] {
        // Segments come from imported files: no phone's.
        if Self.deviceScope != nil { return [] }
        return try await readSkipping { db, unreadable in
            let sql = """
                SELECT \(Self.epochSecondsSQL("start")), \(Self.epochSecondsSQL("\"end\"")), startLatitude, startLongitude,
                       endLatitude, endLongitude, distance, mode, waypoints, id
                FROM segment WHERE start < ? AND "end" >= ? ORDER BY start, id
                """
            // A segment holding a value of another type is left out with a warning.
            let columns: [(name: String, kind: StoredKind)] = [
                ("start", .time(column: "start")), ("end", .time(column: "end")), ("startLatitude", .optionalNumber),
                ("startLongitude", .optionalNumber), ("endLatitude", .optionalNumber), ("endLongitude", .optionalNumber),
                ("distance", .optionalNumber), ("mode", .optionalText), ("waypoints", .optionalText),
            ]
            return try Self.checkedRows(db, sql: sql, arguments: [end, start], table: "segment", columns: columns,
                                        unreadable: &unreadable).map { row in
                StaySegment(start: row[0], end: row[1], startLatitude: row[2], startLongitude: row[3], endLatitude: row[4],
                            endLongitude: row[5], distance: row[6], mode: row[7],
                            waypoints: OutboxSchema.waypoints(row[8] as String? ?? "").map { ($0.latitude, $0.longitude) })
            }
        }
    }

    /// Seconds since 1970 of a stored time ("yyyy-MM-dd HH:mm:ss.SSS", UTC), in SQL; NULL when
    /// what is stored is no such text (julianday() would read a number as a day of 4713 BC),
    /// for `StoredKind.time` to find.
    static func epochSecondsSQL(_ column: String) -> String {
        "(julianday(CASE WHEN typeof(\(column)) = 'text' THEN \(column) END) - 2440587.5) * 86400.0"
    }
}

extension OutboxStore {
    /// The last fix before `start` and the first at or after `end` (each nil when there is none):
    /// where the track was just outside a span, so a day's first and last moves reach the data
    /// beyond it. Two probes of the timestamp index, however long the history. Under
    /// `deviceScope`, that device's fixes only (the (device, time) index): another phone's
    /// point is no end of this one's move.
    package func neighbourFixes(before start: Date, after end: Date) async throws(OutboxError) -> (StayFix?, StayFix?) {
        let device = Self.deviceScope
        return try await readSkipping { db, unreadable in
            // A neighbour holding a value of another type is left out with a warning, and the
            // next readable fix beyond it taken.
            func fix(_ sql: String, _ time: Date) throws -> StayFix? {
                var arguments: StatementArguments = [Fix.Source.manual.rawValue]
                if let device { arguments += [device] }
                arguments += [time]
                let cursor = try Row.fetchCursor(db, sql: sql, arguments: arguments)
                while let candidate = try cursor.next() {
                    let id = candidate[0] as Int64
                    let typed = candidate[1] as Bool
                    if let row = try Self.checkedRows(db, sql: """
                        SELECT latitude, longitude, horizontalAccuracy, \(Self.epochSecondsSQL("timestamp")), id FROM fix WHERE id = ?
                        """, arguments: [id], table: "fix", columns: Self.stayFixColumns, unreadable: &unreadable).first {
                        return StayFix(latitude: row[0], longitude: row[1], accuracy: row[2], time: row[3], typed: typed)
                    }
                }
                return nil
            }
            let columns = "id, ifnull(source = ?, 0)"
            let ofDevice = device == nil ? "" : "device = ? AND "
            return (try fix("SELECT \(columns) FROM fix WHERE \(ofDevice)timestamp < ? ORDER BY timestamp DESC, id DESC", start),
                    try fix("SELECT \(columns) FROM fix WHERE \(ofDevice)timestamp >= ? ORDER BY timestamp, id", end))
        }
    }
}
