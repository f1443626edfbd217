import Foundation
import XCTest
@testable import Configuration
@testable import Capture
@testable import Diary

/// Stays found in made-up days whose truth is known: the classic rule's failures (noise, Wi-Fi
/// fixes, gaps, sparse fixes) each have a case, and each case fails with the plain rule.
final class StayDetectorTests: XCTestCase {
    typealias Point = StayDetector.Point
    static let origin = (latitude: 48.8566, longitude: 2.3522)
    static let detector = StayDetector()

    /// A point `east`, `north` metres from the origin at `time` seconds.
    static func point(_ east: Double, _ north: Double, at time: Double, accuracy: Double? = 8, anchor: Bool = false,
                      origin: (latitude: Double, longitude: Double) = origin) -> Point {
        let latitude = origin.latitude + north / 111_195
        var longitude = origin.longitude + east / (111_195 * cos(origin.latitude * .pi / 180))
        if longitude > 180 { longitude -= 360 }
        return Point(latitude: latitude, longitude: longitude, accuracy: accuracy, time: time, anchor: anchor)
    }

    /// Still at (east, north) from `start` for `duration` seconds, a fix every `every` seconds,
    /// with a few metres of deterministic jitter.
    static func stop(at east: Double, _ north: Double, from start: Double, for duration: Double, every: Double = 1) -> [Point] {
        stride(from: start, through: start + duration, by: every).enumerated().map { index, time in
            point(east + Double(index % 7) - 3, north + Double(index % 5) - 2, at: time)
        }
    }

    /// Walking in a straight line at 1.4 m/s from one place to another.
    static func walk(from a: (Double, Double), to b: (Double, Double), start: Double, every: Double = 1) -> [Point] {
        let length = ((b.0 - a.0) * (b.0 - a.0) + (b.1 - a.1) * (b.1 - a.1)).squareRoot()
        let duration = length / 1.4
        return stride(from: every, to: duration, by: every).map { t in
            point(a.0 + (b.0 - a.0) * t / duration, a.1 + (b.1 - a.1) * t / duration, at: start + t)
        }
    }

    func assertStay(_ stay: StayDetector.Stay?, near east: Double, _ north: Double, from start: Double, to end: Double,
                    file: StaticString = #filePath, line: UInt = #line) {
        guard let stay else { return XCTFail("no stay", file: file, line: line) }
        let centre = Self.point(east, north, at: 0)
        let offset = Self.distance(stay.latitude, stay.longitude, centre.latitude, centre.longitude)
        XCTAssertLessThan(offset, 25, "centre \(offset) m off", file: file, line: line)
        XCTAssertEqual(stay.arrival, start, accuracy: 120, file: file, line: line)
        XCTAssertEqual(stay.departure, end, accuracy: 120, file: file, line: line)
    }

    static func distance(_ lat1: Double, _ lon1: Double, _ lat2: Double, _ lon2: Double) -> Double {
        Fix.metres(lat1, lon1, lat2, lon2)
    }

    func testADenseDayOfWalksAndStopsIsItsStops() {
        var points = Self.stop(at: 0, 0, from: 0, for: 1800)
        points += Self.walk(from: (0, 0), to: (800, 0), start: 1800)
        let arrival = points.last!.time + 1
        points += Self.stop(at: 800, 0, from: arrival, for: 600)
        points += Self.walk(from: (800, 0), to: (800, 900), start: arrival + 600)
        let stays = Self.detector.stays(in: points)
        XCTAssertEqual(stays.count, 2, "\(stays)")
        assertStay(stays.first, near: 0, 0, from: 0, to: 1800)
        assertStay(stays.dropFirst().first, near: 800, 0, from: arrival, to: arrival + 600)
    }

    func testAWalkAndATrafficLightAreNoStay() {
        var points = Self.walk(from: (0, 0), to: (500, 0), start: 0)
        let light = points.last!.time + 1
        points += Self.stop(at: 500, 0, from: light, for: 90)
        points += Self.walk(from: (500, 0), to: (500, 700), start: light + 90)
        XCTAssertEqual(Self.detector.stays(in: points), [])
    }

    /// A 150 m Wi-Fi fix 400 m off inside a stay does not end it; Wi-Fi fixes alone make none.
    func testWiFiFixesNeitherBreakNorMakeAStay() {
        var points = Self.stop(at: 0, 0, from: 0, for: 1200, every: 30)
        for index in stride(from: 5, to: points.count, by: 6) {
            points[index] = Self.point(400, 0, at: points[index].time, accuracy: 150)
        }
        points.insert(Self.point(-400, 0, at: 301, accuracy: 150), at: 11)
        points.insert(Self.point(-400, 0, at: 302, accuracy: 150), at: 12)
        points.insert(Self.point(-400, 0, at: 303, accuracy: 150), at: 13)
        let stays = Self.detector.stays(in: points)
        XCTAssertEqual(stays.count, 1, "\(stays)")
        assertStay(stays.first, near: 0, 0, from: 0, to: 1200)
        let wifiOnly = stride(from: 0.0, to: 3600, by: 60).map { Self.point(3000, 0, at: $0, accuracy: 150) }
        XCTAssertEqual(Self.detector.stays(in: wifiOnly), [])
    }

    /// GPS jumps of a fix or two (multipath) inside a stay are outliers, not departures.
    func testAGPSJumpInsideAStayIsNoDeparture() {
        var points = Self.stop(at: 0, 0, from: 0, for: 1200, every: 5)
        points[100] = Self.point(300, 200, at: points[100].time)
        points[101] = Self.point(-250, 100, at: points[101].time)
        let stays = Self.detector.stays(in: points)
        XCTAssertEqual(stays.count, 1, "\(stays)")
        assertStay(stays.first, near: 0, 0, from: 0, to: 1200)
    }

    /// An hour without fixes at the same place is one stay; the same hour with movement across
    /// it is two places, and a silence longer than max_gap ends the stay.
    func testAGapAtOnePlaceIsOneStayAndAGapAcrossMovementIsNot() {
        let before = Self.stop(at: 0, 0, from: 0, for: 600, every: 10)
        let sameAfter = Self.stop(at: 0, 0, from: 4200, for: 600, every: 10)
        let stays = Self.detector.stays(in: before + sameAfter)
        XCTAssertEqual(stays.count, 1, "\(stays)")
        assertStay(stays.first, near: 0, 0, from: 0, to: 4800)

        let elsewhere = Self.stop(at: 2000, 0, from: 4200, for: 600, every: 10)
        let moved = Self.detector.stays(in: before + elsewhere)
        XCTAssertEqual(moved.count, 2, "\(moved)")
        XCTAssertLessThan(moved[0].departure, 1000)
        XCTAssertGreaterThan(moved[1].arrival, 3800)

        let longAfter = Self.stop(at: 0, 0, from: 600 + Self.detector.maxGap + 60, for: 600, every: 10)
        XCTAssertEqual(Self.detector.stays(in: before + longAfter).count, 2)
    }

    /// One fix every five minutes (Records.json): an hour's stop is still a stay, its ends half-way
    /// to the fixes around it.
    func testSparseFixesMakeStays() {
        var points: [Point] = []
        points += stride(from: 0.0, through: 3600, by: 300).map { Self.point(0, 0, at: $0) }
        points += [Self.point(1500, 0, at: 3900), Self.point(3000, 0, at: 4200)]
        points += stride(from: 4500.0, through: 6900, by: 300).map { Self.point(4500, 0, at: $0) }
        let stays = Self.detector.stays(in: points)
        XCTAssertEqual(stays.count, 2, "\(stays)")
        assertStay(stays.first, near: 0, 0, from: 0, to: 3750)
        assertStay(stays.last, near: 4500, 0, from: 4350, to: 6900)
    }

    /// A typed --at is a stay by itself, and its position is the stay's centre.
    func testATypedPositionIsAnAnchor() {
        let note = Self.point(120, 40, at: 5000, accuracy: nil, anchor: true)
        var points = Self.walk(from: (0, 0), to: (100, 0), start: 4900)
        points.append(note)
        let stays = Self.detector.stays(in: points)
        XCTAssertEqual(stays.count, 1, "\(stays)")
        XCTAssertEqual(stays.first?.latitude, note.latitude)
        XCTAssertEqual(stays.first?.longitude, note.longitude)
    }

    /// An imported visit is a stay for its span and replaces what the fixes said during it.
    func testImportedVisitsAreStaysForTheirSpan() {
        let points = Self.stop(at: 0, 0, from: 0, for: 1800, every: 10) + Self.stop(at: 2000, 0, from: 3000, for: 1800, every: 10)
        let visit = StayDetector.Visit(latitude: 1, longitude: 2, start: 100, end: 2000, name: "Café Rosa")
        let stays = Self.detector.stays(in: points, visits: [visit])
        XCTAssertEqual(stays.count, 2, "\(stays)")
        XCTAssertEqual(stays.first?.origin, .visit)
        XCTAssertEqual(stays.first?.name, "Café Rosa")
        XCTAssertEqual(stays.first?.arrival, 100)
        XCTAssertEqual(stays.last?.origin, .fixes)
    }

    /// A stay on the antimeridian is centred on it, not at 0°.
    func testAStayAcrossTheAntimeridianIsCentredOnIt() {
        let fiji = (latitude: -16.5, longitude: 179.9999)
        let points = (0..<120).map { index in
            Self.point(index.isMultiple(of: 2) ? 15 : -15, 0, at: Double(index) * 10, origin: fiji)
        }
        let stays = Self.detector.stays(in: points)
        XCTAssertEqual(stays.count, 1)
        XCTAssertGreaterThan(abs(stays.first?.longitude ?? 0), 179.99)
    }

    /// Out-of-order input is sorted; settings come from the table's defaults.
    func testDefaultsComeFromTheSettingsTable() {
        XCTAssertEqual(Self.detector.radius, Setting.staysRadius.defaultNumber)
        XCTAssertEqual(Self.detector.minDuration, 180)
        XCTAssertEqual(Self.detector.maxGap, 10_800)
        XCTAssertEqual(Self.detector.maxAccuracy, 100)
        let points = Self.stop(at: 0, 0, from: 0, for: 600, every: 10)
        XCTAssertEqual(Self.detector.stays(in: points.reversed()), Self.detector.stays(in: points))
    }
}
