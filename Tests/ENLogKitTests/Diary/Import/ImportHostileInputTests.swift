import Foundation
import GRDB
import XCTest
@testable import Capture

/// Round three of hostile input to `enlog import`: dates no calendar has, skip reasons that name
/// the cause, UTF-16 files, and quoted CSV fields holding line breaks.
final class ImportHostileInputTests: XCTestCase {
    static let start = 1_718_444_200   // 2024-06-15T09:36:40Z

    func importJSON(_ home: EnlogHome, _ name: String, _ text: String) throws -> (ProcessResult, [String: Any]) {
        let file = try home.directory.file(name, contents: text)
        let result = try home.run("import", file.path, "--json")
        let summary = (try? JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8))) as? [String: Any] ?? [:]
        return (result, summary)
    }

    func timestamps(_ home: EnlogHome) throws -> [String] {
        guard FileManager.default.fileExists(atPath: home.database) else { return [] }
        return try DatabaseQueue(path: home.database).read { db in
            try String.fetchAll(db, sql: "SELECT timestamp FROM fix ORDER BY timestamp")
        }
    }

    /// A 30 February, a 29 February in a common year, a 31 April: no date, in every reader that
    /// reads ISO 8601 times (Google's JSON did roll 2024-02-30 over into March 1st).
    func testImpossibleCalendarDatesAreNoDateInEveryReader() throws {
        let impossible = ["2024-02-30T00:00:08Z", "2023-02-29T12:00:00.000Z", "2025-04-31T08:00:00+02:00", "2100-02-29T00:00:00Z",
                          "2024-06-31 10:00:00"]
        let home = try EnlogHome()
        let records = "{\"locations\": [" + (impossible + ["2024-02-28T00:00:08Z"]).map {
            "{\"latitudeE7\": 485000000, \"longitudeE7\": 23000000, \"timestamp\": \"\($0)\"}"
        }.joined(separator: ", ") + "]}"
        let csv = "time,lat,lon\n" + (impossible + ["2024-02-28T00:00:09Z"]).map { "\($0),48.6,2.4\n" }.joined()
        let geojson = "{\"type\": \"FeatureCollection\", \"features\": [" + (impossible + ["2024-02-28T00:00:10Z"]).map {
            "{\"type\": \"Feature\", \"geometry\": {\"type\": \"Point\", \"coordinates\": [2.5, 48.7]}, \"properties\": {\"timestamp\": \"\($0)\"}}"
        }.joined(separator: ", ") + "]}"
        for (name, text) in [("Records.json", records), ("points.csv", csv), ("points.geojson", geojson)] {
            let (result, summary) = try importJSON(home, name, text)
            XCTAssertEqual(result.status, 0, "\(name): \(result.standardError)")
            XCTAssertEqual(summary["read"] as? Int, 1, "\(name): \(result.standardOutput)")
            XCTAssertEqual(summary["skipped"] as? [String: Int], ["time that is no date": impossible.count], "\(name): \(result.standardOutput)")
        }
        let stored = try timestamps(home)
        XCTAssertEqual(stored.count, 3, "\(stored)")
        XCTAssertFalse(stored.contains { $0.hasPrefix("2024-03-01") || $0.hasPrefix("2023-03-01") || $0.hasPrefix("2025-05-01") }, "\(stored)")
    }

    /// A time before 1980 or after 2099 is a date, out of the range a fix may hold; a time that
    /// does not parse is no date; a file whose every record had a bad position says so, not that
    /// it "holds no point with a time".
    func testSkipReasonsNameTheCause() throws {
        let home = try EnlogHome()
        let records = """
            {"locations": [
              {"latitudeE7": 485000000, "longitudeE7": 23000000, "timestamp": "1969-07-20T20:17:40Z"},
              {"latitudeE7": 485000000, "longitudeE7": 23000000, "timestampMs": "-1000"},
              {"latitudeE7": 485000000, "longitudeE7": 23000000, "timestamp": "2150-01-01T00:00:00Z"},
              {"latitudeE7": 485000000, "longitudeE7": 23000000, "timestamp": "yesterday"},
              {"latitudeE7": 485000000, "longitudeE7": 23000000, "timestamp": "2024-06-15T09:36:40Z"}
            ]}
            """
        let (result, summary) = try importJSON(home, "Records.json", records)
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertEqual(summary["skipped"] as? [String: Int], ["time out of range": 3, "time that is no date": 1], result.standardOutput)

        let csv = "time,lat,lon\n1969-12-31T23:59:59Z,48.5,2.3\nnot a time,48.5,2.3\n"
        let (csvResult, csvSummary) = try importJSON(home, "old.csv", csv)
        XCTAssertEqual(csvResult.status, 65, csvResult.standardError)
        // --json gives the summary whatever failed: nothing read, the file's error in it.
        XCTAssertEqual(csvSummary["read"] as? Int, 0, csvResult.standardOutput)
        XCTAssertEqual((csvSummary["errors"] as? [[String: Any]])?.count, 1, csvResult.standardOutput)
        XCTAssertTrue(csvResult.standardError.contains("1 with time out of range"), csvResult.standardError)
        XCTAssertTrue(csvResult.standardError.contains("1 with time that is no date"), csvResult.standardError)

        let badPositions = """
            {"locations": [
              {"latitudeE7": 1900000000, "longitudeE7": 23000000, "timestamp": "2024-06-15T09:36:40Z"},
              {"latitudeE7": 1000000000, "longitudeE7": 23000000, "timestamp": "2024-06-15T09:36:41Z"}
            ]}
            """
        let (positions, _) = try importJSON(home, "positions.json", badPositions)
        XCTAssertEqual(positions.status, 65, positions.standardError)
        XCTAssertFalse(positions.standardError.contains("with a time"), positions.standardError)
        XCTAssertTrue(positions.standardError.contains("2 with position that cannot be"), positions.standardError)
        XCTAssertTrue(positions.standardError.contains("no record that can be a point"), positions.standardError)
    }

    static func gpx(points: Int) -> String {
        var text = "<?xml version=\"1.0\" encoding=\"UTF-16\"?>\n<gpx version=\"1.1\" creator=\"Hôtel ☃ 🗺\" xmlns=\"http://www.topografix.com/GPX/1/1\">"
            + "<trk><name>Zürich 🚲</name><trkseg>\n"
        for second in 0..<points {
            text += "<trkpt lat=\"48.\(10_000 + second % 80_000)\" lon=\"11.5\"><time>\(TrackTime.string(Date(timeIntervalSince1970: Double(start + second))))</time></trkpt>\n"
        }
        return text + "</trkseg></trk></gpx>\n"
    }

    static func csv(points: Int) -> String {
        "time,lat,lon,device\n" + (0..<points).map { "\(start + $0),52.\(10_000 + $0 % 80_000),13.4,Müller 📱\n" }.joined()
    }

    enum Encoding: CaseIterable { case littleEndianWithMark, bigEndianWithMark, littleEndianDeclared, bigEndianDeclared }

    static func utf16(_ text: String, _ encoding: Encoding) -> Data {
        var bytes: [UInt8] = []
        switch encoding {
        case .littleEndianWithMark: bytes = [0xFF, 0xFE]
        case .bigEndianWithMark: bytes = [0xFE, 0xFF]
        default: break
        }
        let bigEndian = encoding == .bigEndianWithMark || encoding == .bigEndianDeclared
        for unit in text.utf16 {
            let pair = [UInt8(unit & 0xFF), UInt8(unit >> 8)]
            bytes += bigEndian ? pair.reversed() : pair
        }
        return Data(bytes)
    }

    /// UTF-16 with a byte order mark (GPX and CSV), or without one as XML allows when the
    /// declaration says so: read as the UTF-8 file is, across chunks (more than 1 MiB of UTF-16).
    func testUTF16FilesAreReadAsTheirUTF8Twins() throws {
        let points = 12_000
        for encoding in Encoding.allCases {
            var files = [("track.gpx", Self.gpx(points: points))]
            if encoding == .littleEndianWithMark || encoding == .bigEndianWithMark { files.append(("points.csv", Self.csv(points: points))) }
            for (name, text) in files {
                let home = try EnlogHome()
                let file = home.directory.path("\(encoding)-\(name)")
                try Self.utf16(text, encoding).write(to: URL(fileURLWithPath: file))
                let result = try home.run("import", file, "--json")
                XCTAssertEqual(result.status, 0, "\(encoding) \(name): \(result.standardError)")
                let summary = (try? JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8))) as? [String: Any] ?? [:]
                XCTAssertEqual(summary["added"] as? Int, points, "\(encoding) \(name): \(result.standardOutput)")
                XCTAssertEqual(summary["format"] as? String, name.hasSuffix(".gpx") ? "gpx" : "csv")
                if name.hasSuffix(".csv") {
                    let devices = try DatabaseQueue(path: home.database).read { db in try String.fetchAll(db, sql: "SELECT DISTINCT device FROM fix") }
                    XCTAssertEqual(devices, ["Müller 📱"])
                }
            }
        }
    }

    /// Broken UTF-16 (a lone surrogate, an odd byte at the end) is a bad file, named, nothing added.
    func testBrokenUTF16IsABadFile() throws {
        let home = try EnlogHome()
        var lone = Self.utf16(Self.csv(points: 3), .littleEndianWithMark)
        lone.append(contentsOf: [0x00, 0xD8, 0x41, 0x00])
        let file = home.directory.path("lone.csv")
        try lone.write(to: URL(fileURLWithPath: file))
        let result = try home.run("import", file)
        XCTAssertEqual(result.status, 65, result.standardError)
        XCTAssertEqual(result.standardErrorLines.count, 1, result.standardError)
        XCTAssertTrue(result.standardError.contains("UTF-16"), result.standardError)
        XCTAssertEqual(try timestamps(home), [])
    }

    /// A quoted field may hold a line break (CRLF or LF): it stays in its row, and what follows
    /// it on the next line is no row of its own.
    func testAQuotedCSVFieldHoldingALineBreakStaysInItsRow() throws {
        let home = try EnlogHome()
        let csv = "Type,Start Time,End Time,Latitude,Longitude,Name\r\n"
            + "Visit,2024-06-15T09:36:40Z,2024-06-15T10:36:40Z,48.5,2.3,\"Café\r\nde la Gare\"\r\n"
            + "Visit,2024-06-15T11:00:00Z,2024-06-15T12:00:00Z,48.6,2.4,\"note\n2024-06-15T11:30:00Z,10,10,x\"\r\n"
            + "Point,2024-06-15T13:00:00Z,,48.7,2.5,\"\"\"quoted\"\"\r\n\"\r\n"
        let (result, summary) = try importJSON(home, "visits.csv", csv)
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertEqual(summary["read"] as? Int, 3, result.standardOutput)
        XCTAssertEqual(summary["skipped"] as? [String: Int], [:], result.standardOutput)
        XCTAssertEqual((summary["visits"] as? [String: Int])?["read"], 2, result.standardOutput)
        let places = try DatabaseQueue(path: home.database).read { db in
            try String.fetchAll(db, sql: "SELECT latitude || ',' || longitude FROM fix ORDER BY timestamp")
        }
        XCTAssertEqual(places, ["48.5,2.3", "48.6,2.4", "48.7,2.5"])
    }
}
