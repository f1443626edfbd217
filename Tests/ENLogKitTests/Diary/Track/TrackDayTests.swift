import Foundation
import XCTest
@testable import Capture
@testable import Compose

/// Days whose midnight does not exist (clocks go forward at 00:00) start at their first instant,
/// 01:00: `history --date` and `digest --date` take them like any other day.
final class TrackDayTests: XCTestCase {
    /// (zone, day, its first instant, the next day's first instant).
    static let days: [(zone: String, day: String, start: String, end: String)] = [
        ("America/Santiago", "2026-09-06", "2026-09-06T04:00:00Z", "2026-09-07T03:00:00Z"),
        ("America/Santiago", "2026-09-05", "2026-09-05T04:00:00Z", "2026-09-06T04:00:00Z"),
        ("Asia/Beirut", "2026-03-29", "2026-03-28T22:00:00Z", "2026-03-29T21:00:00Z"),
        ("Europe/Paris", "2026-03-29", "2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z"),
        ("Europe/Paris", "2026-10-25", "2026-10-24T22:00:00Z", "2026-10-25T23:00:00Z"),
        ("UTC", "2026-11-22", "2026-11-22T00:00:00Z", "2026-11-23T00:00:00Z"),
    ]

    func testEveryDayRunsFromItsFirstInstantToTheNextDays() throws {
        for item in Self.days {
            let zone = try XCTUnwrap(TimeZone(identifier: item.zone))
            let day = try XCTUnwrap(TrackDay(item.day, timeZone: zone), "\(item.zone) \(item.day)")
            XCTAssertEqual(TrackTime.string(day.start), item.start, "\(item.zone) \(item.day)")
            XCTAssertEqual(TrackTime.string(day.end), item.end, "\(item.zone) \(item.day)")
            XCTAssertEqual(TrackDay(containing: day.start, timeZone: zone), day)
            XCTAssertEqual(TrackDay(containing: day.end.addingTimeInterval(-0.001), timeZone: zone), day)
        }
        XCTAssertNil(TrackDay("2026-02-30", timeZone: .gmt))
        XCTAssertNil(TrackDay("2011-12-30", timeZone: TimeZone(identifier: "Pacific/Apia")!), "the day Samoa skipped")
    }

    /// `history --date` and `digest --date` on such days: the day's fixes, not its neighbours'.
    func testHistoryAndDigestTakeADayWithoutAMidnight() throws {
        for item in Self.days.prefix(3) {
            var home = try EnlogHome()
            home.extraEnvironment["ENLOG_NOTE_TIME_ZONE"] = item.zone
            home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
            let start = try XCTUnwrap(TrackTime.parse(item.start)), end = try XCTUnwrap(TrackTime.parse(item.end))
            let points = [start.addingTimeInterval(-60), start.addingTimeInterval(60), end.addingTimeInterval(-60), end.addingTimeInterval(60)]
                .map { "<trkpt lat=\"-33.45\" lon=\"-70.66\"><time>\(TrackTime.string($0))</time></trkpt>" }
            let gpx = try home.directory.file("day.gpx", contents: """
                <gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>\(points.joined())</trkseg></trk></gpx>
                """)
            XCTAssertEqual(try home.run("import", gpx.path).status, 0)
            let history = try home.run("history", "--date", item.day, "--format", "csv")
            XCTAssertEqual(history.status, 0, "\(item.zone) \(item.day): \(history.standardError)")
            XCTAssertEqual(history.standardOutput.split(whereSeparator: \.isNewline).count, 3, "a header and the day's two fixes: \(history.standardOutput)")
            let digest = try home.run("digest", "--date", item.day, "--no-sync")
            XCTAssertEqual(digest.status, 0, "\(item.zone) \(item.day): \(digest.standardError)")
            XCTAssertTrue(digest.standardOutput.contains("Day \(item.day)"), digest.standardOutput)
        }
    }
}
