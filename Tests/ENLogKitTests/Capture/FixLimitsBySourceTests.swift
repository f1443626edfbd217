import Foundation
import XCTest
@testable import Capture

/// Every source of a fix (`--at`, NMEA to `log` and `import`, GPX, a photo's EXIF, gpsd) goes
/// through the same checks (`Fix.Limits`, in `Fix.init`): an impossible value is refused with
/// its name, exit 65, and nothing is stored, whichever source it came from.
final class FixLimitsBySourceTests: XCTestCase {
    /// An NMEA log of one cycle (GGA and RMC) at 2026-11-20 10:00:00 UTC with `altitude`.
    static func nmea(altitude: String) -> String {
        func sentence(_ body: String) -> String {
            "$\(body)*" + String(format: "%02X", body.utf8.reduce(0) { $0 ^ $1 })
        }
        return [sentence("GPGGA,100000.00,4851.504,N,00217.670,E,1,08,0.9,\(altitude),M,46.9,M,,"),
                sentence("GPRMC,100000.00,A,4851.504,N,00217.670,E,0.5,54.7,201126,,,A")].joined(separator: "\r\n") + "\r\n"
    }

    /// A GPX 1.0 track of one point with `inner` inside `<trkpt>` and `time` as its time.
    static func gpx(_ inner: String, time: String = "2026-11-20T10:00:00Z") -> String {
        """
        <?xml version="1.0"?>
        <gpx version="1.0" creator="test" xmlns="http://www.topografix.com/GPX/1/0">
        <trk><trkseg><trkpt lat="48.85" lon="2.29">\(inner)<time>\(time)</time></trkpt></trkseg></trk></gpx>
        """
    }

    func testAnImpossibleValueIsRefusedAlikeFromEverySource() throws {
        let home = try EnlogHome()
        var cases: [(source: String, arguments: [String], says: String)] = [
            ("--at", ["log", "--at", "48.85,2.29,99999999", "--no-geocode", "--no-sync"], "altitude 99999999 m is outside -11000...100000 m"),
        ]
        let files: [(name: String, text: String, command: String, says: String)] = [
            ("tall.nmea", Self.nmea(altitude: "99999999.0"), "log", "altitude 99999999 m is outside -11000...100000 m"),
            ("tall-import.nmea", Self.nmea(altitude: "99999999.0"), "import", "altitude 99999999 m is outside -11000...100000 m"),
            ("ele.gpx", Self.gpx("<ele>1e308</ele>"), "import", "altitude 1e+308 m is outside -11000...100000 m"),
            ("deep.gpx", Self.gpx("<ele>-4000000000</ele>"), "import", "altitude -4000000000 m is outside"),
            ("speed.gpx", Self.gpx("<speed>-3</speed>"), "import", "speed -3 m/s is outside 0...1000 m/s"),
            ("course.gpx", Self.gpx("<course>400</course>"), "import", "course 400 ° is outside 0...360 °"),
            // Import skips and counts a point whose time no fix may hold (real exports carry 1970
            // times); a file of nothing else imports nothing and says why.
            ("year1.gpx", Self.gpx("", time: "0001-01-01T00:00:00Z"), "import", "nothing to import (GPX; skipped: 1 with time out of range)"),
            ("year9999.gpx", Self.gpx("", time: "9999-12-31T23:59:59Z"), "import", "nothing to import (GPX; skipped: 1 with time out of range)"),
        ]
        for file in files {
            let path = try home.directory.file(file.name, contents: file.text).path
            let arguments = file.command == "log" ? ["log", "--nmea", path, "--no-geocode", "--no-sync"] : ["import", path]
            cases.append((file.name, arguments, file.says))
        }
        let photos: [(name: String, tags: [String], says: String)] = [
            ("deep.jpg", TestFiles.gpsTags(latitude: 48.85, longitude: 2.29, altitude: -4_000_000_000, utc: "2026:11:20 10:00:00"),
             "altitude -4000000000 m is outside -11000...100000 m"),
            ("clock.jpg", TestFiles.gpsTags(latitude: 48.85, longitude: 2.29, utc: "2026:11:20 25:61:61"),
             "GPSTimeStamp 25:61:61 is not a time of day"),
        ]
        for photo in photos {
            let path = try TestFiles.photo(home.directory.path(photo.name), tags: photo.tags)
            cases.append((photo.name, ["log", "--photo", path, "--no-geocode", "--no-sync"], photo.says))
        }
        for item in cases {
            let result = try home.run(item.arguments)
            XCTAssertEqual(result.status, 65, "\(item.source): \(result.standardError)")
            XCTAssertEqual(result.standardErrorLines.count, 1, "\(item.source): \(result.standardError)")
            XCTAssertTrue(result.standardError.contains(item.says), "\(item.source): \(item.says) not in \(result.standardError)")
        }
        XCTAssertTrue(try home.history().isEmpty, "nothing was stored from any source")
    }

    /// gpsd: a report whose values no fix may hold is no fix (as a report without a position).
    func testGPSDReportsWithImpossibleValuesAreNoFix() {
        let base = #""class":"TPV","mode":3,"time":"2026-11-20T10:00:00.000Z","lat":48.85,"lon":2.29"#
        for extra in [#""alt":99999999"#, #""altMSL":-4000000000"#, #""eph":-5"#, #""speed":5000"#, #""track":720"#] {
            XCTAssertEqual(GPSDSession.decode(line: Data("{\(base),\(extra)}".utf8), needsTime: true), .report(nil), extra)
        }
        guard case .report(let fix?) = GPSDSession.decode(line: Data("{\(base),\"alt\":35}".utf8), needsTime: true) else {
            return XCTFail("a sane report is a fix")
        }
        XCTAssertEqual(fix.altitude, 35)
        let early = #"{"class":"TPV","mode":3,"time":"1970-01-01T00:00:10.000Z","lat":48.85,"lon":2.29}"#
        XCTAssertEqual(GPSDSession.decode(line: Data(early.utf8), needsTime: true), .report(nil), "before GPS time began")
    }
}
