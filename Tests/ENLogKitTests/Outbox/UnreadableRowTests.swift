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
}
