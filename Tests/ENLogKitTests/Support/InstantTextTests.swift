import Foundation
import XCTest
@testable import Support
@testable import EvernoteAPI
@testable import Configuration
@testable import Network
@testable import Auth
@testable import Capture
@testable import Compose
@testable import Outbox
@testable import Diary
@testable import Sync
@testable import Watch

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
}
