import Foundation
import Testing
@testable import Capture
@testable import Compose
@testable import Diary
@testable import Outbox

/// Each day in the zone where it was lived: the built binary on a real Android Timeline export
/// whose times carry `+10:00` (dedicatedcode/reitti's randomized Australian-offset file), with
/// note.time_zone in Toronto. The night of 2017-05-02 (21:17 to 14:23 the next day there) must
/// read as lived, not as Toronto's 07:17–00:23.
@Suite("Days in the zone they were lived in")
struct DayZoneTests {
    static let export = Fixtures.repositoryRoot.deletingLastPathComponent()
        .appendingPathComponent("shared/location-history-real/android-timeline--dedicatedcode-reitti--timeline_from_android_randomized.json")

    /// A home in Toronto, geocoding and maps off (no test reaches a real server), the export imported.
    static func importedHome() throws -> EnlogHome {
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        try home.writeConfig("[note]\ntime_zone = \"America/Toronto\"\n")
        let imported = try home.run("import", export.path)
        try #require(imported.status == 0, "\(imported.standardError)")
        return home
    }

    static func json(_ result: ProcessResult) throws -> [String: Any] {
        try #require(result.status == 0, "\(result.standardError)")
        return try #require(JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
    }

    /// The offsets are read from the file's own times, `Z` is no offset, and nothing else is one.
    @Test func statedOffsetsAreRead() {
        func parse(_ text: String) -> (Double, Int?)? {
            Array(text.utf8).withUnsafeBytes { ISOTimeText.parse($0[...]) }.map { ($0.seconds, $0.offset) }
        }
        #expect(parse("2017-05-02T21:17:03+10:00")?.0 == 1_493_723_823)
        #expect(parse("2017-05-02T21:17:03+10:00")?.1 == 36_000)
        #expect(parse("2024-01-01T10:00:00.000-03:30")?.1 == -12_600)
        #expect(parse("2017-05-02T11:17:03Z")?.1 == nil)
        #expect(parse("2017-05-02T11:17:03")?.1 == nil)
        #expect(parse("2017-05-02T11:17:03+00:00")?.1 == 0)
        #expect(parse("2017-05-02T11:17:03+23:00")?.1 == nil, "beyond any zone: the instant stands, the offset is not taken")
    }

    /// Track files' times state their offsets too (GPX, KML, TCX: `+10:00`; CSV also `+0100` after
    /// a space): kept; `Z`, `UTC`, no zone and epoch digits say only the instant.
    @Test func trackFilesStatedOffsetsAreRead() {
        #expect(TrackTime.parseStated("2017-05-03T08:00:00+10:00")?.utcOffset == 36_000)
        #expect(TrackTime.parseStated("2017-05-03T08:00:00+10:00")?.date.timeIntervalSince1970 == 1_493_762_400)
        #expect(TrackTime.parseStated("2024-03-09T10:15:00.5-0330")?.utcOffset == -12_600)
        #expect(TrackTime.parseStated("2017-05-02T22:00:00Z")?.utcOffset == nil)
        #expect(TrackTime.parseStated("2017-05-02T22:00:00+00:00")?.utcOffset == 0)
        #expect(TrackTime.parseStated("2017-05-02T22:00:00+20:00").map { $0.utcOffset == nil } == true,
                "beyond any zone: the instant stands, the offset is not taken")
        #expect(HistoryTimes.parseStated("2024-03-09 10:15:00 +0100")?.utcOffset == 3600)
        #expect(HistoryTimes.parseStated("2024-03-09 10:15:00 UTC")?.utcOffset == nil)
        #expect(HistoryTimes.parseStated("2024-03-09 10:15:00")?.utcOffset == nil)
        #expect(HistoryTimes.parseStated("1709979300")?.utcOffset == nil)
    }

    /// A GPX whose times carry `+10:00`, imported in Toronto: the day is read in +10:00.
    @Test func aGPXDayIsReadInTheOffsetItsTimesState() throws {
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        try home.writeConfig("[note]\ntime_zone = \"America/Toronto\"\n")
        var points: [String] = []
        for minute in stride(from: 8 * 60, to: 18 * 60, by: 2) {
            let time = String(format: "2017-05-03T%02d:%02d:00+10:00", minute / 60, minute % 60)
            let east = minute < 12 * 60 ? 0.0 : 0.02
            points.append("<trkpt lat=\"-33.86\" lon=\"\(151.20 + east)\"><time>\(time)</time></trkpt>")
        }
        let file = try home.directory.file("sydney.gpx", contents: """
            <gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>
            \(points.joined(separator: "\n"))
            </trkseg></trk></gpx>
            """)
        let imported = try home.run("import", file.path)
        try #require(imported.status == 0, "\(imported.standardError)")
        let text = try home.run("timeline", "--date", "2017-05-03")
        #expect(text.status == 0, "\(text.standardError)")
        #expect(text.standardOutput.split(separator: "\n").first == "times in UTC+10:00", "\(text.standardOutput)")
        let timeline = try Self.json(try home.run("timeline", "--date", "2017-05-03", "--json"))
        #expect(timeline["from"] as? String == "2017-05-03T00:00:00+10:00", "\(timeline)")
        let stays = try #require(timeline["stays"] as? [[String: Any]])
        #expect((stays.first?["arrival"] as? String)?.hasPrefix("2017-05-03T08:00") == true, "\(stays)")
    }

    /// A day takes the offset most of the instants whose local date it is state; an instant takes
    /// the nearest stated offset within reach; without any, note.time_zone.
    @Test func aDayTakesTheOffsetItsInstantsState() {
        let toronto = TimeZone(identifier: "America/Toronto")!
        let nominal = TrackDay("2017-05-03", timeZone: toronto)!
        let midnightUTC = 1_493_769_600.0   // 2017-05-03T00:00:00Z = 10:00 in +10:00
        let zones = LivedZones(fallback: toronto, stated: [
            .init(time: midnightUTC, offset: 36_000), .init(time: midnightUTC + 3600, offset: 36_000),
            // 22:00 on the 2nd in Toronto: not an instant of the 3rd as lived there.
            .init(time: midnightUTC + 7200, offset: -4 * 3600),
        ])
        let day = zones.day(nominal)
        #expect(day.start.timeIntervalSince1970 == midnightUTC - 36_000)
        #expect(day.end.timeIntervalSince1970 == midnightUTC - 36_000 + 86_400)
        #expect(LivedZones.name(day.timeZone) == "UTC+10:00")
        #expect(LivedZones(fallback: toronto).day(nominal) == nominal)
        #expect(zones.offset(at: midnightUTC + 60) == 36_000)
        #expect(zones.offset(at: midnightUTC + 3 * 86_400) == -4 * 3600, "beyond reach: Toronto's own offset in May")
        #expect(zones.text(Date(timeIntervalSince1970: midnightUTC)) == "2017-05-03T10:00:00+10:00")
    }

    /// `timeline --date` reads the day in +10:00: its bounds, every time with that offset, the
    /// night begun the evening before shown whole with its date; `--json` names the zone.
    @Test func anAustralianNightIsReadWhereItWasLived() throws {
        let home = try Self.importedHome()
        let timeline = try Self.json(try home.run("timeline", "--date", "2017-05-03", "--json"))
        #expect(timeline["timeZone"] as? String == "UTC+10:00", "\(timeline)")
        #expect(timeline["from"] as? String == "2017-05-03T00:00:00+10:00")
        #expect(timeline["to"] as? String == "2017-05-04T00:00:00+10:00")
        let stays = try #require(timeline["stays"] as? [[String: Any]])
        let times = stays.flatMap { [$0["arrival"] as? String ?? "", $0["departure"] as? String ?? ""] }
        #expect(!times.isEmpty && times.allSatisfy { $0.hasSuffix("+10:00") }, "\(times)")
        let night = try #require(stays.first, "\(stays)")
        #expect((night["arrival"] as? String)?.hasPrefix("2017-05-02T21:17") == true, "\(night)")
        #expect((night["departure"] as? String)?.hasPrefix("2017-05-03T14:23") == true, "\(night)")

        let text = try home.run("timeline", "--date", "2017-05-03")
        #expect(text.status == 0, "\(text.standardError)")
        let lines = text.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.first == "times in UTC+10:00", "\(text.standardOutput)")
        #expect(lines.dropFirst().first?.hasPrefix("2017-05-02 21:17–2017-05-03 14:23") == true, "\(text.standardOutput)")

        // `places`: each last visit where it was lived, with its offset; --utc in UTC.
        let places = try home.run("places")
        #expect(places.status == 0, "\(places.standardError)")
        let lastVisits = places.standardOutput.split(separator: "\n").compactMap { $0.components(separatedBy: ", last ").last }
        #expect(!lastVisits.isEmpty && lastVisits.allSatisfy { $0.hasSuffix("+10:00") }, "\(places.standardOutput)")
        let utc = try home.run("places", "--utc").standardOutput.split(separator: "\n").compactMap { $0.components(separatedBy: ", last ").last }
        #expect(utc.count == lastVisits.count && utc.allSatisfy { $0.hasSuffix("Z") }, "\(utc)")
    }

    /// `history --date` is the day lived in +10:00, each time printed with its offset; `--utc`
    /// prints UTC.
    @Test func historyPrintsWhereEachFixWasLived() throws {
        let home = try Self.importedHome()
        let local = try home.run("history", "--track", "--date", "2017-05-03")
        #expect(local.status == 0, "\(local.standardError)")
        let times = local.standardOutput.split(separator: "\n").map { String($0.split(separator: "\t")[0]) }
        #expect(times.count > 20, "\(local.standardOutput)")
        #expect(times.allSatisfy { $0.hasPrefix("2017-05-03T") && $0.hasSuffix("+10:00") }, "\(times)")
        let utc = try home.run("history", "--track", "--date", "2017-05-03", "--utc")
        let utcTimes = utc.standardOutput.split(separator: "\n").map { String($0.split(separator: "\t")[0]) }
        #expect(utcTimes.count == times.count)
        #expect(utcTimes.allSatisfy { $0.hasSuffix("Z") }, "\(utcTimes)")
        #expect(utcTimes.first?.hasPrefix("2017-05-02T1") == true, "the day lived in +10:00 began on the 2nd in UTC: \(utcTimes)")
    }

    /// The digest of the day: read in +10:00, says so, shows the night with its date, and is
    /// dated at the day's first instant there.
    @Test func theDigestTellsTheDayWhereItWasLived() throws {
        let home = try Self.importedHome()
        let digest = try home.run("digest", "--date", "2017-05-03", "--no-sync", "--json")
        #expect(digest.status == 0, "\(digest.standardError)")
        let note = try Self.json(digest)
        let id = try #require(note["id"] as? Int)
        let content = try home.storedContent(id)
        #expect(content.contains("(UTC+10:00)"), "\(content)")
        #expect(content.contains("<li>2017-05-02 21:17–14:23"), "\(content)")
        let (file, exported) = try home.export("day.enex")
        #expect(exported.status == 0, "\(exported.standardError)")
        let enex = try String(contentsOfFile: file, encoding: .utf8)
        #expect(enex.contains("<created>20170502T140000Z</created>"), "midnight of 2017-05-03 in +10:00")
    }

    /// `queue list` prints the time queued in note.time_zone with its offset; `--utc` in UTC.
    @Test func queueListNamesItsZone() throws {
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        try home.writeConfig("[note]\ntime_zone = \"Asia/Kolkata\"\n")
        #expect(try home.run("log", "--at", "1,2", "--no-sync").status == 0)
        let local = try home.run("queue", "list").standardOutput
        #expect(local.split(separator: "\t")[2].hasSuffix("+05:30"), "\(local)")
        let utc = try home.run("queue", "list", "--utc").standardOutput
        #expect(utc.split(separator: "\t")[2].hasSuffix("Z"), "\(utc)")
    }
}
