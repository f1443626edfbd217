@testable import Capture
import XCTest

final class FixAndQualityFilterTests: XCTestCase {
    let now = Date(timeIntervalSince1970: 1_700_000_000)

    func fix(age: TimeInterval, accuracy: Double?) throws -> Fix {
        try Fix(latitude: 48.1, longitude: 11.5, horizontalAccuracy: accuracy,
                timestamp: now.addingTimeInterval(-age), source: .gpsd)
    }

    func testCoordinatesAreCheckedAtConstruction() {
        assertThrows(LocationError.latitudeOutOfRange(90.5)) {
            _ = try Fix(latitude: 90.5, longitude: 0, timestamp: now, source: .manual)
        }
        assertThrows(LocationError.longitudeOutOfRange(-180.01)) {
            _ = try Fix(latitude: 0, longitude: -180.01, timestamp: now, source: .manual)
        }
        XCTAssertThrowsError(try Fix(latitude: .nan, longitude: 0, timestamp: now, source: .manual)) { error in
            XCTAssertEqual((error as? LocationError)?.reason, "latitude nan is not a finite number")
        }
        assertThrows(LocationError.nonFiniteCoordinate(name: "longitude", value: .infinity)) {
            _ = try Fix(latitude: 0, longitude: .infinity, timestamp: now, source: .manual)
        }
        XCTAssertNoThrow(try Fix(latitude: -90, longitude: 180, timestamp: now, source: .manual))
    }

    func testNonFiniteOptionalMeasurementsAreDropped() throws {
        let fix = try Fix(latitude: 1, longitude: 2, horizontalAccuracy: .nan, speed: .infinity,
                          timestamp: now, source: .nmea)
        XCTAssertNil(fix.horizontalAccuracy)
        XCTAssertNil(fix.speed)
    }

    func testDecodingGoesThroughValidation() throws {
        let json = #"{"latitude":91,"longitude":0,"timestamp":0,"source":"gpsd"}"#
        XCTAssertThrowsError(try JSONDecoder().decode(Fix.self, from: Data(json.utf8)))
    }

    func testDefaultFilterAcceptsFreshAccurateFix() throws {
        let filter = QualityFilter()
        XCTAssertNil(filter.rejection(of: try fix(age: 3, accuracy: 5), now: now))
        XCTAssertNil(filter.rejection(of: try fix(age: 15, accuracy: 10), now: now))
    }

    func testAgeIsNotTruncated() throws {
        // The iOS app's integer abs() let 15.9 s through.
        guard case let .tooOld(age, limit)? = QualityFilter().rejection(of: try fix(age: 15.9, accuracy: 5), now: now)
        else { return XCTFail("15.9 s old fix accepted") }
        XCTAssertEqual(age, 15.9, accuracy: 1e-3)
        XCTAssertEqual(limit, 15)
        XCTAssertEqual(QualityFilter().rejection(of: try fix(age: 15.001, accuracy: 5), now: now)?.description,
                       "fix is 15.0 s old, limit 15.0 s")
    }

    func testFutureFixesBeyondSkewAreRejected() throws {
        let filter = QualityFilter()
        XCTAssertNil(filter.rejection(of: try fix(age: -1.5, accuracy: 5), now: now))
        XCTAssertEqual(filter.rejection(of: try fix(age: -60, accuracy: 5), now: now),
                       .fromTheFuture(ahead: 60, tolerance: 2))
    }

    func testMissingOrNegativeAccuracyIsRejectedWhenLimited() throws {
        let filter = QualityFilter()
        XCTAssertEqual(filter.rejection(of: try fix(age: 1, accuracy: nil), now: now), .accuracyUnknown(limit: 40))
        // A negative accuracy makes no fix at all (`Fix.Limits`), whatever the filter.
        XCTAssertThrowsError(try fix(age: 1, accuracy: -1))
        XCTAssertEqual(filter.rejection(of: try fix(age: 1, accuracy: 40.5), now: now),
                       .tooInaccurate(accuracy: 40.5, limit: 40))
    }

    func testLimitsAreConfigurable() throws {
        let relaxed = QualityFilter(maxAge: 600, minAccuracy: 50)
        XCTAssertTrue(relaxed.accepts(try fix(age: 300, accuracy: 40), now: now))
        let unlimited = QualityFilter(maxAge: nil, minAccuracy: nil)
        XCTAssertTrue(unlimited.accepts(try fix(age: 86_400 * 365, accuracy: nil), now: now))
        XCTAssertTrue(QualityFilter.acceptAll.accepts(try fix(age: -3600, accuracy: nil), now: now))
    }
}
