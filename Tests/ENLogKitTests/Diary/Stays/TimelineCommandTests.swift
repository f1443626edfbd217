import Foundation
import Testing
@testable import Capture
@testable import Diary

/// `enlog timeline`, the built binary on a real outbox: a day imported from a CSV with accuracies
/// and a Google visit becomes its stays and moves, a typed `--at` is a stay by itself, and the
/// stays.* settings are read and range-checked.
@Suite("enlog timeline")
struct TimelineCommandTests {
    static let day = "2026-03-02"
    static let dayStart = 1_772_409_600.0   // 2026-03-02T00:00:00Z

    /// A day in Munich, a fix every 5 s: home 07:00-08:00 (a 150 m Wi-Fi fix 400 m off every
    /// five minutes), a 15-minute walk of 1.2 km east, a café 08:15-10:00 without any fix from
    /// 08:30 to 09:30 (indoors), the walk back, and a Google visit 11:00-12:00 (a CSV "visit" row).
    static func csv() -> String {
        var rows = ["time,lat,lon,accuracy,type,end,name"]
        func add(_ seconds: Double, east: Double, north: Double = 0, accuracy: Double = 6) {
            let stamp = TrackTime.string(Date(timeIntervalSince1970: dayStart + seconds))
            rows.append("\(stamp),\(48.137 + north / 111_195),\(11.575 + east / 74_200),\(accuracy),,,")
        }
        for second in stride(from: 7 * 3600.0, to: 8 * 3600, by: 5) {
            second.truncatingRemainder(dividingBy: 300) == 0 ? add(second, east: 400, accuracy: 150) : add(second, east: Double(Int(second) % 7))
        }
        for step in 1..<180 { add(8 * 3600 + Double(step) * 5, east: Double(step) * 1200 / 180) }
        for second in stride(from: 8 * 3600 + 900.0, to: 10 * 3600, by: 5) where !(8.5 * 3600..<9.5 * 3600).contains(second) {
            add(second, east: 1200 + Double(Int(second) % 5))
        }
        for step in 1..<180 { add(10 * 3600 + Double(step) * 5, east: 1200 - Double(step) * 1200 / 180) }
        let visitStart = TrackTime.string(Date(timeIntervalSince1970: dayStart + 11 * 3600))
        let visitEnd = TrackTime.string(Date(timeIntervalSince1970: dayStart + 12 * 3600))
        rows.append("\(visitStart),48.2,11.6,,visit,\(visitEnd),Café Rosa")
        return rows.joined(separator: "\n") + "\n"
    }

    /// A home whose places are not named: geocoding off (PlacesCommandTests name them).
    static func home() throws -> EnlogHome {
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        return home
    }

    /// Hours since the day's midnight of an ISO 8601 time in the JSON.
    static func hours(_ value: Any?) -> Double {
        guard let text = value as? String, let date = ISO8601DateFormatter().date(from: text) else { return -99 }
        return (date.timeIntervalSince1970 - dayStart) / 3600
    }

    static func json(_ result: ProcessResult) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
    }

    @Test func anImportedDayIsItsStaysAndMoves() throws {
        let home = try Self.home()
        let file = try home.directory.file("day.csv", contents: Self.csv())
        let imported = try home.run("import", file.path)
        try #require(imported.status == 0, "\(imported.standardError)")
        let result = try home.run("timeline", "--date", Self.day, "--json")
        try #require(result.status == 0, "\(result.standardError)")
        let timeline = try Self.json(result)
        let stays = try #require(timeline["stays"] as? [[String: Any]])
        try #require(stays.count == 3, "\(result.standardOutput)")
        // Within two minutes: the walk's last and first fixes near a place count as being there.
        for (stay, (arrival, departure)) in zip(stays, [(7.0, 8.0), (8.25, 10.0), (11.0, 12.0)]) {
            #expect(abs(Self.hours(stay["arrival"]) - arrival) < 2.0 / 60, "\(stay)")
            #expect(abs(Self.hours(stay["departure"]) - departure) < 2.0 / 60, "\(stay)")
        }
        #expect(stays.map { $0["origin"] as? String } == ["fixes", "fixes", "visit"])
        #expect(stays.last?["name"] as? String == "Café Rosa")
        // The café is one stay through its silent hour, and the Wi-Fi fixes neither split home
        // nor pulled its centre.
        #expect(abs((stays[0]["longitude"] as? Double ?? 0) - 11.575) < 0.0002)
        let moves = try #require(timeline["moves"] as? [[String: Any]])
        #expect(moves.count == 2)
        #expect(((moves.first?["distanceMetres"] as? Int) ?? 0).distance(to: 1200) < 100)

        let text = try home.run("timeline", "--date", Self.day)
        #expect(text.status == 0)
        let lines = text.standardOutput.split(separator: "\n")
        #expect(lines.count == 7, "the zone, three stays, two moves, the day's total: \(text.standardOutput)")
        #expect(lines.first?.hasPrefix("times in ") == true, "\(text.standardOutput)")
        #expect(lines[5].hasSuffix("1 h 00 min  Café Rosa"), "\(text.standardOutput)")
        #expect(lines.last?.hasPrefix("Moving: ") == true, "\(text.standardOutput)")
        #expect(lines[2].contains("1.2 km"), "\(text.standardOutput)")
    }

    /// The whole day: a walk after the last stay with no stay at its end is the day's last move;
    /// the 45 silent minutes between the café and the visit are bridged, counted and said so;
    /// each move has the mode its pace tells; the digest's title and body give the timeline's numbers.
    @Test func theWholeDayWithItsGapsAndModes() throws {
        let home = try Self.home()
        var rows = Self.csv()
        for step in 1...240 {   // 12:00-12:20, a walk 1.6 km north (5 m/s is too fast: 1.33 m/s)
            let stamp = TrackTime.string(Date(timeIntervalSince1970: Self.dayStart + 12 * 3600 + Double(step) * 5))
            rows += "\(stamp),\(48.2 + Double(step) * 1600 / 240 / 111_195),11.6,6,,,\n"
        }
        let file = try home.directory.file("day.csv", contents: rows)
        try #require(try home.run("import", file.path).status == 0)
        let timeline = try Self.json(try home.run("timeline", "--date", Self.day, "--json"))
        let moves = try #require(timeline["moves"] as? [[String: Any]])
        try #require(moves.count == 3, "\(moves)")
        #expect(abs(Self.hours(moves[2]["departure"]) - 12) < 2.0 / 60, "the last move leaves the last stay: \(moves[2])")
        #expect(abs(Self.hours(moves[2]["arrival"]) - 12.333) < 2.0 / 60, "and ends where the track ends: \(moves[2])")
        #expect(((moves[2]["distanceMetres"] as? Int) ?? 0).distance(to: 1600) < 100, "\(moves[2])")
        #expect(moves[1]["gaps"] as? Int == 1, "10:15-11:00 without data: \(moves[1])")
        #expect((moves[1]["bridgedMetres"] as? Int ?? 0) > 5000, "bridged, not zero: \(moves[1])")
        #expect(moves.map { $0["mode"] as? String } == ["walking", "walking", "walking"], "\(moves)")
        #expect(moves.map { $0["modeSource"] as? String } == ["inferred", "inferred", "inferred"])
        let total = moves.reduce(0) { $0 + ($1["distanceMetres"] as? Int ?? 0) }
        #expect(timeline["distanceMetres"] as? Int == total, "every move lies within the day")
        let text = try home.run("timeline", "--date", Self.day).standardOutput
        #expect(text.contains("across a gap without data"), "\(text)")
        let digest = try home.run("digest", "--date", Self.day, "--no-sync")
        try #require(digest.status == 0, "\(digest.standardError)")
        let note = try Self.json(try home.run("queue", "show", "1", "--json"))
        let distance = TimelineText.distance(total)
        let moving = TimelineText.movingTime(timeline["movingSeconds"] as? Int ?? -1)
        #expect(note["title"] as? String == "Day \(Self.day): \(distance), \(moving) moving", "\(note["title"] ?? "")")
        let content = note["content"] as? String ?? ""
        #expect(content.contains("Distance travelled: \(distance). Time moving: \(moving)."), "\(content)")
        #expect(content.contains("Moving: \(distance), \(moving)"), "\(content)")
    }

    /// The day's last move reaches the track's next data however far beyond the day: from the
    /// visit at noon to a fix the next evening, bridged and marked, its share of the day counted.
    @Test func theLastMoveReachesTheNextDataBeyondTheDay() throws {
        let home = try Self.home()
        let file = try home.directory.file("day.csv", contents: Self.csv())
        try #require(try home.run("import", file.path).status == 0)
        let nextEvening = TrackTime.string(Date(timeIntervalSince1970: Self.dayStart + 44 * 3600))
        let later = try home.directory.file("later.gpx", contents: """
            <gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>
            <trkpt lat="48.3" lon="11.7"><time>\(nextEvening)</time></trkpt></trkseg></trk></gpx>
            """)
        try #require(try home.run("import", later.path).status == 0)
        let timeline = try Self.json(try home.run("timeline", "--date", Self.day, "--json"))
        let last = try #require((timeline["moves"] as? [[String: Any]])?.last)
        #expect(abs(Self.hours(last["departure"]) - 12) < 2.0 / 60, "from the visit: \(last)")
        #expect(abs(Self.hours(last["arrival"]) - 44) < 2.0 / 60, "to the next evening's fix: \(last)")
        #expect(last["gaps"] as? Int == 1, "\(last)")
        #expect((last["bridgedMetres"] as? Int ?? 0) > 10_000, "\(last)")
    }

    /// A GPX track's `<type>` (Arc's "taxi", a real export) is the mode of the move along it.
    @Test func aGPXTracksTypeIsTheMovesMode() throws {
        var home = try Self.home()
        home.extraEnvironment["ENLOG_NOTE_TIME_ZONE"] = "UTC"
        let file = ImportRealDataTests.folder.appendingPathComponent("gpx--Freika-dawarich--arc_example.gpx").path
        try #require(try home.run("import", file).status == 0)
        let timeline = try Self.json(try home.run("timeline", "--date", "2024-12-18", "--json"))
        let moves = try #require(timeline["moves"] as? [[String: Any]])
        #expect(moves.last?["mode"] as? String == "driving", "\(moves)")
        #expect(moves.last?["modeSource"] as? String == "source", "\(moves)")
    }

    /// Overland's batch as the app posts it (github.com/aaronpk/Overland-iOS: `{"locations": [Feature…]}`,
    /// `properties.motion` an array of motion states, `["driving", "stationary"]` in the real batch
    /// among ../shared/): half an hour still at home, a quarter of an hour "running" 2.5 km east
    /// (10 km/h, a pace inferred as cycling), half an hour still. The move's mode is the source's.
    @Test func overlandsMotionIsTheMovesMode() throws {
        var home = try Self.home()
        home.extraEnvironment["ENLOG_NOTE_TIME_ZONE"] = "UTC"
        var features: [String] = []
        func add(_ seconds: Double, east: Double, motion: String) {
            let stamp = TrackTime.string(Date(timeIntervalSince1970: Self.dayStart + seconds))
            features.append("""
                {"type": "Feature", "geometry": {"type": "Point", "coordinates": [\(11.575 + east / 74_200), 48.137]},
                 "properties": {"timestamp": "\(stamp)", "altitude": 520, "speed": -1, "horizontal_accuracy": 5,
                 "vertical_accuracy": 3, "motion": [\(motion)], "battery_state": "unplugged", "battery_level": 0.8,
                 "wifi": "", "device_id": "phone"}}
                """)
        }
        for second in stride(from: 7 * 3600.0, to: 7.5 * 3600, by: 20) { add(second, east: Double(Int(second) % 5), motion: "\"stationary\"") }
        for step in 0...45 { add(7.5 * 3600 + Double(step) * 20, east: Double(step) * 2500 / 45, motion: "\"running\"") }
        for second in stride(from: 7.75 * 3600 + 20, to: 8.25 * 3600, by: 20) {
            add(second, east: 2500 + Double(Int(second) % 5), motion: "\"stationary\"")
        }
        let file = try home.directory.file("overland.json", contents: "{\"locations\": [\(features.joined(separator: ",\n"))]}")
        let imported = try home.run("import", file.path)
        try #require(imported.status == 0, "\(imported.standardError)")
        let timeline = try Self.json(try home.run("timeline", "--date", Self.day, "--json"))
        let moves = try #require(timeline["moves"] as? [[String: Any]])
        try #require(moves.count == 1, "\(moves)")
        #expect(moves.first?["mode"] as? String == "running", "\(moves)")
        #expect(moves.first?["modeSource"] as? String == "source", "\(moves)")
    }

    /// Google Maps' day export as KML (a visit or a trip per Placemark: `TimeSpan`, `ExtendedData`
    /// `Category` and `Distance`, a Point or a LineString, as public scripts reading it document):
    /// the trip's Category is the move's mode. 5.2 km in 40 minutes is a pace inferred as cycling.
    @Test func aGoogleKMLTripsCategoryIsTheMovesMode() throws {
        var home = try Self.home()
        home.extraEnvironment["ENLOG_NOTE_TIME_ZONE"] = "UTC"
        func placemark(_ name: String, _ category: String, _ distance: Int, _ begin: String, _ end: String, _ geometry: String) -> String {
            """
            <Placemark><name>\(name)</name><ExtendedData>
            <Data name="Email"><value>someone@example.org</value></Data><Data name="Category"><value>\(category)</value></Data>
            <Data name="Distance"><value>\(distance)</value></Data></ExtendedData>
            <description>\(name) from \(begin) to \(end). Distance \(distance)m</description>
            \(geometry)<TimeSpan><begin>\(begin)</begin><end>\(end)</end></TimeSpan></Placemark>
            """
        }
        let line = (0...10).map { "\(11.575 + Double($0) * 5200 / 10 / 74_200),48.137,0" }.joined(separator: " ")
        let kml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <kml xmlns="http://www.opengis.net/kml/2.2"><Document><name>Location history from \(Self.day) to \(Self.day)</name>
            \(placemark("Home", "", 0, "\(Self.day)T07:00:00.000Z", "\(Self.day)T08:00:00.000Z",
                        "<Point><coordinates>11.575,48.137,0</coordinates></Point>"))
            \(placemark("Driving", "Driving", 5200, "\(Self.day)T08:00:00.000Z", "\(Self.day)T08:40:00.000Z",
                        "<LineString><altitudeMode>clampToGround</altitudeMode><coordinates>\(line)</coordinates></LineString>"))
            \(placemark("Office", "", 0, "\(Self.day)T08:40:00.000Z", "\(Self.day)T10:00:00.000Z",
                        "<Point><coordinates>\(11.575 + 5200 / 74_200.0),48.137,0</coordinates></Point>"))
            </Document></kml>
            """
        let file = try home.directory.file("history-\(Self.day).kml", contents: kml)
        let imported = try home.run("import", file.path)
        try #require(imported.status == 0, "\(imported.standardError)")
        let timeline = try Self.json(try home.run("timeline", "--date", Self.day, "--json"))
        let moves = try #require(timeline["moves"] as? [[String: Any]])
        try #require(moves.count == 1, "\(moves)")
        #expect(moves.first?["mode"] as? String == "driving", "\(moves)")
        #expect(moves.first?["modeSource"] as? String == "source", "\(moves)")
        #expect(moves.first?["distanceMetres"] as? Int == 5200, "Google's own figure: \(moves)")
    }

    /// A note typed with --at now is a stay today, however short, centred on what was typed.
    @Test func aTypedPositionIsAStayToday() throws {
        let home = try Self.home()
        let logged = try home.run("log", "--at", "35.681236,139.767125", "--no-geocode")
        try #require(logged.status == 0, "\(logged.standardError)")
        let stays = try #require(try Self.json(try home.run("timeline", "--json"))["stays"] as? [[String: Any]])
        #expect(stays.count == 1)
        #expect(stays.first?["latitude"] as? Double == 35.681236)
        #expect(stays.first?["longitude"] as? Double == 139.767125)
    }

    /// A larger radius from the settings joins what the default keeps apart; values out of
    /// range are refused with the range, a bad --date in one line.
    @Test func settingsAreReadAndChecked() throws {
        var home = try Self.home()
        let file = try home.directory.file("day.csv", contents: Self.csv())
        try #require(try home.run("import", file.path).status == 0)
        home.extraEnvironment["ENLOG_STAYS_MIN_DURATION"] = "7200"
        let long = try #require(try Self.json(try home.run("timeline", "--date", Self.day, "--json"))["stays"] as? [[String: Any]])
        #expect(long.map { $0["origin"] as? String } == ["visit"], "only stays of two hours and more: none in the fixes")
        home.extraEnvironment["ENLOG_STAYS_MIN_DURATION"] = "5"
        let refused = try home.run("timeline", "--date", Self.day)
        #expect(refused.status != 0)
        #expect(refused.standardError.contains("from 60 to 86400"), "\(refused.standardError)")
        home.extraEnvironment["ENLOG_STAYS_MIN_DURATION"] = nil
        let badDay = try home.run("timeline", "--date", "2026-02-30")
        #expect(badDay.status == ExitStatusCode.usage.rawValue)
        #expect(badDay.standardError.contains("not a date"))
    }

    /// The digest note tells the day as its timeline, with the names of places the user gave.
    @Test func theDigestShowsTheTimeline() throws {
        let home = try Self.home()
        let file = try home.directory.file("day.csv", contents: Self.csv())
        try #require(try home.run("import", file.path).status == 0)
        try #require(try home.run("places", "add", "Home", "--at", "48.137,11.575").status == 0)
        let digest = try home.run("digest", "--date", Self.day, "--no-sync")
        try #require(digest.status == 0, "\(digest.standardError)")
        let shown = try home.run("queue", "show", "1", "--json")
        let content = try #require(try Self.json(shown)["content"] as? String, "\(shown.standardOutput)")
        #expect(content.contains("<h3>Timeline</h3>"), "\(content)")
        #expect(content.range(of: #"<li>07:00–08:0\d  1 h 0\d min  Home</li>"#, options: String.CompareOptions.regularExpression) != nil, "\(content)")
        #expect(content.contains("1 h 00 min  Café Rosa</li>"), "\(content)")
    }

    /// `digest --since --until` writes each missing day once; run again, it writes nothing.
    @Test func aBackfillWritesEachDayOnce() throws {
        let home = try Self.home()
        let file = try home.directory.file("day.csv", contents: Self.csv())
        try #require(try home.run("import", file.path).status == 0)
        let first = try home.run("digest", "--since", "2026-03-01", "--until", "2026-03-04", "--no-sync", "--json")
        try #require(first.status == 0, "\(first.standardError)")
        let days = try #require(try JSONSerialization.jsonObject(with: Data(first.standardOutput.utf8)) as? [[String: Any]])
        #expect(days.map { $0["outcome"] as? String } == ["noFixes", "written", "noFixes"], "\(days)")
        let again = try home.run("digest", "--since", "2026-03-01", "--until", "2026-03-04", "--no-sync")
        #expect(again.standardOutput.contains("0 digests written, 1 already there, 2 days without fixes"), "\(again.standardOutput)")
        #expect(try home.notes().count == 1)
        for arguments in [["--since", "2026-03-04", "--until", "2026-03-01"], ["--since", "1900-01-01", "--until", "2100-01-01"],
                          ["--since", "2026-03-01"], ["--since", "2026-03-01", "--until", "2026-03-02", "--date", "2026-03-01"]] {
            let refused = try home.run(["digest", "--no-sync"] + arguments)
            #expect(refused.status == ExitStatusCode.usage.rawValue, "\(arguments): \(refused.standardError)")
        }
    }
}
