import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif
@testable import Capture
@testable import Compose
@testable import Watch

/// `watch.digest = true`: the previous day's digest once the day is over in note.time_zone,
/// written once however often watch restarts.
final class WatchDigestTests: XCTestCase {
    func testTheNextDigestIsAMinutePastTheComingMidnightInTheZone() {
        let berlin = TimeZone(identifier: "Europe/Berlin")!
        func next(_ text: String) -> String { TrackTime.string(Watcher.nextDigestTime(after: TrackTime.parse(text)!, timeZone: berlin)) }
        XCTAssertEqual(next("2026-11-22T10:00:00Z"), "2026-11-22T23:01:00Z")
        XCTAssertEqual(next("2026-11-22T22:59:59Z"), "2026-11-22T23:01:00Z")
        XCTAssertEqual(next("2026-11-22T23:00:30Z"), "2026-11-23T23:01:00Z", "past midnight: the next one (this one is written now)")
        // The spring day has 23 hours: after it, midnight is at 22:00 UTC.
        XCTAssertEqual(next("2026-03-29T10:00:00Z"), "2026-03-29T22:01:00Z")
        XCTAssertEqual(next("2026-10-25T10:00:00Z"), "2026-10-25T23:01:00Z")
        XCTAssertEqual(TrackTime.string(Watcher.nextDigestTime(after: TrackTime.parse("2026-11-22T10:00:00Z")!,
                                                               timeZone: TimeZone(identifier: "Pacific/Auckland")!)), "2026-11-22T11:01:00Z")
    }

    func testWatchWritesYesterdaysDigestOnceAcrossRestarts() throws {
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        try home.writeConfig("[note]\ntime_zone = \"Asia/Tokyo\"\n[watch]\ndigest = true\n")
        let tokyo = TimeZone(identifier: "Asia/Tokyo")!
        // The day watch digests is the one before the day of (now − 1 min); a test started right
        // at midnight could see either, so both candidates have a track.
        let candidates = [TrackDay(containing: Date().addingTimeInterval(-60), timeZone: tokyo).previous,
                          TrackDay(containing: Date().addingTimeInterval(60), timeZone: tokyo).previous]
        var points = ""
        for day in Set(candidates.map(\.name)).compactMap({ TrackDay($0, timeZone: tokyo) }) {
            for minute in stride(from: 0, to: 600, by: 60) {
                let time = day.start.addingTimeInterval(9 * 3600 + Double(minute) * 6)
                points += "<trkpt lat=\"\(35.68 + Double(minute) / 60_000)\" lon=\"139.76\"><time>\(TrackTime.string(time))</time></trkpt>\n"
            }
        }
        let file = try home.directory.file("days.gpx", contents: """
            <gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>
            \(points)</trkseg></trk></gpx>
            """)
        XCTAssertEqual(try home.run("import", file.path).status, 0)
        let gpsd = ["ENLOG_LOCATION_GPSD": "127.0.0.1:\(try freeLoopbackPort())"]

        let first = try WatchProcess(home: home, environment: gpsd)
        XCTAssertTrue(first.waitFor("digest", #""written":true"#), "no digest written")
        let firstRun = first.terminate()
        XCTAssertEqual(firstRun.status, 0, firstRun.output)
        let written = try XCTUnwrap(firstRun.events.first { $0["event"] as? String == "digest" }, firstRun.output)
        let day = try XCTUnwrap(written["day"] as? String)
        XCTAssertTrue(candidates.map(\.name).contains(day), "\(day) is not yesterday in Tokyo")
        let notes = try home.notes()
        XCTAssertEqual(notes.count, 1)
        XCTAssertTrue((notes.first?["title"] as? String)?.hasPrefix("Day \(day):") == true, "\(notes)")

        for _ in 1...2 {
            let again = try WatchProcess(home: home, environment: gpsd)
            XCTAssertTrue(again.waitFor("digest", #""written":false"#), "restart did not see the digest")
            let run = again.terminate()
            XCTAssertEqual(run.status, 0, run.output)
            XCTAssertFalse(run.output.contains(#""written":true"#), run.output)
        }
        XCTAssertEqual(try home.notes().count, 1)
    }
}
