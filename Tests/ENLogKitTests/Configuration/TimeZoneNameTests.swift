import Foundation
import XCTest
@testable import Configuration

/// `TZ` is read as the C library reads it: every value stamps notes with the offset `date`
/// (glibc) shows for the same moment.
final class TimeZoneNameTests: XCTestCase {
    static let values = ["UTC+14", "<+14>-14", "EST5EDT", ":Europe/Paris", "Europe/Paris", "UTC", "<-0330>3:30",
                         "CET-1CEST,M3.5.0,M10.5.0/3", "NZST-12NZDT,M9.5.0,M4.1.0/3", "PST8PDT,M3.2.0,M11.1.0"]

    /// `TZ=value date -d @instant +%z`, as ±hh:mm.
    func glibcOffset(_ tz: String, at instant: Int) throws -> String {
        let result = try Subprocess.run(URL(fileURLWithPath: "/bin/date"), ["-d", "@\(instant)", "+%z"], environment: ["TZ": tz])
        XCTAssertEqual(result.status, 0, result.standardError)
        let text = result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        return String(text.prefix(3)) + ":" + String(text.suffix(2))
    }

    func offset(_ zone: TimeZone, at instant: Int) -> String {
        let seconds = zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(instant)))
        return String(format: "%@%02d:%02d", seconds < 0 ? "-" : "+", abs(seconds) / 3600, abs(seconds) % 3600 / 60)
    }

    /// Winter and summer of both hemispheres, and the hours around Europe's change in March.
    func testEveryValueHasGlibcsOffsetAllYear() throws {
        let instants = [1_768_478_400, 1_784_116_800, 1_774_746_000, 1_774_749_600]
        for tz in Self.values {
            let zone = try XCTUnwrap(TimeZoneName.resolve(tz), tz)
            for instant in instants {
                XCTAssertEqual(offset(zone, at: instant), try glibcOffset(tz, at: instant), "TZ=\(tz) at \(instant)")
            }
        }
        XCTAssertNil(TimeZoneName.resolve("Nowhere/Land"))
        XCTAssertNil(TimeZoneName.resolve(":No/Such/File"))
        XCTAssertNil(TimeZoneName.resolve("../../../etc/passwd"))
    }

    /// glibc reads a rule only from `TZ`, into process-wide state: reading one puts both back.
    func testReadingARuleLeavesTZAndTheCLibraryAsTheyWere() throws {
        func localOffset() -> Int {
            var time = time_t(1_784_116_800), local = tm()
            _ = localtime_r(&time, &local)
            return local.tm_gmtoff
        }
        let tzBefore = getenv("TZ").map { String(cString: $0) }, offsetBefore = localOffset()
        for tz in Self.values { XCTAssertNotNil(TimeZoneName.resolve(tz), tz) }
        XCTAssertEqual(getenv("TZ").map { String(cString: $0) }, tzBefore)
        XCTAssertEqual(localOffset(), offsetBefore)
    }

    /// What glibc reads without a word and enlog warns about: no zone, no rule.
    func testOnlyPosixRulesAreRules() {
        for rule in ["UTC+14", "<+14>-14", "CET-1CEST,M3.5.0,M10.5.0/3", "AAA3BBB,J60/1:30,300/25", "EST5EDT"] {
            XCTAssertTrue(TimeZoneName.isPosixRule(rule), rule)
        }
        for text in ["Nowhere/Land", "EST5EDT,bogus", "AB5", "ABC", "ABC25", "ABC5DEF,M13.1.0,M1.1.0", ""] {
            XCTAssertFalse(TimeZoneName.isPosixRule(text), text)
        }
    }

    /// The note's time, with each `TZ` (and an invalid one: UTC, as glibc, with a warning).
    func testNotesAreStampedWithTheOffsetDateShows() throws {
        for tz in Self.values + ["Nowhere/Land"] {
            var home = try EnlogHome()
            home.extraEnvironment["TZ"] = tz
            let logged = try home.run("log", "--at", "1,2", "--no-geocode", "--no-sync")
            XCTAssertEqual(logged.status, 0, "TZ=\(tz): \(logged.standardError)")
            XCTAssertEqual(logged.standardError.contains("warning: TZ"), tz == "Nowhere/Land", "TZ=\(tz): \(logged.standardError)")
            let shown = try home.run("queue", "show", "1")
            let line = try XCTUnwrap(shown.standardOutput.split(separator: "\n").first { $0.contains("Time: ") }, shown.standardOutput)
            let stamp = try XCTUnwrap(home.history().first?["timestamp"] as? String)
            let instant = Int(try XCTUnwrap(ISO8601DateFormatter().date(from: stamp)).timeIntervalSince1970)
            XCTAssertTrue(line.contains(" \(try glibcOffset(tz, at: instant)) ("), "TZ=\(tz): \(line)")
        }
    }
}
