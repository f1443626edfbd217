import Foundation
import GRDB
import XCTest
@testable import Outbox

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
    /// of another type in a visit, an activity segment, a fix of the day or beside it, a fix's
    /// offset, the first fix or a place is one warning and the row left out, never a crash (GRDB
    /// traps on such a value) nor a 0 or a day of 4713 BC read for it. Each value on a day of
    /// its own, so that one crash does not hide another.
    func testTheDiarysReadsLeaveOutAMistypedRowWithAWarning() throws {
        struct Case {
            var sql: String
            var table: String
            /// The row's id: a number, or SQL finding it.
            var id: String
            var detail: String
            /// The commands that read the row and must say it.
            var saidBy: [String]
        }
        let inDay = "(SELECT id FROM fix WHERE timestamp >= '2026-03-02 09:00' ORDER BY timestamp LIMIT 1)"
        let before = "(SELECT id FROM fix WHERE timestamp < '2026-03-02' ORDER BY timestamp DESC LIMIT 1)"
        let cases = [
            Case(sql: "UPDATE visit SET \"end\" = 'x' WHERE id = 1", table: "visit", id: "1",
                 detail: "its end holds \"x\", which is not a time", saidBy: ["timeline", "digest"]),
            Case(sql: "UPDATE visit SET start = 5 WHERE id = 1", table: "visit", id: "1",
                 detail: "its start holds 5, which is not a time", saidBy: ["timeline", "digest"]),
            Case(sql: "UPDATE visit SET latitude = 'north' WHERE id = 1", table: "visit", id: "1",
                 detail: "its latitude holds \"north\", which is not a number", saidBy: ["timeline", "digest"]),
            Case(sql: """
                INSERT INTO segment (start, "end", startLatitude, startLongitude, format, createdAt)
                VALUES ('2026-03-02 12:10:00.000', '2026-03-02 12:20:00.000', 'north', 11.6, 'sqlite3', '2026-03-02 12:00:00.000')
                """, table: "segment", id: "1", detail: "its startLatitude holds \"north\", which is not a number",
                 saidBy: ["timeline", "digest"]),
            Case(sql: "UPDATE fix SET longitude = 'east' WHERE id = \(inDay)", table: "fix", id: inDay,
                 detail: "its longitude holds \"east\", which is not a number", saidBy: ["timeline", "digest", "history"]),
            Case(sql: "UPDATE fix SET utcOffset = 'plus one' WHERE id = \(inDay)", table: "fix", id: inDay,
                 detail: "its utcOffset holds \"plus one\", which is not a whole number", saidBy: ["timeline", "digest"]),
            Case(sql: """
                INSERT INTO fix (latitude, longitude, timestamp, source, createdAt)
                VALUES ('south', 11.5, '2026-02-27 23:00:00.000', 'imported', '2026-03-02 12:00:00.000')
                """, table: "fix", id: before, detail: "its latitude holds \"south\", which is not a number", saidBy: ["timeline"]),
            Case(sql: """
                INSERT INTO fix (latitude, longitude, timestamp, source, createdAt)
                VALUES (48.1, 11.5, 12, 'imported', '2026-03-02 12:00:00.000')
                """, table: "fix", id: "(SELECT id FROM fix WHERE timestamp = 12)", detail: "its timestamp holds 12, which is not a time",
                 saidBy: ["digest"]),
            Case(sql: """
                INSERT INTO place (latitude, longitude, radius, name, nameSource, createdAt)
                VALUES (48.1, 11.5, 'wide', 'Sqlite', 'user', '2026-03-02 12:00:00.000')
                """, table: "place", id: "1", detail: "its radius holds \"wide\", which is not a number", saidBy: ["places", "timeline"]),
        ]
        let day = TimelineCommandTests.day
        for bad in cases {
            var home = try EnlogHome()
            home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
            home.extraEnvironment["ENLOG_MAP_STYLE"] = "none"
            home.extraEnvironment["ENLOG_NOTE_TIME_ZONE"] = "UTC"
            let file = try home.directory.file("day.csv", contents: TimelineCommandTests.csv())
            XCTAssertEqual(try home.run("import", file.path).status, 0)
            // As sqlite3 would write it, CHECKs ignored.
            let id = try DatabaseQueue(path: home.database).write { db in
                try db.execute(sql: "PRAGMA ignore_check_constraints = ON")
                try db.execute(sql: bad.sql)
                return try XCTUnwrap(try Int64.fetchOne(db, sql: "SELECT \(bad.id)"))
            }
            let warning = "enlog: warning: \(bad.table) \(id) is left out: \(bad.detail); it stays in the outbox as it is "
                + "(sqlite3 \(home.database) \"SELECT * FROM \(bad.table) WHERE id = \(id)\" shows it)"
            let runs = [
                "timeline": try home.run("timeline", "--date", day, "--json"),
                "digest": try home.run("digest", "--date", day, "--no-sync"),
                "places": try home.run("places"),
                "history": try home.run("history", "--track", "--since", day),
            ]
            for (command, run) in runs {
                XCTAssertEqual(run.status, 0, "\(bad.sql): \(command): \(run.standardError)")
                XCTAssertFalse(run.standardError.contains("could not decode"), "\(bad.sql): \(command): \(run.standardError)")
                if bad.saidBy.contains(command) {
                    XCTAssertTrue(run.standardErrorLines.contains(warning), "\(bad.sql): \(command): \(warning)\n\(run.standardError)")
                }
            }
            let stays = (try? JSONSerialization.jsonObject(with: Data(runs["timeline"]!.standardOutput.utf8))) as? [String: Any]
            let longitudes = (stays?["stays"] as? [[String: Any]] ?? []).map { $0["longitude"] as? Double ?? 0 }
            XCTAssertFalse(longitudes.isEmpty, "\(bad.sql): \(runs["timeline"]!.standardOutput)")
            XCTAssertFalse(longitudes.contains { abs($0) < 1 }, "\(bad.sql): no value read as 0: \(longitudes)")
            XCTAssertFalse(runs["places"]!.standardOutput.contains("Sqlite"), runs["places"]!.standardOutput)
        }
    }

    /// The rate-limit hold `sync` and `watch`'s start read: a date that is no time is no hold
    /// (GRDB's row["date"] trapped on it), said once.
    func testAnUnreadableRateLimitHoldIsNoHold() async throws {
        let home = try EnlogHome()
        XCTAssertEqual(try home.run("log", "--at", "48.1,11.5", "--no-sync", "--no-geocode").status, 0)
        let outbox = try OutboxStore(path: home.database)
        try await outbox.setRateLimitHold(OutboxStore.RateLimitHold(until: Date(timeIntervalSinceNow: 3600), reason: "busy"))
        let held = try await outbox.rateLimitHold()
        XCTAssertEqual(held?.reason, "busy")
        try await DatabaseQueue(path: home.database).write { db in
            try db.execute(sql: "UPDATE syncState SET date = 'soon' WHERE key = 'notBefore'")
        }
        let hold = try await outbox.rateLimitHold()
        XCTAssertNil(hold)
    }
}
