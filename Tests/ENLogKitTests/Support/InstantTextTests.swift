import Foundation
import XCTest
@testable import Support
@testable import Capture
@testable import Outbox

/// Issue 20, defect 11: every printer of an instant (history's lines, every JSON output, track
/// files) goes through `InstantText`, so an instant prints the same everywhere, as `date -u`
/// (glibc, proleptic Gregorian) prints it, before 1582 included. Which instants a fix may hold
/// is `Fix.Limits.time`'s to say (see FixLimitsBySourceTests).
final class InstantTextTests: XCTestCase {
    static let instants: [Int64] = [-62_135_596_800, -12_219_292_800, -12_219_292_801, -1, 0, 315_964_800,
                                    1_795_330_800, 4_102_444_799, 253_402_300_799]

    func testEveryPrinterAgreesWithDate() throws {
        for seconds in Self.instants {
            let result = try Subprocess.run(URL(fileURLWithPath: "/bin/date"), ["-u", "-d", "@\(seconds)", "+%Y-%m-%dT%H:%M:%SZ"])
            let expected = result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
            let date = Date(timeIntervalSince1970: TimeInterval(seconds))
            var record = FixRecord(try Fix(latitude: 1, longitude: 2, timestamp: Date(timeIntervalSince1970: 1_795_330_800), source: .manual))
            record.timestamp = date
            record.createdAt = date
            XCTAssertEqual(InstantText.string(date), expected)
            XCTAssertEqual(TrackTime.string(date), expected)
            XCTAssertEqual(String(OutboxJSON.line(record).prefix { $0 != "\t" }), expected, "history's line")
            let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(try OutboxJSON.encode([record]).utf8)) as? [[String: Any]])
            XCTAssertEqual(json.first?["timestamp"] as? String, expected, "history --json")
            XCTAssertEqual(json.first?["createdAt"] as? String, expected, "history --json")
            XCTAssertEqual(TrackTime.parse(expected), date, "read back")
        }
    }

    /// An instant no calendar arithmetic in Int64 holds (a phone's time of 1e300 seconds, an
    /// infinity, NaN) still prints, as seconds since the epoch, for the error that refuses it:
    /// its milliseconds as an Int64 trapped (found by fuzzing the phone payloads).
    func testAnInstantPastAnyCalendarPrintsAsSeconds() {
        XCTAssertEqual(InstantText.string(Date(timeIntervalSince1970: 1e300)), "1e+300 s since 1970-01-01T00:00:00Z")
        XCTAssertEqual(InstantText.string(Date(timeIntervalSince1970: -1e300), milliseconds: true), "-1e+300 s since 1970-01-01T00:00:00Z")
        XCTAssertEqual(InstantText.string(Date(timeIntervalSince1970: .infinity)), "inf s since 1970-01-01T00:00:00Z")
        XCTAssertEqual(InstantText.string(Date(timeIntervalSince1970: .nan)), "nan s since 1970-01-01T00:00:00Z")
        XCTAssertEqual(InstantText.localTime(Date(timeIntervalSince1970: 9.3e18), offsetSeconds: 3600, dateSeparator: "/", between: " "),
                       "9.3e+18 s since 1970-01-01T00:00:00Z")
        // The largest instant still written as a date, and the calendar's arithmetic at it.
        XCTAssertEqual(InstantText.string(Date(timeIntervalSince1970: 99_999_999_999_999)), "3170843-11-07T09:46:39Z")
    }
}
