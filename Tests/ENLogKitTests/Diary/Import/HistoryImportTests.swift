import Foundation
import GRDB
import XCTest
#if canImport(Glibc)
import Glibc
#endif
@testable import Outbox
@testable import Diary
@testable import Capture

/// `enlog import` end to end, the built binary on real files: folders and zip archives, several
/// files with a bad one among them, devices kept apart, a bad file taking back the chunks it had
/// written, and a SIGKILL half-way followed by a rerun giving the history of one clean run.
final class HistoryImportTests: XCTestCase {
    static let start = 1_718_444_200   // 2024-06-15T09:36:40Z

    /// "time,lat,lon,deviceid" rows: `count` seconds, each recorded by both devices.
    static func csv(points count: Int, from first: Int = 0) -> String {
        var text = "time,lat,lon,deviceid\n"
        text.reserveCapacity(count * 2 * 40)
        for second in first..<first + count {
            let latitude = 52.5 + Double(second % 10_000) * 1e-5
            text += "\(start + second),\(latitude),13.4,phone\n\(start + second),\(latitude + 1e-4),13.41,watch\n"
        }
        return text
    }

    static func gpx(points count: Int, cutShort: Bool = false) -> String {
        var text = "<?xml version=\"1.0\"?>\n<gpx version=\"1.1\" creator=\"t\" xmlns=\"http://www.topografix.com/GPX/1/1\"><trk><trkseg>\n"
        for second in 0..<count {
            text += "<trkpt lat=\"48.\(10_000 + second % 80_000)\" lon=\"11.5\"><time>\(TrackTime.string(Date(timeIntervalSince1970: Double(start + second))))</time></trkpt>\n"
        }
        return cutShort ? text + "<trkpt lat=\"48.1\"" : text + "</trkseg></trk></gpx>\n"
    }

    func rows(_ home: EnlogHome) throws -> [String] {
        guard FileManager.default.fileExists(atPath: home.database) else { return [] }
        return try DatabaseQueue(path: home.database).read { db in
            try String.fetchAll(db, sql: "SELECT timestamp || ' ' || ifnull(device, '-') || ' ' || latitude || ' ' || longitude FROM fix ORDER BY timestamp, device")
        }
    }

    /// The number of points in the history: a count, so that polling it while an import runs stays quick.
    func pointCount(_ home: EnlogHome) throws -> Int {
        guard FileManager.default.fileExists(atPath: home.database) else { return 0 }
        return try DatabaseQueue(path: home.database).read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM fix") ?? 0 }
    }

    func json(_ result: ProcessResult) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any], result.standardOutput)
    }

    /// Two devices at the same second are two points; importing again adds nothing.
    func testPointsOfSeveralDevicesAtTheSameSecondAreKeptApartAndImportedOnce() throws {
        let home = try EnlogHome()
        let file = try home.directory.file("two.csv", contents: Self.csv(points: 50))
        let first = try home.run("import", file.path, "--json")
        XCTAssertEqual(first.status, 0, first.standardError)
        let summary = try json(first)
        XCTAssertEqual(summary["format"] as? String, "csv")
        XCTAssertEqual(summary["read"] as? Int, 100)
        XCTAssertEqual(summary["added"] as? Int, 100)
        XCTAssertEqual(try rows(home).count, 100)
        let again = try json(try home.run("import", file.path, "--json"))
        XCTAssertEqual(again["added"] as? Int, 0)
        XCTAssertEqual(again["alreadyThere"] as? Int, 100)
        XCTAssertEqual(try rows(home).count, 100)
    }

    /// A folder with a good GPX, a bad one, a README (no history: passed over) and a zip archive
    /// holding a CSV, a KML and Takeout's web page: the good ones are imported (the archive's
    /// file by file), the page holds nothing to import, the bad one is one line naming it and
    /// adds nothing, the exit status is 65.
    func testAFolderAndAZipImportTheirFilesAndABadFileStopsOnlyItself() throws {
        let home = try EnlogHome()
        let folder = home.directory.path("takeout")
        try FileManager.default.createDirectory(atPath: folder + "/Tracks", withIntermediateDirectories: true)
        try Self.gpx(points: 20).write(toFile: folder + "/Tracks/good.gpx", atomically: true, encoding: .utf8)
        try Self.gpx(points: 30, cutShort: true).write(toFile: folder + "/Tracks/bad.gpx", atomically: true, encoding: .utf8)
        try "Your data, exported.\n".write(toFile: folder + "/README.txt", atomically: true, encoding: .utf8)
        let csv = home.directory.path("inner.csv"), kml = home.directory.path("doc.kml")
        try Self.csv(points: 5, from: 1000).write(toFile: csv, atomically: true, encoding: .utf8)
        try """
            <kml xmlns="http://www.opengis.net/kml/2.2"><Placemark><TimeStamp><when>2024-06-16T10:00:00Z</when></TimeStamp>\
            <Point><coordinates>13.4,52.5</coordinates></Point></Placemark></kml>
            """.write(toFile: kml, atomically: true, encoding: .utf8)
        let python = try PythonServer.interpreter(stdlibOnly: true)
        let zip = try Subprocess.run(URL(fileURLWithPath: python), ["-c", """
            import sys, zipfile
            with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
                z.write(sys.argv[2], "Takeout/Location History/points.csv"); z.write(sys.argv[3], "Takeout/doc.kml")
                z.writestr("Takeout/archive_browser.html", "<html></html>")
            """, home.directory.path("takeout/export.zip"), csv, kml])
        XCTAssertEqual(zip.status, 0, zip.standardError)

        let result = try home.run("import", folder)
        XCTAssertEqual(result.status, ExitStatusCode.badLocation.rawValue, result.standardError)
        XCTAssertEqual(result.standardErrorLines.count, 1, result.standardError)
        XCTAssertTrue(result.standardError.contains("bad.gpx line "), result.standardError)
        XCTAssertTrue(result.standardOutput.contains("good.gpx: read 20 points from GPX: 20 added"), result.standardOutput)
        XCTAssertTrue(result.standardOutput.contains("export.zip!Takeout/Location History/points.csv: read 10 points from CSV: 10 added"),
                      result.standardOutput)
        XCTAssertTrue(result.standardOutput.contains("export.zip!Takeout/doc.kml: read 1 point from KML: 1 added"), result.standardOutput)
        XCTAssertTrue(result.standardOutput.contains("export.zip!Takeout/archive_browser.html: nothing to import: a web page"),
                      result.standardOutput)
        XCTAssertTrue(result.standardOutput.contains("1 file passed over"), result.standardOutput)
        XCTAssertEqual(try rows(home).count, 20 + 11)

        let twice = try home.run("import", folder, "--json")
        let summary = try json(twice)
        XCTAssertEqual(summary["added"] as? Int, 0)
        XCTAssertEqual(summary["alreadyThere"] as? Int, 31)
        XCTAssertEqual(summary["format"] as? String, "mixed")
        XCTAssertEqual((summary["files"] as? [Any])?.count, 4)
        XCTAssertEqual(summary["nothingToImport"] as? Int, 1)
        XCTAssertEqual((summary["errors"] as? [Any])?.count, 1, "the bad file, in the summary too")
    }

    /// Points go to SQLite `FixInsert.rowsPerGroup` a statement, the rest of a chunk one by one:
    /// a point repeated within one statement, in a later statement and among the single rows is
    /// added once, the file's first of it kept, and the counts add up (they come from SQLite's
    /// count of rows each statement added).
    func testPointsRepeatedWithinAndAcrossInsertStatementsAreAddedOnce() throws {
        let group = FixInsert.rowsPerGroup
        let rowCount = 2 * group + group * 3 / 4
        // Row i is at second(i) of one device: in the first group every second twice in a row,
        // after it the seconds go round a cycle of 60, meeting earlier rows' seconds again.
        func second(_ row: Int) -> Int { row < group ? row / 2 : row % 60 }
        var text = "time,lat,lon,deviceid\n"
        var first: [Int: Int] = [:]
        for row in 0..<rowCount {
            text += "\(Self.start + second(row)),\(52.5 + Double(row) * 1e-4),13.4,phone\n"
            if first[second(row)] == nil { first[second(row)] = row }
        }
        let home = try EnlogHome()
        let file = try home.directory.file("repeats.csv", contents: text)
        let result = try home.run("import", file.path, "--json")
        XCTAssertEqual(result.status, 0, result.standardError)
        let summary = try json(result)
        XCTAssertEqual(summary["added"] as? Int, first.count, result.standardOutput)
        XCTAssertEqual(summary["alreadyThere"] as? Int, rowCount - first.count, result.standardOutput)
        let kept = try DatabaseQueue(path: home.database).read { db in
            try Row.fetchAll(db, sql: "SELECT CAST(strftime('%s', timestamp) AS INTEGER) AS second, latitude FROM fix ORDER BY timestamp")
                .map { row -> (Int, Int) in
                    let latitude: Double = row["latitude"]
                    return ((row["second"] as Int) - Self.start, Int(((latitude - 52.5) * 1e4).rounded()))
                }
        }
        XCTAssertEqual(kept.map(\.0), first.keys.sorted())
        XCTAssertEqual(kept.map(\.1), first.keys.sorted().map { first[$0]! }, "the file's first row of each time is kept")
        let again = try json(try home.run("import", file.path, "--json"))
        XCTAssertEqual(again["added"] as? Int, 0)
        XCTAssertEqual(again["alreadyThere"] as? Int, rowCount)
    }

    /// A many-row insert that could stop half-way keeps a statement journal; the import's
    /// connection keeps it in memory (`PRAGMA temp_store = MEMORY`, which SQLite takes only
    /// outside a transaction): on disk, in /var/tmp, it was six times the import's own writes.
    func testTheImportWritersStatementJournalStaysInMemory() throws {
        let home = try EnlogHome()
        try FileManager.default.createDirectory(atPath: home.directory.path("data"), withIntermediateDirectories: true)
        let store = try OutboxStore(path: home.database)
        let writer = try HistoryImportWriter(store: store, path: "/journal.csv", format: "csv")
        let points = try (0...FixInsert.rowsPerGroup * 2).map { second in
            HistoryPoint(fix: try Fix(latitude: 52.5, longitude: 13.4, timestamp: Date(timeIntervalSince1970: Double(Self.start + second)),
                                      source: .imported), device: "phone")
        }
        XCTAssertEqual(try writer.add(points: points, visits: []).added, points.count)
        XCTAssertEqual(try store.writeNowWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA temp_store") }, 2)
        try writer.finish()
    }

    /// A file that goes bad after several transactions' worth of points takes them all back.
    func testAFileCutShortAfterManyChunksAddsNothing() throws {
        let home = try EnlogHome()
        XCTAssertEqual(try home.run("import", try home.directory.file("before.csv", contents: Self.csv(points: 3, from: 900_000)).path).status, 0)
        let bad = try home.directory.file("long.gpx", contents: Self.gpx(points: 3 * HistoryImport.pointsPerTransaction, cutShort: true))
        let result = try home.run("import", bad.path)
        XCTAssertEqual(result.status, ExitStatusCode.badLocation.rawValue, result.standardError)
        XCTAssertTrue(result.standardError.contains("long.gpx line \(3 * HistoryImport.pointsPerTransaction + 3): GPX: not well-formed XML"), result.standardError)
        XCTAssertEqual(try rows(home).count, 6)
        let runs = try DatabaseQueue(path: home.database).read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM importRun WHERE path LIKE '%long.gpx'") }
        XCTAssertEqual(runs, 0)
    }

    /// SIGKILL in the middle of a large import, then the same import again: the history is the
    /// one a single clean run gives, and the rerun only adds what the killed one had not; a third
    /// run adds nothing.
    func testAKilledImportRerunGivesTheHistoryOfOneCleanRun() throws {
        // Six transactions, as the Records.json case: enough to be killed in the middle, quick in CI.
        let seconds = 3 * HistoryImport.pointsPerTransaction
        try killAndRerun(name: "big.csv", contents: Self.csv(points: seconds), points: 2 * seconds)
    }

    /// The same for Google's Records.json, read by the JSON reader while the chunks are written
    /// on a thread of their own, killed after a random number of whole chunks.
    func testAKilledRecordsImportRerunGivesTheHistoryOfOneCleanRun() throws {
        let records = 60_000
        try killAndRerun(name: "Records.json", contents: Self.records(count: records), points: records)
    }

    /// Records.json as Takeout wrote it (see bench/import_data.py): pretty-printed, the
    /// `timestampMs` era then the ISO one, an `activity` list with its own times on every fourth
    /// record, and two devices that recorded each time both (two points, kept apart).
    static func records(count: Int) -> String {
        var text = "{\n  \"locations\": ["
        text.reserveCapacity(count * 300)
        for index in 0..<count {
            let milliseconds = Int64(start) * 1000 + Int64(index / 2) * 30_007
            let device = index % 2 == 1 ? 335_552_189 : 1_433_424_142
            let time = index < count / 2 ? "\"timestampMs\": \"\(milliseconds)\""
                : "\"timestamp\": \"\(TrackTime.string(Date(timeIntervalSince1970: Double(milliseconds) / 1000)))\""
            text += index == 0 ? "{" : ", {"
            text += "\n    \"latitudeE7\": \(525_000_000 + index % 90_000),\n    \"longitudeE7\": \(134_000_000 + index % 70_000),\n    \"accuracy\": \(index % 50 + 3)"
            if index % 4 == 3 {
                text += ",\n    \"activity\": [{\n      \"activity\": [{\n        \"type\": \"STILL\",\n        \"confidence\": 100\n      }],\n      "
                    + (index < count / 2 ? "\"timestampMs\": \"\(milliseconds + 4_000)\"" : "\"timestamp\": \"\(TrackTime.string(Date(timeIntervalSince1970: Double(milliseconds + 4_000) / 1000)))\"")
                    + "\n    }]"
            }
            text += ",\n    \"source\": \"WIFI\",\n    \"deviceTag\": \(device),\n    \(time)\n  }"
        }
        return text + "]\n}\n"
    }

    /// Imports `contents` (`points` points, all new), kills the import after a random number of
    /// whole transactions, runs it again, and compares with one clean run; a third run adds nothing.
    func killAndRerun(name: String, contents: String, points: Int) throws {
        let transactions = points / HistoryImport.pointsPerTransaction
        XCTAssertGreaterThanOrEqual(transactions, 3, "the file must be several transactions long")
        // At least one transaction in, and at most half of them: the import must still be running.
        let killAfter = Int.random(in: 1...max(1, transactions / 2))
        let killed = try EnlogHome()
        let file = try killed.directory.file(name, contents: contents)
        let child = try killed.start(["import", file.path])
        var seen = 0
        let deadline = ContinuousClock.now + .seconds(600)
        while child.isRunning, ContinuousClock.now < deadline {
            seen = (try? pointCount(killed)) ?? 0
            if seen >= killAfter * HistoryImport.pointsPerTransaction { break }
            usleep(2_000)
        }
        child.kill()
        let left = try rows(killed).count
        let when = "killed after \(killAfter) of \(transactions) transactions"
        XCTAssertEqual(child.terminatingSignal, SIGKILL, "the import ended before it could be killed (\(left) points; \(when))")
        XCTAssertGreaterThan(left, 0, when)
        XCTAssertLessThan(left, points, when)
        XCTAssertEqual(left % HistoryImport.pointsPerTransaction, 0, "whole chunks only (\(when))")

        let rerun = try killed.run("import", file.path, "--json")
        XCTAssertEqual(rerun.status, 0, rerun.standardError)
        let summary = try json(rerun)
        XCTAssertEqual(summary["alreadyThere"] as? Int, left, when)
        XCTAssertEqual(summary["added"] as? Int, points - left, when)

        let clean = try EnlogHome()
        XCTAssertEqual(try clean.run("import", file.path).status, 0)
        XCTAssertEqual(try rows(killed), try rows(clean), when)
        let unfinished = try DatabaseQueue(path: killed.database).read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM importRun WHERE state != 'done'") }
        XCTAssertEqual(unfinished, 0)

        let again = try json(try killed.run("import", file.path, "--json"))
        XCTAssertEqual(again["added"] as? Int, 0, "importing again adds nothing")
        XCTAssertEqual(again["alreadyThere"] as? Int, points)
        XCTAssertEqual(try rows(killed).count, points)
    }

    /// An outbox from before the unique index that holds equal imported times (the same
    /// millisecond from the same device) keeps the first; a later one is deleted, unless a note
    /// was written on it: that one stays, outside any import. enlog's own fixes may share a time;
    /// an imported point without a device is already there at one of their times.
    func testEqualImportedTimesOfAnOlderOutboxKeepTheFirst() throws {
        let home = try EnlogHome()
        try FileManager.default.createDirectory(atPath: home.directory.path("data"), withIntermediateDirectories: true)
        let queue = try DatabaseQueue(path: home.database)
        try OutboxSchema.migrator.migrate(queue, upTo: OutboxSchema.dayMovesMigration.identifier)
        let twin = "2024-06-15 09:36:40.000", own = "2024-06-15 09:40:00.000"
        try queue.write { db in
            try db.execute(sql: """
                INSERT INTO importRun (id, path, format, state, startedAt) VALUES
                    (1, '/a.csv', 'csv', 'done', '2026-01-01 00:00:00.000'), (2, '/b.csv', 'csv', 'done', '2026-01-02 00:00:00.000')
                """)
            for (id, time, device, run) in [(1, twin, "phone", 1), (2, twin, "phone", 2), (3, twin, "phone", 2), (4, twin, "watch", 2),
                                            (5, own, nil, nil), (6, own, nil, nil)] as [(Int, String, String?, Int?)] {
                try db.execute(sql: """
                    INSERT INTO fix (id, latitude, longitude, timestamp, source, createdAt, device, importRun)
                    VALUES (?, 52.5, 13.4, ?, ?, '2026-01-01 00:00:00.000', ?, ?)
                    """, arguments: [id, time, run == nil ? "manual" : "imported", device, run])
            }
            try db.execute(sql: """
                INSERT INTO note (uid, fixId, title, content, createdAt, updatedAt)
                VALUES ('u3', 3, 'on the later twin', '<en-note/>', '2026-01-01 00:00:00.000', '2026-01-01 00:00:00.000')
                """)
        }
        try queue.close()

        // Opening migrates: the twin, the own fixes' time without a device, and one new point.
        let devices = try home.directory.file("devices.csv", contents: "time,lat,lon,deviceid\n\(Self.start),52.6,13.5,phone\n")
        let plain = try home.directory.file("plain.csv", contents: "time,lat,lon\n\(Self.start + 200),52.6,13.5\n\(Self.start + 300),52.6,13.5\n")
        let result = try home.run("import", devices.path, plain.path, "--json")
        XCTAssertEqual(result.status, 0, result.standardError)
        let summary = try json(result)
        XCTAssertEqual(summary["added"] as? Int, 1, result.standardOutput)
        XCTAssertEqual(summary["alreadyThere"] as? Int, 2, result.standardOutput)
        try DatabaseQueue(path: home.database).read { db in
            XCTAssertEqual(try Int64.fetchAll(db, sql: "SELECT id FROM fix WHERE id <= 6 ORDER BY id"), [1, 3, 4, 5, 6])
            XCTAssertEqual(try Int64.fetchOne(db, sql: "SELECT importRun FROM fix WHERE id = 3"), nil, "the noted twin is outside any import")
            XCTAssertEqual(try Int.fetchOne(db, sql: "SELECT count(*) FROM fix"), 6)
            let indexes = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'fix' AND sql IS NOT NULL ORDER BY name")
            // fix_on_device_timestamp is the phone receiver's (devices-v1): its (device, time) lookup.
            XCTAssertEqual(indexes, ["fix_import_identity", "fix_on_device_timestamp", "fix_on_timestamp", "fix_own_on_timestamp"])
        }
    }

    /// The receiver's (device, time) index holds the points phones sent, not imported ones (a
    /// third index on an imported point's time cost the import a quarter of its CPU): its lookup
    /// still uses it, and a device known only from an import is still a device.
    func testImportedPointsStayOutOfTheReceiversDeviceIndex() throws {
        let home = try EnlogHome()
        let devices = try home.directory.file("devices.csv", contents: "time,lat,lon,deviceid\n\(Self.start),52.6,13.5,phone\n\(Self.start + 60),52.6,13.5,phone\n")
        let result = try home.run("import", devices.path)
        XCTAssertEqual(result.status, 0, result.standardError)
        try DatabaseQueue(path: home.database).read { db in
            let indexed = try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'fix_on_device_timestamp'") ?? ""
            XCTAssertTrue(indexed.contains("importRun IS NULL"), indexed)
            XCTAssertEqual(try Int.fetchOne(db, sql: "SELECT count(*) FROM fix INDEXED BY fix_on_device_timestamp WHERE device = 'phone' AND importRun IS NULL"), 0)
            let plan = try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN SELECT 1 FROM fix WHERE device = 'phone' AND timestamp = '2026-01-01 00:00:00.000' AND importRun IS NULL LIMIT 1")
                .map { $0["detail"] as String }.joined(separator: "; ")
            XCTAssertTrue(plan.contains("fix_on_device_timestamp"), plan)
        }
        let timeline = try home.run("timeline", "--device", "phone")
        XCTAssertNotEqual(timeline.status, 2, "a device known from an import is a device: \(timeline.standardError)")
    }

    /// On a terminal (util-linux `script` gives it one) a progress line is drawn on standard
    /// error and redrawn in place; on a pipe there is none.
    func testAProgressLineOnATerminalAndNoneOnAPipe() throws {
        let home = try EnlogHome()
        let file = try home.directory.file("progress.csv", contents: Self.csv(points: 30_000))
        let piped = try home.run("import", file.path)
        XCTAssertEqual(piped.status, 0, piped.standardError)
        XCTAssertEqual(piped.standardError, "")
        let terminal = try Subprocess.run(URL(fileURLWithPath: "/usr/bin/script"),
                                          ["-qec", "'\(Subprocess.enlog.path)' import '\(file.path)' --json", "/dev/null"],
                                          environment: home.environment)
        XCTAssertEqual(terminal.status, 0, terminal.standardOutput)
        XCTAssertTrue(terminal.standardOutput.contains("\r\u{1B}[Kprogress.csv: "), terminal.standardOutput)
        XCTAssertTrue(terminal.standardOutput.contains(" MB of ") && terminal.standardOutput.contains(" points"), terminal.standardOutput)
        XCTAssertTrue(terminal.standardOutput.contains("\"alreadyThere\":60000"), terminal.standardOutput)
    }
}
