import Foundation
import XCTest
@testable import Capture
@testable import Compose
@testable import Outbox

/// `enlog history --format gpx|geojson|csv`: what enlog writes, read back by independent readers
/// (gpxpy, Python's json and csv, gpsbabel) as the same points.
final class TrackExportTests: XCTestCase {
    /// A noisy 1 Hz walk and drive with altitude and accuracy, some fixes without either, stored
    /// in the history of a fresh outbox.
    func storedTrack(_ home: EnlogHome) async throws -> [Fix] {
        let start = Date(timeIntervalSince1970: 1_795_334_400.123)   // 2026-11-22T08:00:00.123Z
        var fixes = GeneratedTrack(start: start, legs: [.stop(seconds: 30), .drive(metres: 900, speed: 6), .stop(seconds: 20)],
                                   noise: 7, hdop: 0.6...1.4).fixes
        // Unknown altitude and accuracy, and a southern/western position, must survive too.
        fixes.append(try Fix(latitude: -33.856_789_012, longitude: -151.215_432_1, timestamp: start.addingTimeInterval(3_600), source: .manual))
        let outbox = try OutboxStore(path: home.database)
        let result = try await outbox.importFixes(fixes)
        XCTAssertEqual(result.added, fixes.count)
        return fixes
    }

    func assertSamePoints(_ points: [PeerPoint], _ fixes: [Fix], tolerance: Double = 1e-9, by reader: String,
                          file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(points.count, fixes.count, reader, file: file, line: line)
        for (point, fix) in zip(points, fixes) {
            XCTAssertEqual(point.lat, fix.latitude, accuracy: tolerance, reader, file: file, line: line)
            XCTAssertEqual(point.lon, fix.longitude, accuracy: tolerance, reader, file: file, line: line)
            XCTAssertEqual(point.time ?? 0, fix.storedTime.timeIntervalSince1970, accuracy: 0.0005, reader, file: file, line: line)
            if let altitude = fix.altitude {
                XCTAssertEqual(point.ele ?? .nan, altitude, accuracy: 1e-6, reader, file: file, line: line)
            } else {
                XCTAssertNil(point.ele, reader, file: file, line: line)
            }
        }
    }

    func testGPXIsReadBackByGpxpyAndGpsbabelAsTheSamePoints() async throws {
        let home = try EnlogHome()
        let fixes = try await storedTrack(home)
        let result = try home.run("history", "--format", "gpx")
        XCTAssertEqual(result.status, 0, result.standardError)
        let track = try TrackPeer.read("gpx", result.standardOutput)
        XCTAssertEqual(track.version, "1.1")
        assertSamePoints(track.points, fixes, by: "gpxpy")
        for (point, fix) in zip(track.points, fixes) {
            XCTAssertEqual((point.hdop ?? 0) * NMEALogLocation.metresPerHDOP, fix.horizontalAccuracy ?? 0, accuracy: 1e-6)
        }

        // gpsbabel: its own GPX reader, its own CSV writer (six decimals).
        let scratch = try TemporaryDirectory()
        let gpx = try scratch.file("enlog.gpx", contents: result.standardOutput)
        let babel = try Subprocess.run(try TrackPeer.gpsbabel(), ["-t", "-i", "gpx", "-f", gpx.path, "-o", "unicsv,utc=0", "-F", "-"])
        XCTAssertEqual(babel.status, 0, babel.standardError)
        let rows = babel.standardOutput.split(whereSeparator: \.isNewline).dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false) }
        XCTAssertEqual(rows.count, fixes.count)
        for (row, fix) in zip(rows, fixes) {
            XCTAssertEqual(Double(row[1]) ?? .nan, fix.latitude, accuracy: 1e-6)
            XCTAssertEqual(Double(row[2]) ?? .nan, fix.longitude, accuracy: 1e-6)
        }
        let xmllint = try Subprocess.run(URL(fileURLWithPath: "/usr/bin/xmllint"), ["--noout", gpx.path])
        XCTAssertEqual(xmllint.status, 0, xmllint.standardError)
    }

    func testGeoJSONAndCSVAreReadBackAsTheSamePoints() async throws {
        let home = try EnlogHome()
        let fixes = try await storedTrack(home)
        let geojson = try home.run("history", "--format", "geojson")
        XCTAssertEqual(geojson.status, 0, geojson.standardError)
        assertSamePoints(try TrackPeer.read("geojson", geojson.standardOutput).points, fixes, by: "json")
        let csv = try home.run("history", "--format", "csv")
        XCTAssertEqual(csv.status, 0, csv.standardError)
        XCTAssertTrue(csv.standardOutput.hasPrefix(TrackWriter.csvHeader + "\r\n"))
        let points = try TrackPeer.read("csv", csv.standardOutput).points
        assertSamePoints(points, fixes, by: "csv")
        for (point, fix) in zip(points, fixes) { XCTAssertEqual(point.accuracy ?? -1, fix.horizontalAccuracy ?? -1, accuracy: 1e-9) }
    }

    /// --date is a day in note.time_zone: midnight to midnight there, not in UTC.
    func testDateIsADayInTheConfiguredTimeZone() async throws {
        let home = try EnlogHome()
        try home.writeConfig("[note]\ntime_zone = \"Pacific/Auckland\"\n")   // UTC+13 in November
        let times = ["2026-11-21T10:59:59Z", "2026-11-21T11:00:00Z", "2026-11-22T10:59:59.999Z", "2026-11-22T11:00:00Z"]
        let fixes = try times.map { try Fix(latitude: -36.85, longitude: 174.76, timestamp: TrackTime.parse($0)!, source: .manual) }
        _ = try await OutboxStore(path: home.database).importFixes(fixes)
        let day = try home.run("history", "--format", "csv", "--date", "2026-11-22")
        XCTAssertEqual(day.status, 0, day.standardError)
        let points = try TrackPeer.read("csv", day.standardOutput).points
        XCTAssertEqual(points.map(\.time), [fixes[1], fixes[2]].map { $0.timestamp.timeIntervalSince1970 })

        let until = try home.run("history", "--format", "gpx", "--since", "2026-11-21T11:00:00Z", "--until", "2026-11-22T11:00:00Z")
        XCTAssertEqual(until.status, 0, until.standardError)
        XCTAssertEqual(try TrackPeer.read("gpx", until.standardOutput).points.count, 2)

        let refusals = [["--format", "csv", "--date", "2026-02-30"], ["--format", "csv", "--date", "22.11.2026"],
                        ["--format", "csv", "--date", "2026-11-22", "--since", "2026-11-01"]]
        for arguments in refusals {
            let refused = try home.run(["history"] + arguments)
            XCTAssertEqual(refused.status, ExitStatusCode.usage.rawValue, "\(arguments): \(refused.standardError)")
        }
        let both = try home.run("history", "--format", "csv", "--json")
        XCTAssertEqual(both.status, ExitStatusCode.usage.rawValue, both.standardError)
    }

    /// Track times are written and read by hand: checked against Foundation's ISO 8601 formatter
    /// over seeded dates from 1901 to 2199, and for the forms other software writes.
    func testTrackTimesAgreeWithFoundationsISO8601() {
        var generator = SeededGenerator(state: 5)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for _ in 0..<2000 {
            let milliseconds = Int64.random(in: -2_177_452_800_000...7_258_118_400_000, using: &generator)
            let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
            let text = TrackTime.string(date)
            let expected = formatter.string(from: date)
            XCTAssertEqual(text.prefix(19), expected.prefix(19))
            XCTAssertEqual(text.hasSuffix("Z") && (text.count == 20 || text.count == 24), true, text)
            XCTAssertEqual(TrackTime.parse(text)?.timeIntervalSince1970 ?? .nan, Double(milliseconds) / 1000, accuracy: 0.0005, text)
        }
        let base = 1_795_334_400.0   // 2026-11-22T08:00:00Z
        let forms = ["2026-11-22T08:00:00Z": base, "2026-11-22t08:00:00z": base, " 2026-11-22T09:00:00+01:00\n": base,
                     "2026-11-22T03:30:00-0430": base, "2026-11-22T08:00:00.5Z": base + 0.5,
                     "2026-11-22T08:00:00.123456Z": base + 0.123, "2024-02-29T00:00:00Z": 1_709_164_800]
        for (text, seconds) in forms { XCTAssertEqual(TrackTime.parse(text)?.timeIntervalSince1970 ?? .nan, seconds, accuracy: 1e-6, text) }
        for bad in ["2026-11-22T08:00:00", "2026-11-22 08:00:00Z", "2026-02-29T00:00:00Z", "2026-11-22T24:00:00Z",
                    "2026-11-22T08:00:00.Z", "2026-11-22T08:00:00Zjunk", "22/11/2026", ""] {
            XCTAssertNil(TrackTime.parse(bad), bad)
        }
    }

    func testTrackDayFollowsTheZoneAcrossClockChanges() throws {
        let berlin = TimeZone(identifier: "Europe/Berlin")!
        let spring = try XCTUnwrap(TrackDay("2026-03-29", timeZone: berlin))
        XCTAssertEqual(spring.end.timeIntervalSince(spring.start), 23 * 3600)
        XCTAssertEqual(TrackTime.string(spring.start), "2026-03-28T23:00:00Z")
        let autumn = try XCTUnwrap(TrackDay("2026-10-25", timeZone: berlin))
        XCTAssertEqual(autumn.end.timeIntervalSince(autumn.start), 25 * 3600)
        XCTAssertEqual(autumn.previous.name, "2026-10-24")
        XCTAssertEqual(autumn.longName, "Sunday, 25 October 2026")
        // yyyy, not the week-year: 2026-12-31 is in week 1 of 2027.
        XCTAssertEqual(TrackDay(containing: TrackTime.parse("2026-12-31T12:00:00Z")!, timeZone: berlin).name, "2026-12-31")
        for bad in ["2026-02-29", "2026-13-01", "2026-1-05", "20261105", ""] { XCTAssertNil(TrackDay(bad, timeZone: berlin), bad) }
    }
}
