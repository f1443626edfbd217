import Foundation
import GRDB
import XCTest
#if canImport(Glibc)
import Glibc
#endif
@testable import Support
@testable import EvernoteAPI
@testable import Configuration
@testable import Network
@testable import Auth
@testable import Capture
@testable import Compose
@testable import Outbox
@testable import Diary
@testable import Sync
@testable import Watch

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
    /// one a single clean run gives, and the rerun only adds what the killed one had not.
    func testAKilledImportRerunGivesTheHistoryOfOneCleanRun() throws {
        let seconds = 150_000
        let killed = try EnlogHome()
        let file = try killed.directory.file("big.csv", contents: Self.csv(points: seconds))
        let child = try killed.start(["import", file.path])
        var seen = 0
        let deadline = ContinuousClock.now + .seconds(600)
        while child.isRunning, ContinuousClock.now < deadline {
            seen = (try? rows(killed).count) ?? 0
            if seen >= 2 * HistoryImport.pointsPerTransaction { break }
            usleep(2_000)
        }
        child.kill()
        let left = try rows(killed).count
        XCTAssertEqual(child.terminatingSignal, SIGKILL, "the import ended before it could be killed (\(left) points)")
        XCTAssertGreaterThan(left, 0)
        XCTAssertLessThan(left, 2 * seconds)
        XCTAssertEqual(left % HistoryImport.pointsPerTransaction, 0, "whole chunks only")

        let rerun = try killed.run("import", file.path, "--json")
        XCTAssertEqual(rerun.status, 0, rerun.standardError)
        let summary = try json(rerun)
        XCTAssertEqual(summary["alreadyThere"] as? Int, left)
        XCTAssertEqual(summary["added"] as? Int, 2 * seconds - left)

        let clean = try EnlogHome()
        XCTAssertEqual(try clean.run("import", file.path).status, 0)
        XCTAssertEqual(try rows(killed), try rows(clean))
        let unfinished = try DatabaseQueue(path: killed.database).read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM importRun WHERE state != 'done'") }
        XCTAssertEqual(unfinished, 0)
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
