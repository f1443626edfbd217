import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

enum TestPaths {
    static let packageRoot = Fixtures.repositoryRoot
    static let nmeaFixtures = Fixtures.root.appendingPathComponent("nmea")

    static func nmea(_ name: String) -> String {
        nmeaFixtures.appendingPathComponent(name).path
    }

    static func executableInPath(_ name: String) -> URL? { Subprocess.which(name) }
}

/// NMEA sentences with valid checksums, for logs generated at test time.
enum NMEA {
    static func sentence(_ body: String) -> String {
        let checksum = body.utf8.reduce(0, ^)
        return "$\(body)*\(String(format: "%02X", checksum))\r\n"
    }

    /// `count` epochs of GGA+GSA+RMC starting at `start`, `spacing` seconds apart.
    static func log(start: Date, count: Int, spacing: TimeInterval, hdop: Double) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        var text = ""
        for index in 0..<count {
            let time = start.addingTimeInterval(Double(index) * spacing)
            let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .nanosecond], from: time)
            let hundredths = (parts.nanosecond ?? 0) / 10_000_000
            let hms = String(format: "%02d%02d%02d.%02d", parts.hour!, parts.minute!, parts.second!, hundredths)
            let dmy = String(format: "%02d%02d%02d", parts.day!, parts.month!, parts.year! % 100)
            let lat = String(format: "4808.%04d", 9210 + index % 1000)
            text += sentence("GPGGA,\(hms),\(lat),N,01134.6930,E,1,09,\(hdop),520.1,M,47.3,M,,")
            text += sentence("GPGSA,A,3,02,05,07,13,15,18,20,24,29,,,,1.4,\(hdop),1.1")
            text += sentence("GPRMC,\(hms),A,\(lat),N,01134.6930,E,2.7,54.1,\(dmy),3.1,E,A")
        }
        return text
    }
}
