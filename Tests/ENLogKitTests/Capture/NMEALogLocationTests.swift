@testable import Capture
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
        assertThrows(LocationError.nmeaLogHasNoCheckedSentence(path: path, badChecksums: 3, firstBadLine: 1)) {
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

    // MARK: Receiver transitions and noise, from generated sentences (issue 14)

    private let scratch = try! TemporaryDirectory()

    /// A log of `bodies` (checksums computed), one sentence a line; a body starting with `raw:` is
    /// written as it is.
    private func log(_ bodies: [String], name: String = #function) throws -> String {
        let text = bodies.map { $0.hasPrefix("raw:") ? String($0.dropFirst(4)) + "\r\n" : NMEA.sentence($0) }.joined()
        return try scratch.file(name.filter(\.isLetter) + ".nmea", contents: text).path
    }

    private func date(_ text: String) -> Date {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)!
    }

    /// A receiver cycle with a fix at `hms` on 9 March 2024.
    private func cycle(_ hms: String, latitude: String = "4808.9210") -> [String] {
        ["GPRMC,\(hms),A,\(latitude),N,01134.6930,E,2.7,54.1,090324,3.1,E,A",
         "GPGGA,\(hms),\(latitude),N,01134.6930,E,1,09,0.8,520.1,M,47.3,M,,",
         "GPGSA,A,3,02,05,07,13,15,18,20,24,29,,,,1.4,0.8,1.1"]
    }

    /// What a receiver without a fix sends: no time anywhere.
    private let outage = ["GPRMC,,V,,,,,,,,,,N", "GPGGA,,,,,,0,00,,,,,,,", "GPGSA,A,1,,,,,,,,,,,,,99.99,99.99,99.99"]

    func testOutageAndRegainKeepBothFixes() throws {
        let path = try log(cycle("101500.00") + outage + outage + cycle("101510.00", latitude: "4808.9300"))
        let fixes = try NMEALogLocation(path: path).fixes()
        XCTAssertEqual(fixes.map(\.timestamp), [date("2024-03-09T10:15:00.000Z"), date("2024-03-09T10:15:10.000Z")])
        XCTAssertEqual(fixes[1].latitude, 48 + 8.93 / 60, accuracy: 1e-9)
        XCTAssertEqual(fixes[1].horizontalAccuracy!, 0.8 * NMEALogLocation.metresPerHDOP, accuracy: 1e-9,
                       "the outage's DOP placeholders do not leak into a fix")
    }

    func testAnOutageAtTheEndLeavesTheFixBeforeIt() throws {
        let path = try log(cycle("101500.00") + cycle("101501.00", latitude: "4808.9300") + outage)
        let fix = try NMEALogLocation(path: path).lastFix()
        XCTAssertEqual(fix.timestamp, date("2024-03-09T10:15:01.000Z"))
        XCTAssertEqual(fix.latitude, 48 + 8.93 / 60, accuracy: 1e-9)
        XCTAssertEqual(fix.altitude, 520.1, "GSA mode 1 of the next cycle does not make it 2D")
    }

    func testATimedNoFixCycleStaysInvalid() throws {
        let path = try log(cycle("101500.00") + ["GPRMC,101501.00,V,,,,,,,090324,,,N", "GPGGA,101501.00,,,,,0,00,,,,,,,"])
        XCTAssertEqual(try NMEALogLocation(path: path).lastFix().timestamp, date("2024-03-09T10:15:00.000Z"))
    }

    func testGLLOfAnyTalkerGivesAFix() throws {
        let path = try log(["ECGLL,5119.881,N,00125.169,E,164326,A,D", "SDDBT,8.1,f,2.4,M,1.3,F",
                            "ECGLL,5119.891,N,00125.179,E,164328,A,D", "ECZDA,164328,09,03,2024,00,00",
                            "ECGLL,5119.901,N,00125.189,E,164330,V,N"])
        let fixes = try NMEALogLocation(path: path).fixes()
        XCTAssertEqual(fixes.count, 2, "status V is no fix")
        XCTAssertEqual(fixes[1].latitude, 51 + 19.891 / 60, accuracy: 1e-9)
        XCTAssertEqual(fixes[1].timestamp, date("2024-03-09T16:43:28.000Z"))
        XCTAssertEqual(fixes[0].timestamp, date("2024-03-09T16:43:26.000Z"), "dated backwards from the first ZDA")
        XCTAssertNil(fixes[1].altitude)
    }

    func testGLLWithoutAnyDateSaysSo() throws {
        let path = try log(["ECGLL,5119.881,N,00125.169,E,164326,A,D"])
        assertThrows(LocationError.nmeaLogHasNoDate(path: path)) { _ = try NMEALogLocation(path: path).lastFix() }
    }

    func testGNSOfAnyTalkerGivesAFixAndItsModeIsPerConstellation() throws {
        let path = try log(["GNZDA,120227.000,31,07,2022,,",
                            "GNGNS,120227.000,5957.0062,N,01100.6429,E,NDD,11,1.3,168.9,39.5,,,V",
                            "GNGNS,120228.000,5957.0162,N,01100.6429,E,NNN,00,,,,,,V"])
        let fix = try NMEALogLocation(path: path).lastFix()
        XCTAssertEqual(fix.timestamp, date("2022-07-31T12:02:27.000Z"), "NDD: GLONASS and Galileo solve; NNN: none does")
        XCTAssertEqual(fix.altitude, 168.9)
        XCTAssertEqual(fix.horizontalAccuracy!, 1.3 * NMEALogLocation.metresPerHDOP, accuracy: 1e-9)
    }

    func testStrayDollarsAreNoiseBeforeTheSentence() throws {
        let rmc = NMEA.sentence("GNRMC,135817.000,A,4723.00453,N,00045.88245,E,0.0,0.0,210325,,,A,V")
        let path = try log(["raw:$" + rmc.trimmingCharacters(in: .newlines),
                            "raw:$$$GNGGA,135817.000,4723.00453,N,00045.88245,E,1,12,1.7,100.0,M,48.0,M,,*00",
                            "raw:junk " + rmc.trimmingCharacters(in: .newlines)])
        let fixes = try NMEALogLocation(path: path).fixes()
        XCTAssertEqual(fixes.map(\.timestamp), [date("2025-03-21T13:58:17.000Z")])
        var reader = NMEAFixReader()
        for line in try String(contentsOfFile: path, encoding: .utf8).split(whereSeparator: \.isNewline) {
            _ = reader.read(line: Array(line.utf8))
        }
        XCTAssertEqual(reader.statistics.sentences, 2)
        XCTAssertEqual(reader.statistics.badChecksums, 1, "a sentence after stray dollars with a wrong checksum is damaged")
        XCTAssertEqual(reader.statistics.firstBadChecksumLine, 2)
    }

    func testAFixFromZeroSatellitesIsNone() throws {
        let alone = try log(["GPGGA,200010,5504.4344,N,01025.5385,E,2,00,2.5,-9.1,M,43.9,M,,"], name: "alone")
        assertThrows(LocationError.nmeaLogHasNoValidFix(path: alone, sentences: 1, badChecksums: 0)) {
            _ = try NMEALogLocation(path: alone).lastFix()
        }
        // Beside an RMC saying A it denies nothing (gpsd reads Garmin's GGA the same way).
        let withRMC = try log(["GPRMC,200010,A,5504.4344,N,01025.5385,E,0.0,0.0,260810,1.0,E,D",
                               "GPGGA,200010,5504.4344,N,01025.5385,E,2,00,2.5,-9.1,M,43.9,M,,"], name: "withRMC")
        XCTAssertEqual(try NMEALogLocation(path: withRMC).lastFix().timestamp, date("2010-08-26T20:00:10.000Z"))
    }

    func testAGarbageYearIsNoDate() throws {
        let path = try log(["GPRMC,000231.099,A,4829.0005,N,00022.0015,E,0.15,212.28,2208-1,,,A"])
        assertThrows(LocationError.nmeaLogHasNoDate(path: path)) { _ = try NMEALogLocation(path: path).lastFix() }
        XCTAssertNil(NMEAField.date(ddmmyy: "310224"), "31 February")
        XCTAssertNil(NMEAField.date(day: "09", month: "03", year: "-1"))
        XCTAssertEqual(NMEAField.date(ddmmyy: "290224"), DateComponents(year: 2024, month: 2, day: 29))
    }

    /// Issue 9: one sentence with a valid checksum and an impossible latitude does not spoil the log.
    func testAnImpossibleLatitudeIsSkipped() throws {
        let path = try log(cycle("101500.00") + cycle("101501.00", latitude: "9908.9230"))
        let fix = try NMEALogLocation(path: path).lastFix()
        XCTAssertEqual(fix.timestamp, date("2024-03-09T10:15:00.000Z"))
        XCTAssertEqual(fix.latitude, 48 + 8.921 / 60, accuracy: 1e-9)
    }

    func testOnlyImpossiblePositionsNameTheFileAndLine() throws {
        let path = try log(outage + ["GPGGA,101501.00,4808.9210,N,18134.6930,E,1,09,0.8,520.1,M,47.3,M,,"]
                           + cycle("101502.00", latitude: "9908.9230"))
        let expected = LocationError.nmeaLogHasOnlyInvalidPositions(
            path: path, line: 4, problem: "GPGGA: longitude '18134.6930,E' is not a valid angle", invalidSentences: 3)
        assertThrows(expected) { _ = try NMEALogLocation(path: path).lastFix() }
        XCTAssertTrue(expected.reason.contains("\(path)") && expected.reason.contains("line 4"), expected.reason)
    }

    func testOnlySentencesThatGiveNoPositionAreNamed() throws {
        let path = try log(["PERC,GPppf,-07.6,+000.0,1,,", "PERC,GPppf,-07.6,+000.0,1,,",
                            "GPGSV,1,1,03,25,00,,42,19,00,,38,22,00,,34,,,,",
                            "raw:$GPGGA,101501.00,4808.9210,N,01134.6930,E,1,09,0.8,520.1,M,47.3,M,,*00"])
        let expected = LocationError.nmeaLogHasNoPositionSentences(path: path, sentences: 3, kinds: "PERC 2, GPGSV 1",
                                                                   badChecksums: 1)
        assertThrows(expected) { _ = try NMEALogLocation(path: path).lastFix() }
        XCTAssertTrue(expected.reason.hasSuffix("(PERC 2, GPGSV 1; 1 more with bad or missing checksums)"), expected.reason)
    }

    /// The reader `watch` will replay through: each fix comes out once its cycle is complete.
    func testTheReaderYieldsEveryFixInOrderAsCyclesComplete() throws {
        var reader = NMEAFixReader()
        var seen: [[Date]] = []
        for body in cycle("235959.00") + outage + cycle("000001.00") {
            seen.append(reader.read(line: Array(NMEA.sentence(body).utf8)).map(\.timestamp))
        }
        seen.append(reader.finish().map(\.timestamp))
        XCTAssertEqual(seen.flatMap { $0 }, [date("2024-03-09T23:59:59.000Z"), date("2024-03-09T00:00:01.000Z")],
                       "each cycle's own date, even where it looks like a rollover")
        XCTAssertEqual(seen[3], [date("2024-03-09T23:59:59.000Z")], "the first fix is out when the outage begins")
        XCTAssertEqual(seen.last, [date("2024-03-09T00:00:01.000Z")])
        XCTAssertEqual(reader.statistics.fixes, 2)
    }
}
