@testable import ENLogKit
import Foundation
import XCTest

/// Every real receiver capture in `../shared/nmea-real/` read by enlog and by gpsd (Debian's
/// `gpsdecode -j`, an independent decoder): the last fix must be the same position within 1 m and
/// the same time to the millisecond, or the capture is listed below with the reason enlog is right.
final class NMEARealCaptureTests: XCTestCase {
    static let captures = Fixtures.repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared/nmea-real")

    /// Captures where gpsd 3.22's last fix differs from enlog's, with the reason from the sentences.
    /// Each entry is checked to still differ, so the list cannot go stale.
    static let knownDifferences: [String: String] = [:]

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
            if let reason = Self.knownDifferences[name] {
                XCTAssertNotNil(verdict, "\(name) is listed as differing (\(reason)) but now agrees with gpsd")
            } else if let verdict {
                XCTFail("\(name): \(verdict)\n  enlog: \(enlog)\n  gpsd:  \(gpsd)")
            }
        }
        print(report.joined(separator: "\n"))
    }

    /// `nil` when both give the same answer, else what differs.
    static func compare(enlog: EnlogAnswer, gpsd: GPSDAnswer) -> String? {
        switch (enlog.position, gpsd.position) {
        case (nil, nil):
            return nil
        case (nil, _?):
            return "gpsd has a fix, enlog none"
        case (_?, nil):
            return "enlog has a fix, gpsd none"
        case let (mine?, theirs?):
            let metres = distance(mine, theirs)
            if metres > 1 { return String(format: "positions %.1f m apart", metres) }
        }
        switch (enlog.time, gpsd.time) {
        case (nil, nil):
            return nil
        case let (mine?, theirs?):
            let difference = theirs.timeIntervalSince(mine)
            if abs(difference) < 0.0005 { return nil }
            return "times differ by \(difference) s"
        default:
            return "time only from \(enlog.time == nil ? "gpsd" : "enlog")"
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
    var position: (Double, Double)?
    var time: Date?
    var error: String?

    init(log path: String) {
        do {
            let (fixes, reader) = try NMEALogLocation(path: path).readAll()
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
        // The file itself as standard input, as the README says (gpsd's lexer reads it in its own chunks).
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
