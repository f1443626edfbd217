import Foundation
import XCTest

/// `history --since`, `--until` and `--date` are read in one zone, note.time_zone (here Tokyo,
/// while the process runs in UTC), in the listing and in every export format alike.
final class HistoryWindowTests: XCTestCase {
    /// A minute either side of Tokyo's midnights starting 2026-11-22 and 2026-11-23.
    static let times = ["2026-11-21T14:59:00Z", "2026-11-21T15:01:00Z", "2026-11-22T14:59:00Z", "2026-11-22T15:01:00Z"]

    func testSinceUntilAndDateAreReadInTheNotesZone() throws {
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_NOTE_TIME_ZONE"] = "Asia/Tokyo"
        let points = Self.times.map { "<trkpt lat=\"35.68\" lon=\"139.76\"><time>\($0)</time></trkpt>" }
        let gpx = try home.directory.file("tokyo.gpx", contents: """
            <gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>\(points.joined())</trkseg></trk></gpx>
            """)
        XCTAssertEqual(try home.run("import", gpx.path).status, 0)
        let windows: [(arguments: [String], expected: [Int])] = [
            (["--date", "2026-11-22"], [1, 2]),
            (["--since", "2026-11-22", "--until", "2026-11-23"], [1, 2]),
            (["--since", "2026-11-22"], [1, 2, 3]),
            (["--until", "2026-11-22"], [0]),
            (["--since", "2026-11-22T00:01:30+09:00"], [2, 3]),
        ]
        for window in windows {
            let expected = window.expected.map { Self.times[$0] }
            let listed = try home.run(["history", "--track", "--utc"] + window.arguments)
            XCTAssertEqual(listed.status, 0, "\(window.arguments): \(listed.standardError)")
            XCTAssertEqual(listed.standardOutput.split(separator: "\n").map { String($0.prefix(20)) }, expected, "\(window.arguments)")
            let exported = try home.run(["history", "--format", "csv"] + window.arguments)
            XCTAssertEqual(exported.status, 0, "\(window.arguments): \(exported.standardError)")
            XCTAssertEqual(exported.standardOutput.split(whereSeparator: \.isNewline).dropFirst().map { String($0.prefix(20)) },
                           expected, "\(window.arguments) as CSV")
        }
    }
}
