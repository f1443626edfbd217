@testable import Capture
import XCTest

final class ManualLocationTests: XCTestCase {
    func problem(_ text: String) -> String? {
        do {
            _ = try ManualLocation(text)
            return nil
        } catch {
            guard case let .malformedManualLocation(input, problem) = error else { return "\(error)" }
            XCTAssertEqual(input, text)
            return problem
        }
    }

    func testParsesLatLonAndOptionalAltitude() async throws {
        let plain = try ManualLocation("48.8584,2.2945")
        XCTAssertEqual(plain.latitude, 48.8584)
        XCTAssertEqual(plain.longitude, 2.2945)
        XCTAssertNil(plain.altitude)

        let spaced = try ManualLocation(" -33.8568 , 151.2153 , 12.5 ")
        XCTAssertEqual(spaced.latitude, -33.8568)
        XCTAssertEqual(spaced.altitude, 12.5)

        let before = Date()
        let fix = try await spaced.currentFix()
        let after = Date()
        XCTAssertEqual(fix.source, .manual)
        XCTAssertEqual(fix.longitude, 151.2153)
        XCTAssertTrue((before...after).contains(fix.timestamp), "stamped when asked: \(fix.timestamp)")
        XCTAssertNoThrow(try ManualLocation("+90,-180,-10"))
        XCTAssertNoThrow(try ManualLocation("0,.5"))
    }

    func testGarbledInputNamesWhatIsWrong() {
        XCTAssertEqual(problem(""), "it is empty")
        XCTAssertEqual(problem("48.8584"), "expected 2 or 3 comma-separated numbers, found 1 part")
        XCTAssertEqual(problem("48,8584,2,2945"),
                       "expected 2 or 3 comma-separated numbers, found 4 parts (use '.' as the decimal point)")
        XCTAssertEqual(problem("abc,2.29"), "latitude 'abc' is not a decimal number")
        XCTAssertEqual(problem("48.85,2.29E"), "longitude '2.29E' is not a decimal number")
        XCTAssertEqual(problem("48.85,,10"), "longitude is missing")
        XCTAssertEqual(problem("48.85,2.29,high"), "altitude 'high' is not a decimal number")
        XCTAssertEqual(problem("nan,2"), "latitude 'nan' is not a decimal number")
        XCTAssertEqual(problem("inf,2"), "latitude 'inf' is not a decimal number")
        XCTAssertEqual(problem("0x10,2"), "latitude '0x10' is not a decimal number")
        XCTAssertEqual(problem("1.2.3,2"), "latitude '1.2.3' is not a decimal number")
        XCTAssertEqual(problem("-,2"), "latitude '-' is not a decimal number")
        XCTAssertEqual(problem("91,2"), "latitude 91 is outside -90...90")
        XCTAssertEqual(problem("2,181"), "longitude 181 is outside -180...180")
    }

    func testErrorTextIsOneLineWithSuggestion() {
        do {
            _ = try ManualLocation("48.85;2.29")
            XCTFail("accepted a semicolon")
        } catch {
            XCTAssertEqual(error.reason,
                           "location '48.85;2.29' is not LAT,LON[,ALT]: expected 2 or 3 comma-separated numbers, found 1 part")
            XCTAssertFalse(error.reason.contains("\n"))
            XCTAssertNotNil(error.recoverySuggestion)
        }
    }

    func testAccuracyMustBeNonNegative() {
        XCTAssertThrowsError(try ManualLocation("1,2", horizontalAccuracy: -3))
        XCTAssertEqual(try ManualLocation("1,2", horizontalAccuracy: 25).fix(at: Date()).horizontalAccuracy, 25)
    }
}
