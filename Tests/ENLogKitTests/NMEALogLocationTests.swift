@testable import ENLogKit
import XCTest

final class NMEALogLocationTests: XCTestCase {
    func testLastValidFixOfARealisticLog() async throws {
        let fix = try await NMEALogLocation(path: TestPaths.nmea("walk.nmea")).currentFix()
        XCTAssertEqual(fix.source, .nmea)
        XCTAssertEqual(fix.latitude, 48 + 8.9230 / 60, accuracy: 1e-9)
        XCTAssertEqual(fix.longitude, 11 + 34.6966 / 60, accuracy: 1e-9)
        XCTAssertEqual(fix.altitude, 521.2)
        XCTAssertEqual(fix.horizontalAccuracy!, 0.5 * NMEALogLocation.metresPerHDOP, accuracy: 1e-9)
        XCTAssertEqual(fix.speed!, 2.7 * 1852 / 3600, accuracy: 1e-9)
        XCTAssertEqual(fix.course, 54.1)
        XCTAssertEqual(fix.timestamp, ISO8601DateFormatter().date(from: "2024-03-09T10:15:04Z"))
    }

    func testSentenceWithBadChecksumIsIgnored() throws {
        // walk.nmea carries a corrupted GGA placing the walker at 49°N 12°E.
        let fixes = try NMEALogLocation(path: TestPaths.nmea("walk.nmea")).fixes()
        XCTAssertEqual(fixes.count, 4, "the leading no-fix epoch is skipped")
        XCTAssertFalse(fixes.contains { $0.latitude > 48.5 })
        XCTAssertEqual(fixes.map(\.timestamp.timeIntervalSince1970).sorted(), fixes.map(\.timestamp.timeIntervalSince1970))
    }

    func testGSTGivesMeasuredAccuracyAndDateRollsOverAtMidnight() throws {
        let fixes = try NMEALogLocation(path: TestPaths.nmea("gst-midnight.nmea")).fixes()
        XCTAssertEqual(fixes.count, 2)
        XCTAssertEqual(fixes[0].latitude, -(33 + 52.1280 / 60), accuracy: 1e-9)
        XCTAssertEqual(fixes[0].horizontalAccuracy!, 2.5, accuracy: 1e-9)   // √(1.5² + 2²)
        XCTAssertEqual(fixes[0].altitude, 39.0)
        XCTAssertEqual(fixes[0].timestamp, ISO8601DateFormatter().date(from: "2024-12-31T23:59:59Z"))
        XCTAssertEqual(fixes[1].timestamp, ISO8601DateFormatter().date(from: "2025-01-01T00:00:00Z"))
        XCTAssertNil(fixes[1].altitude, "GSA says 2D fix: altitude is not trustworthy")
        XCTAssertEqual(fixes[1].horizontalAccuracy!, 2.0, accuracy: 1e-9)
    }

    func testOnlyBadChecksums() {
        let path = TestPaths.nmea("bad-checksums.nmea")
        assertThrows(LocationError.nmeaLogHasNoValidFix(path: path, sentences: 0, badChecksums: 3)) {
            _ = try NMEALogLocation(path: path).lastFix()
        }
    }

    func testEmptyFile() {
        let path = TestPaths.nmea("empty.nmea")
        assertThrows(LocationError.nmeaLogEmpty(path: path)) { _ = try NMEALogLocation(path: path).lastFix() }
    }

    func testLogWithoutFix() {
        let path = TestPaths.nmea("no-fix.nmea")
        assertThrows(LocationError.nmeaLogHasNoValidFix(path: path, sentences: 4, badChecksums: 0)) {
            _ = try NMEALogLocation(path: path).lastFix()
        }
    }

    func testPositionsWithoutDate() {
        let path = TestPaths.nmea("gga-only.nmea")
        assertThrows(LocationError.nmeaLogHasNoDate(path: path)) { _ = try NMEALogLocation(path: path).lastFix() }
    }

    func testUnreadableFiles() throws {
        let missing = "/nonexistent/track.nmea"
        assertThrows(LocationError.nmeaLogUnreadable(path: missing, detail: "No such file or directory")) {
            _ = try NMEALogLocation(path: missing).lastFix()
        }
        let directory = TestPaths.nmeaFixtures.path
        assertThrows(LocationError.nmeaLogUnreadable(path: directory, detail: "it is a directory")) {
            _ = try NMEALogLocation(path: directory).lastFix()
        }
        let notNMEA = #filePath
        assertThrows(LocationError.nmeaLogHasNoSentences(path: notNMEA)) {
            _ = try NMEALogLocation(path: notNMEA).lastFix()
        }
    }

    func testChecksumAndFieldParsing() {
        XCTAssertNotNil(NMEASentence.checkedFields("$GPGSA,A,1,,,,,,,,,,,,,99.99,99.99,99.99*30"))
        XCTAssertNotNil(NMEASentence.checkedFields("$GPGGA,101501.00,4808.9210,N,01134.6930,E,1,09,0.8,520.1,M,47.3,M,,*6a"),
                        "hex digits of either case")
        XCTAssertNil(NMEASentence.checkedFields("$GPGSA,A,1,,,,,,,,,,,,,99.99,99.99,99.99*31"))
        XCTAssertNil(NMEASentence.checkedFields("$GPGSA,A,1,,,,,,,,,,,,,99.99,99.99,99.99"))
        XCTAssertNil(NMEASentence.checkedFields("$GPGSA,A,1*3"))
        XCTAssertEqual((try? NMEAField.angle("4807.038", hemisphere: "S", degreeDigits: 2, name: "latitude"))!, -48.1173, accuracy: 1e-9)
        XCTAssertNil((try? NMEAField.angle("4861.000", hemisphere: "N", degreeDigits: 2, name: "latitude")), "61 minutes")
        XCTAssertNil((try? NMEAField.angle("4807.038", hemisphere: "X", degreeDigits: 2, name: "latitude")))
        XCTAssertEqual((try? NMEAField.timeOfDay("235959.50")), 86_399_500)
        XCTAssertNil((try? NMEAField.timeOfDay("2460")))
        XCTAssertEqual(NMEAField.date(ddmmyy: "090394")?.year, 1994)
    }
}
