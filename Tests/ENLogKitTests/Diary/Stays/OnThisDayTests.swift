import Foundation
import GRDB
import Testing
@testable import Capture
@testable import Compose
@testable import Outbox
@testable import Diary

/// "On this day" in the digest: the same calendar date in earlier years, in the digest's zone.
@Suite("on this day")
struct OnThisDayTests {
    static func dates(_ day: String, zone: String = "Europe/Berlin", since firstYear: Int) throws -> [String] {
        let timeZone = try #require(TimeZone(identifier: zone))
        let day = try #require(TrackDay(day, timeZone: timeZone))
        return OnThisDay.earlierDates(of: day, since: firstYear).map(\.name)
    }

    /// 29 February comes back once a year: on its own date in a leap year, with 28 February in
    /// the others; a date a zone skipped is left out, and the years looked at are bounded.
    @Test func earlierDatesOfTheSameCalendarDate() throws {
        #expect(try Self.dates("2026-11-22", since: 2023) == ["2025-11-22", "2024-11-22", "2023-11-22"])
        #expect(try Self.dates("2026-11-22", since: 2026).isEmpty)
        #expect(try Self.dates("2028-02-29", since: 2019) == ["2024-02-29", "2020-02-29"])
        #expect(try Self.dates("2027-02-28", since: 2023) == ["2026-02-28", "2025-02-28", "2024-02-28", "2024-02-29", "2023-02-28"])
        #expect(try Self.dates("2028-02-28", since: 2023) == ["2027-02-28", "2026-02-28", "2025-02-28", "2024-02-28", "2023-02-28"])
        // Samoa skipped 2011-12-30 when it crossed the date line.
        #expect(try Self.dates("2012-12-30", zone: "Pacific/Apia", since: 2009) == ["2010-12-30", "2009-12-30"])
        #expect(try Self.dates("2026-11-22", since: 1).count == OnThisDay.yearsBack)
    }

    /// A year is told by its year, the leap day brought to 28 February by its date too.
    @Test func eachYearIsOneLine() throws {
        let day = try #require(TrackDay("2027-02-28", timeZone: TimeZone(identifier: "Europe/Berlin")!))
        #expect(OnThisDay.line(.init(day: "2024-02-28", places: ["Home", "Café Rosa"]), for: day) == "2024: Home, Café Rosa")
        #expect(OnThisDay.line(.init(day: "2024-02-29", places: ["Home"]), for: day) == "2024 (29 February): Home")
    }

    /// An earlier date is a whole day of the zone, which need not start at midnight: in Santiago
    /// clocks went from 00:00 to 01:00 on 2026-09-06.
    @Test func anEarlierDateIsTheZonesDay() throws {
        let zone = try #require(TimeZone(identifier: "America/Santiago"))
        let digest = try #require(TrackDay("2027-09-06", timeZone: zone))
        let earlier = try #require(OnThisDay.earlierDates(of: digest, since: 2026).first)
        #expect(earlier.start == TrackTime.parse("2026-09-06T04:00:00Z"), "01:00 at UTC-3")
        #expect(earlier.end == TrackTime.parse("2026-09-07T03:00:00Z"))
    }

    /// Whether a date has fixes is one probe of the timestamp index, not a scan of the history.
    @Test func aDateWithFixesIsFoundThroughTheIndex() async throws {
        let directory = try TemporaryDirectory()
        let outbox = try OutboxStore(path: directory.path("outbox.sqlite"))
        let plan = try await DatabaseQueue(path: directory.path("outbox.sqlite")).read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + OutboxStore.hasFixesSQL, arguments: [Date(), Date()]).map { $0["detail"] as String }
        }
        #expect(plan.contains { $0.contains("USING COVERING INDEX fix_on_timestamp (timestamp>? AND timestamp<?)") }, "\(plan)")
        let first = try await outbox.firstFixTime()
        #expect(first == nil)
    }

    /// A CSV row per minute at a place from `from` to `to` (UTC).
    static func rows(_ from: String, _ to: String, latitude: Double, longitude: Double) -> [String] {
        guard let start = TrackTime.parse(from), let end = TrackTime.parse(to) else { return [] }
        return stride(from: start.timeIntervalSince1970, through: end.timeIntervalSince1970, by: 60).map {
            "\(TrackTime.string(Date(timeIntervalSince1970: $0))),\(latitude),\(longitude),5,,,"
        }
    }

    /// Years of one date in Berlin: 2025 at home (a place the user named) and at an imported
    /// visit; 2024 just after Berlin's midnight (still 1 March in UTC) at an unnamed place; 2023
    /// just after UTC's 2 March ended, which is 3 March in Berlin: not that date; 2022 on the move.
    @Test func theDigestTellsWhereTheUserWasInEarlierYears() throws {
        var home = try EnlogHome()
        home.extraEnvironment = ["ENLOG_GEOCODING_ENABLED": "false", "ENLOG_MAP_STYLE": "none"]
        try home.writeConfig("[note]\ntime_zone = \"Europe/Berlin\"\n")
        var rows = ["time,lat,lon,accuracy,type,end,name"]
        rows += Self.rows("2026-03-02T09:00:00Z", "2026-03-02T09:30:00Z", latitude: 48.2, longitude: 11.6)
        rows += Self.rows("2025-03-02T08:00:00Z", "2025-03-02T09:00:00Z", latitude: 48.137, longitude: 11.575)
        rows += Self.rows("2025-03-02T10:00:00Z", "2025-03-02T11:00:00Z", latitude: 48.137, longitude: 11.59117)
        rows.append("2025-03-02T12:00:00Z,48.2,11.6,,visit,2025-03-02T13:00:00Z,Café Rosa")
        rows += Self.rows("2024-03-01T23:20:00Z", "2024-03-01T23:50:00Z", latitude: 47, longitude: 8)
        rows += Self.rows("2023-03-02T23:10:00Z", "2023-03-02T23:40:00Z", latitude: 46, longitude: 7)
        rows += (0..<11).map { "2022-03-02T10:\(String(format: "%02d", $0)):00Z,\(45 + Double($0) / 100),7,5,,," }
        let file = try home.directory.file("years.csv", contents: rows.joined(separator: "\n") + "\n")
        let imported = try home.run("import", file.path)
        try #require(imported.status == 0, "\(imported.standardError)")
        try #require(try home.run("places", "add", "Home", "--at", "48.137,11.575").status == 0)

        func content(_ day: String) throws -> String {
            let digest = try home.run("digest", "--date", day, "--no-sync", "--json")
            try #require(digest.status == 0, "\(digest.standardError)")
            let note = try #require(try JSONSerialization.jsonObject(with: Data(digest.standardOutput.utf8)) as? [String: Any])
            let id = try #require(note["id"] as? Int)
            let shown = try home.run("queue", "show", "\(id)", "--json")
            let content = try #require((try JSONSerialization.jsonObject(with: Data(shown.standardOutput.utf8)) as? [String: Any])?["content"] as? String)
            #expect(ENMLValidator().validate(content).errors.isEmpty, "\(content)")
            return content
        }
        let digest = try content("2026-03-02")
        #expect(digest.contains("<h3>On this day</h3><ul><li>2025: Home, Café Rosa</li><li>2024: 47.00000, 8.00000</li><li>2022: on the move near 45.05000, 7.00000</li></ul>"), "\(digest)")
        #expect(try content("2024-03-02").contains("<h3>On this day</h3><ul><li>2022: on the move near 45.05000, 7.00000</li></ul>"),
                "2023's fixes were on 3 March in Berlin")
        #expect(!(try content("2022-03-02")).contains("On this day"), "no earlier year, no section")
    }
}
