import Foundation
import GRDB
import XCTest

/// A value another program wrote where enlog stores something else (text in a REAL column, a
/// time that is none): the listings leave that row out with one warning naming it and the
/// value, show the rest, and keep the row as it is; no raw dump of GRDB's, no exit 73.
final class UnreadableRowTests: XCTestCase {
    func testARowWithAnUndecodableValueIsLeftOutWithOneLineAndKept() throws {
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_MAP_STYLE"] = "none"
        home.extraEnvironment["ENLOG_NOTE_TIME_ZONE"] = "UTC"
        let file = try home.directory.file("day.csv", contents: HistoryImportTests.csv(points: 5))
        XCTAssertEqual(try home.run("import", file.path).status, 0)
        XCTAssertEqual(try home.run("log", "--at", "48.1,11.5", "--no-sync", "--no-geocode").status, 0)
        // As sqlite3 would: a REAL column takes text that is no number as text.
        try DatabaseQueue(path: home.database).write { db in
            // A CHECK keeps latitudes in range; sqlite3 can be told to ignore it.
            try db.execute(sql: "PRAGMA ignore_check_constraints = ON")
            try db.execute(sql: "UPDATE fix SET latitude = 'north' WHERE id = 3")
            try db.execute(sql: "UPDATE note SET createdAt = 'not a time' WHERE id = 1")
        }
        let fixWarning = "enlog: warning: fix 3 is left out: its latitude holds \"north\", which is not a number; "
            + "it stays in the outbox as it is (sqlite3 \(home.database) \"SELECT * FROM fix WHERE id = 3\" shows it)"

        let history = try home.run("history", "--track", "--since", "2024-06-15")
        XCTAssertEqual(history.status, 0, history.standardError)
        XCTAssertEqual(history.standardErrorLines, [fixWarning])
        XCTAssertEqual(history.standardOutput.split(separator: "\n").count, 10, history.standardOutput)

        let digest = try home.run("digest", "--date", "2024-06-15", "--no-sync")
        XCTAssertEqual(digest.status, 0, digest.standardError)
        XCTAssertTrue(digest.standardErrorLines.contains(fixWarning), digest.standardError)
        XCTAssertFalse(digest.standardError.contains("could not decode"), digest.standardError)

        let listed = try home.run("queue", "list", "--json")
        XCTAssertEqual(listed.status, 0, listed.standardError)
        XCTAssertEqual(listed.standardErrorLines.count, 1, listed.standardError)
        XCTAssertTrue(listed.standardError.hasPrefix("enlog: warning: note 1 is left out: its createdAt holds \"not a time\", which is not a time;"),
                      listed.standardError)
        let notes = try JSONSerialization.jsonObject(with: Data(listed.standardOutput.utf8)) as? [[String: Any]]
        XCTAssertEqual(notes?.compactMap { $0["id"] as? Int }, [2], "the digest's note; the logged one is left out")

        let kept = try DatabaseQueue(path: home.database).read { db in
            (try String.fetchOne(db, sql: "SELECT latitude FROM fix WHERE id = 3"),
             try String.fetchOne(db, sql: "SELECT createdAt FROM note WHERE id = 1"))
        }
        XCTAssertEqual(kept.0, "north")
        XCTAssertEqual(kept.1, "not a time")
    }

    /// The reads for stays, moves, offsets and places (`timeline`, `digest`, `places`): a value
    /// of another type in a visit, an activity segment, a fix beside the day, a fix's offset or
    /// a place is one warning and the row left out, never a crash (GRDB traps on such a value)
    /// nor a 0 read for text.
    func testTheDiarysReadsLeaveOutAMistypedRowWithAWarning() throws {
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        home.extraEnvironment["ENLOG_MAP_STYLE"] = "none"
        home.extraEnvironment["ENLOG_NOTE_TIME_ZONE"] = "UTC"
        let file = try home.directory.file("day.csv", contents: TimelineCommandTests.csv())
        XCTAssertEqual(try home.run("import", file.path).status, 0)
        let day = TimelineCommandTests.day
        // As sqlite3 would write them, CHECKs ignored.
        let (fixInDay, fixBefore) = try DatabaseQueue(path: home.database).write { db -> (Int64, Int64) in
            try db.execute(sql: "PRAGMA ignore_check_constraints = ON")
            try db.execute(sql: "UPDATE visit SET \"end\" = 'x' WHERE id = 1")
            try db.execute(sql: """
                INSERT INTO segment (start, "end", startLatitude, startLongitude, format, createdAt)
                VALUES ('2026-03-02 12:10:00.000', '2026-03-02 12:20:00.000', 'north', 11.6, 'sqlite3', '2026-03-02 12:00:00.000')
                """)
            let fixInDay = try Int64.fetchOne(db, sql: "SELECT id FROM fix WHERE timestamp >= '2026-03-02 09:00' ORDER BY timestamp LIMIT 1")!
            try db.execute(sql: "UPDATE fix SET longitude = 'east' WHERE id = ?", arguments: [fixInDay])
            try db.execute(sql: "UPDATE fix SET utcOffset = 'plus one' WHERE id = ?", arguments: [fixInDay + 1])
            try db.execute(sql: """
                INSERT INTO fix (latitude, longitude, timestamp, source, createdAt)
                VALUES ('south', 11.5, '2026-03-01 23:00:00.000', 'imported', '2026-03-02 12:00:00.000')
                """)
            let fixBefore = db.lastInsertedRowID
            try db.execute(sql: """
                INSERT INTO place (latitude, longitude, radius, name, nameSource, createdAt)
                VALUES (48.1, 11.5, 'wide', 'Sqlite', 'user', '2026-03-02 12:00:00.000')
                """)
            return (fixInDay, fixBefore)
        }
        func warning(_ table: String, _ id: Int64, _ detail: String) -> String {
            "enlog: warning: \(table) \(id) is left out: \(detail); it stays in the outbox as it is "
                + "(sqlite3 \(home.database) \"SELECT * FROM \(table) WHERE id = \(id)\" shows it)"
        }
        let visit = warning("visit", 1, "its end holds \"x\", which is not a time")
        let segment = warning("segment", 1, "its startLatitude holds \"north\", which is not a number")
        let fix = warning("fix", fixInDay, "its longitude holds \"east\", which is not a number")
        let offset = warning("fix", fixInDay + 1, "its utcOffset holds \"plus one\", which is not a whole number")
        let neighbour = warning("fix", fixBefore, "its latitude holds \"south\", which is not a number")
        let place = warning("place", 1, "its radius holds \"wide\", which is not a number")

        let timeline = try home.run("timeline", "--date", day, "--json")
        XCTAssertEqual(timeline.status, 0, timeline.standardError)
        for line in [visit, segment, fix, offset, neighbour] {
            XCTAssertTrue(timeline.standardErrorLines.contains(line), "\(line)\n\(timeline.standardError)")
        }
        let stays = try XCTUnwrap((try TimelineCommandTests.json(timeline))["stays"] as? [[String: Any]])
        XCTAssertEqual(stays.map { $0["origin"] as? String }, ["fixes", "fixes"], "the visit is left out, the fixes' stays kept")
        XCTAssertFalse(stays.contains { abs(($0["longitude"] as? Double ?? 0)) < 1 }, "no fix read as 0: \(stays)")

        let digest = try home.run("digest", "--date", day, "--no-sync")
        XCTAssertEqual(digest.status, 0, digest.standardError)
        XCTAssertTrue(digest.standardErrorLines.contains(visit), digest.standardError)
        XCTAssertFalse(digest.standardError.contains("could not decode"), digest.standardError)

        let places = try home.run("places")
        XCTAssertEqual(places.status, 0, places.standardError)
        XCTAssertTrue(places.standardErrorLines.contains(place), places.standardError)
        XCTAssertFalse(places.standardOutput.contains("Sqlite"), places.standardOutput)

        let history = try home.run("history", "--track", "--since", day)
        XCTAssertEqual(history.status, 0, history.standardError)

        let kept = try DatabaseQueue(path: home.database).read { db in
            try String.fetchOne(db, sql: "SELECT \"end\" FROM visit WHERE id = 1")
        }
        XCTAssertEqual(kept, "x")
    }
}
