@testable import Capture
import Foundation
import XCTest

/// Every real receiver capture in `../shared/nmea-real/` read by enlog and by gpsd (Debian's
/// `gpsdecode -j`, an independent decoder): the last fix must be the same position within 1 m and
/// the same time to the millisecond, or the capture is listed below with the reason enlog is right.
final class NMEARealCaptureTests: XCTestCase {
    static let captures = Fixtures.repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared/nmea-real")

    /// Captures where gpsd 3.22's last fix differs from enlog's, with the reason from the sentences.
    /// Each entry is checked to still differ, so the list cannot go stale.
    static let knownDifferences: [String: String] = [
        "april6_2019.log": "three RMC: the only one with a real date (220899) is the log's last sentence, which gpsd "
            + "never reports; the fix before it has the year -1 (2208-1), garbage",
        "ericsson-gru04.log": "an annotated capture assembled out of order: the GGA fix at 17:06:55 is followed by GLL, "
            + "ZDA and GNS stamped 17:06:00, then only proprietary sentences, so gpsd closes no cycle with a fix; "
            + "enlog's last fix is that GNS, dated by the ZDA",
        "foretrex-201.head78.log": "the first fix after the outage (20:00:04) is the log's last cycle, which gpsd never reports",
        "telit-he910.head266.log": "the first fix after the outage (10:51:53.71) is the log's last cycle, which gpsd never reports",
        "furuno_gl_ga.log": "GNS mode NDD (GPS unused, GLONASS and Galileo differential) is a fix and RMC says A; "
            + "gpsd 3.22 reads only the mode's first character, N, and drops every cycle",
        "hp58534a.log": "no sentence carries a checksum (each ends in '$'): enlog trusts only checksummed sentences",
        "pynmeagps__pygpsdata-nmea2.log": "one full cycle and a partial one: gpsd learns a receiver's cycle from two "
            + "complete ones before it reports, so it reports none",
        "pynmeagps__pygpsdata-nmea4.log": "sample sentences of one moment (10:36:07) from many devices: one cycle, "
            + "which gpsd never reports",
        "pynmeagps__pygpsdata-nmea4sm.log": "one cycle (10:36:07), which gpsd never reports",
        "pynmeagps__pygpsdata-um981.log": "two cycles, the second partial; the GLL longitudes are '-0214.41467156' "
            + "(a sign inside the field) and are skipped as invalid; gpsd reports none",
    ]

    /// The logs that lost their first fix after an outage before issue 14 give it, where gpsd has no
    /// answer to compare with (time, latitude, longitude).
    static let firstFixAfterOutage: [String: (String, Double, Double)] = [
        "ericsson-gru04.log": ("2026-02-06T17:06:00.000Z", 41 + 11.59880 / 60, -(111 + 56.56667 / 60)),
        "foretrex-201.head78.log": ("2010-08-26T20:00:04.000Z", 55 + 4.4343 / 60, 10 + 25.5386 / 60),
        "telit-he910.head266.log": ("2019-03-12T10:51:53.710Z", 50 + 50.4122 / 60, 4 + 20.8266 / 60),
    ]

    func testLastFixAgreesWithGPSDOnEveryCapture() throws {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: Self.captures.path))?
            .filter { $0.hasSuffix(".log") }.sorted() ?? []
        guard !names.isEmpty else { throw XCTSkip("no captures at \(Self.captures.path)") }
        guard let gpsdecode = Subprocess.which("gpsdecode") else { throw XCTSkip("gpsdecode (gpsd-clients) is not installed") }

        var report: [String] = []
        for name in names {
            let path = Self.captures.appendingPathComponent(name).path
            let gpsd = try GPSDAnswer(gpsdecode: gpsdecode, log: path)
            let enlog = EnlogAnswer(log: path)
            let verdict = Self.compare(enlog: enlog, gpsd: gpsd)
            report.append("\(name): \(verdict ?? "agree") | enlog \(enlog) | gpsd \(gpsd)")
            if let (time, latitude, longitude) = Self.firstFixAfterOutage[name] {
                let formatter = ISO8601DateFormatter()
                formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
                XCTAssertEqual(enlog.time, formatter.date(from: time), name)
                XCTAssertLessThan(Self.distance(enlog.position ?? (0, 0), (latitude, longitude)), 0.01, name)
            }
            if let reason = Self.knownDifferences[name] {
                XCTAssertNotNil(verdict, "\(name) is listed as differing (\(reason)) but now agrees with gpsd")
            } else if let verdict {
                XCTFail("\(name): \(verdict)\n  enlog: \(enlog)\n  gpsd:  \(gpsd)")
            }
        }
        print(report.joined(separator: "\n"))
    }

    /// 1024 GPS weeks: gpsd 3.22 takes dates before 2017 for a receiver's week-rollover bug.
    static let gpsWeekRollover: TimeInterval = 1024 * 7 * 86_400
    static let rolloverGuessBefore = ISO8601DateFormatter().date(from: "2017-01-01T00:00:00Z")!

    /// `nil` when both give the same answer (allowing for gpsd 3.22's two systematic quirks, each
    /// checked from the fixes), else what differs.
    static func compare(enlog: EnlogAnswer, gpsd: GPSDAnswer) -> String? {
        switch (enlog.position, gpsd.position) {
        case (nil, nil):
            return nil
        case (nil, _?):
            return "gpsd has a fix, enlog none"
        case (_?, nil):
            return "enlog has a fix, gpsd none"
        case (_?, _?):
            break
        }
        var gpsdTime = gpsd.time
        // gpsd adds 1024 weeks to a date before 2017: undo it where enlog dates the fix before 2017.
        if let theirs = gpsdTime, let mine = enlog.time, mine < rolloverGuessBefore,
           abs(theirs.timeIntervalSince(mine) - gpsWeekRollover) < 86_400 {
            gpsdTime = theirs.addingTimeInterval(-gpsWeekRollover)
        }
        func same(_ fix: (position: (Double, Double), time: Date?)) -> Bool {
            guard distance(fix.position, gpsd.position!) <= 1 else { return false }
            switch (fix.time, gpsdTime) {
            case (nil, nil): return true
            case let (mine?, theirs?): return abs(theirs.timeIntervalSince(mine)) < 0.0005
            default: return false
            }
        }
        let last = (position: enlog.position!, time: enlog.time)
        if same(last) { return nil }
        // gpsd reports a cycle when the next one begins, so never the log's last: then its last
        // fix is enlog's one before last.
        if enlog.fixes.count >= 2 {
            let previous = enlog.fixes[enlog.fixes.count - 2]
            if same((position: (previous.latitude, previous.longitude), time: previous.timestamp)) { return nil }
        }
        let metres = distance(last.position, gpsd.position!)
        if metres > 1 { return String(format: "positions %.1f m apart", metres) }
        switch (enlog.time, gpsdTime) {
        case let (mine?, theirs?): return "times differ by \(theirs.timeIntervalSince(mine)) s"
        default: return "time only from \(enlog.time == nil ? "gpsd" : "enlog")"
        }
    }

    static func distance(_ a: (Double, Double), _ b: (Double, Double)) -> Double {
        let radians = Double.pi / 180
        let dLat = (b.0 - a.0) * radians, dLon = (b.1 - a.1) * radians
        let h = sin(dLat / 2) * sin(dLat / 2) + cos(a.0 * radians) * cos(b.0 * radians) * sin(dLon / 2) * sin(dLon / 2)
        return 2 * 6_371_008.8 * asin(min(1, h.squareRoot()))
    }
}

/// enlog's last valid position in a log, with its time when the log dates it.
struct EnlogAnswer: CustomStringConvertible {
    var fixes: [Fix] = []
    var position: (Double, Double)?
    var time: Date?
    var error: String?

    init(log path: String) {
        do {
            let (fixes, reader) = try NMEALogLocation(path: path).readAll()
            self.fixes = fixes
            if let last = fixes.last {
                position = (last.latitude, last.longitude)
                time = last.timestamp
            } else if let epoch = reader.lastValidEpoch, let lat = epoch.latitude, let lon = epoch.longitude {
                position = (lat, lon)
            }
            if fixes.isEmpty { error = NMEALogLocation(path: path).noFixError(reader).reason }
        } catch {
            self.error = error.reason
        }
    }

    var description: String {
        let where_ = position.map { String(format: "%.7f,%.7f", $0.0, $0.1) } ?? "no fix"
        return "\(where_) \(time.map { "\($0.timeIntervalSince1970)" } ?? "untimed")\(error.map { " (\($0))" } ?? "")"
    }
}

/// gpsd's last TPV report with `mode >= 2` for a log.
struct GPSDAnswer: CustomStringConvertible {
    var position: (Double, Double)?
    var time: Date?

    init(gpsdecode: URL, log path: String) throws {
        // The file itself as standard input, as docs/logging.md says (gpsd's lexer reads it in its own chunks).
        let result = try Subprocess.run(URL(fileURLWithPath: "/bin/sh"), ["-c", "exec \"$0\" -j < \"$1\"", gpsdecode.path, path])
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        // gpsd ends its JSON lines with CR LF, one Character to Swift.
        for line in result.standardOutput.split(whereSeparator: \.isNewline) {
            guard let report = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  report["class"] as? String == "TPV", ((report["mode"] as? NSNumber)?.intValue ?? 0) >= 2,
                  let lat = (report["lat"] as? NSNumber)?.doubleValue, let lon = (report["lon"] as? NSNumber)?.doubleValue
            else { continue }
            position = (lat, lon)
            time = (report["time"] as? String).flatMap { formatter.date(from: $0) }
        }
    }

    var description: String {
        let where_ = position.map { String(format: "%.7f,%.7f", $0.0, $0.1) } ?? "no fix"
        return "\(where_) \(time.map { "\($0.timeIntervalSince1970)" } ?? "untimed")"
    }
}
