import Foundation
import GRDB
import XCTest
@testable import Capture
@testable import Outbox

/// `enlog import FILE`: GPX from elsewhere (gpsbabel, files with extensions and several
/// segments) and NMEA logs into the history, each time once; malformed files import nothing.
final class TrackImportTests: XCTestCase {
    static let start = Date(timeIntervalSince1970: 1_795_334_400)   // 2026-11-22T08:00:00Z

    func fixCount(_ home: EnlogHome) throws -> Int {
        guard FileManager.default.fileExists(atPath: home.database) else { return 0 }
        return try DatabaseQueue(path: home.database).read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM fix")! }
    }

    func history(_ home: EnlogHome) async throws -> [Fix] {
        try await OutboxStore(path: home.database, access: .read).history().map { try $0.fix() }
    }

    /// `history` lists the diary's places (fixes with a note); `--track` and the exports every fix.
    func testHistoryListsTheNotesFixesAndTrackAddsTheFixesWithoutNotes() throws {
        let home = try EnlogHome()
        let track = GeneratedTrack(start: Self.start, legs: [.drive(metres: 500, speed: 10)])
        let nmea = try home.directory.file("drive.nmea", contents: track.nmea)
        XCTAssertEqual(try home.run("import", nmea.path).status, 0)
        let logged = try home.run("log", "--at", "48.2,11.6", "--no-geocode", "--no-sync")
        XCTAssertEqual(logged.status, 0, logged.standardError)
        func lines(_ arguments: String...) throws -> [Substring] {
            let result = try home.run(["history"] + arguments)
            XCTAssertEqual(result.status, 0, result.standardError)
            return result.standardOutput.split(whereSeparator: \.isNewline)   // CSV ends its rows with CRLF
        }
        let listed = try lines()
        XCTAssertEqual(listed.count, 1)
        XCTAssertTrue(listed.first?.contains("48.200000,11.600000") == true, "\(listed)")
        XCTAssertEqual(try lines("--track").count, 1 + track.points.count)
        let json = try home.run("history", "--json").standardOutput
        XCTAssertEqual((try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [Any])?.count, 1)
        XCTAssertEqual(try lines("--format", "csv").count, 1 + 1 + track.points.count, "header and every fix")
    }

    func testGpsbabelsGPXOfAnNMEALogImportsWithTheLogsPointsOnce() async throws {
        let home = try EnlogHome()
        let track = GeneratedTrack(start: Self.start, legs: [.stop(seconds: 20), .drive(metres: 600, speed: 5), .stop(seconds: 10)], noise: 3)
        let nmea = try home.directory.file("drive.nmea", contents: track.nmea)
        let gpx = home.directory.path("drive.gpx")
        let babel = try Subprocess.run(try TrackPeer.gpsbabel(), ["-i", "nmea", "-f", nmea.path, "-o", "gpx", "-F", gpx])
        XCTAssertEqual(babel.status, 0, babel.standardError)

        let result = try home.run("import", gpx)
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertTrue(result.standardOutput.hasPrefix("read \(track.points.count) points from GPX: \(track.points.count) added"), result.standardOutput)
        let stored = try await history(home)
        XCTAssertEqual(stored.count, track.points.count)
        for (fix, point) in zip(stored, track.points) {
            XCTAssertEqual(fix.timestamp.timeIntervalSince1970, point.time.timeIntervalSince1970, accuracy: 0.0005)
            // NMEA carries 1e-4 minutes; gpsbabel writes 9 decimals of what it read.
            XCTAssertEqual(fix.latitude, point.latitude, accuracy: 2e-6)
            XCTAssertEqual(fix.longitude, point.longitude, accuracy: 2e-6)
            XCTAssertEqual(fix.source, .gpx)
        }

        // Again, and the NMEA log itself: the same times, nothing added.
        let again = try home.run("import", gpx)
        XCTAssertTrue(again.standardOutput.contains(": 0 added, \(track.points.count) already in the history"), again.standardOutput)
        let log = try home.run("import", nmea.path)
        XCTAssertEqual(log.status, 0, log.standardError)
        XCTAssertTrue(log.standardOutput.hasPrefix("read \(track.points.count) points from NMEA: 0 added"), log.standardOutput)
        XCTAssertEqual(try fixCount(home), track.points.count)
    }

    func testNMEALogImportsItsValidFixes() async throws {
        let home = try EnlogHome()
        let fixture = Fixtures.root.appendingPathComponent("nmea/walk.nmea").path
        let expected = try NMEALogLocation(path: fixture).fixes()
        let result = try home.run("import", fixture, "--json")
        XCTAssertEqual(result.status, 0, result.standardError)
        let summary = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        XCTAssertEqual(summary["format"] as? String, "nmea")
        XCTAssertEqual(summary["added"] as? Int, expected.count)
        let stored = try await history(home)
        XCTAssertEqual(stored.map(\.latitude), expected.map(\.latitude))
    }

    /// GPX 1.0 and 1.1 as other software writes them: extensions (in points, tracks and the
    /// document), several tracks and segments, a route without times, waypoints with and without.
    func testGPXWithExtensionsAndSeveralSegmentsImports() async throws {
        let home = try EnlogHome()
        let file = try home.directory.file("ride.gpx", contents: """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="Garmin Connect" xmlns="http://www.topografix.com/GPX/1/1"
                 xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v1">
              <metadata><time>2026-11-22T07:59:00Z</time></metadata>
              <wpt lat="48.2" lon="11.6"><time>2026-11-22T07:59:30Z</time><name>Start</name></wpt>
              <wpt lat="48.3" lon="11.7"><name>A plan, no time</name></wpt>
              <rte><rtept lat="48.0" lon="11.0"/><rtept lat="48.1" lon="11.1"/></rte>
              <trk><name>Ride</name><extensions><gpxtpx:color>red</gpxtpx:color></extensions>
                <trkseg>
                  <trkpt lat="48.1486" lon="11.5783"><ele>520.4</ele><time>2026-11-22T08:00:00Z</time>
                    <extensions><gpxtpx:TrackPointExtension><gpxtpx:hr>121</gpxtpx:hr><gpxtpx:time>bogus</gpxtpx:time></gpxtpx:TrackPointExtension></extensions></trkpt>
                  <trkpt lat="48.1487" lon="11.5790"><ele>521</ele><time>2026-11-22T09:00:05.500+01:00</time><hdop>0.8</hdop></trkpt>
                </trkseg>
                <trkseg>
                  <trkpt lat="48.1500" lon="11.5800"><time>2026-11-22T08:30:00Z</time></trkpt>
                </trkseg>
              </trk>
              <trk><trkseg><trkpt lat="-33.8568" lon="151.2153"><time>2026-11-22T08:40:00Z</time></trkpt></trkseg></trk>
              <extensions><gpxtpx:anything/></extensions>
            </gpx>
            """)
        let result = try home.run("import", file.path)
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertEqual(result.standardOutput,
                       "read 5 points from GPX: 5 added, 0 already in the history; 3 skipped (3 no time)\n")
        let stored = try await history(home)
        XCTAssertEqual(stored.map { TrackTime.string($0.timestamp) },
                       ["2026-11-22T07:59:30Z", "2026-11-22T08:00:00Z", "2026-11-22T08:00:05.500Z", "2026-11-22T08:30:00Z", "2026-11-22T08:40:00Z"])
        XCTAssertEqual(stored[1].altitude, 520.4)
        XCTAssertEqual(stored[2].horizontalAccuracy ?? 0, 0.8 * NMEALogLocation.metresPerHDOP, accuracy: 1e-9)

        let old = try home.directory.file("old.gpx", contents: """
            <gpx version="1.0" creator="x" xmlns="http://www.topografix.com/GPX/1/0">
            <trk><trkseg><trkpt lat="48.1" lon="11.5"><time>2026-11-22T10:00:00Z</time><course>90.5</course><speed>3.2</speed></trkpt></trkseg></trk>
            </gpx>
            """)
        XCTAssertEqual(try home.run("import", old.path).status, 0)
        let last = try await history(home).last
        XCTAssertEqual(last?.speed, 3.2)
        XCTAssertEqual(last?.course, 90.5)

        // Some older tools write no namespace at all; then elements of another one are still not GPX's.
        let bare = try home.directory.file("bare.gpx", contents: """
            <gpx version="1.0" creator="x" xmlns:o="http://example.org/other"><trk><trkseg>
            <trkpt lat="48.2" lon="11.6"><time>2026-11-22T11:00:00Z</time><o:ele>9999</o:ele></trkpt>
            </trkseg></trk></gpx>
            """)
        let imported = try home.run("import", bare.path)
        XCTAssertEqual(imported.status, 0, imported.standardError)
        let bareFix = try await history(home).last
        XCTAssertEqual(bareFix?.latitude, 48.2)
        XCTAssertNil(bareFix?.altitude)
    }

    /// Every kind of bad file: one line on stderr, exit 65 (66 when unreadable), and the history
    /// exactly as it was, even when the bad point comes after hundreds of good ones.
    func testMalformedFilesGiveOneLineAndImportNothing() throws {
        let home = try EnlogHome()
        let good = GeneratedTrack(start: Self.start, legs: [.drive(metres: 500, speed: 5)])
        let points = good.points.map { "<trkpt lat=\"\($0.latitude)\" lon=\"\($0.longitude)\"><time>\(TrackTime.string($0.time.addingTimeInterval(86_400)))</time></trkpt>" }
        func gpx(_ body: String) -> String {
            "<?xml version=\"1.0\"?>\n<gpx version=\"1.1\" creator=\"t\" xmlns=\"http://www.topografix.com/GPX/1/1\"><trk><trkseg>\n\(body)\n</trkseg></trk></gpx>\n"
        }
        let laughs = """
            <?xml version="1.0"?>
            <!DOCTYPE gpx [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>
            <gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg><trkpt lat="1" lon="2"><time>2026-11-22T08:00:00Z</time><name>&c;</name></trkpt></trkseg></trk></gpx>
            """
        let external = """
            <?xml version="1.0"?>
            <!DOCTYPE gpx SYSTEM "http://127.0.0.1:9/gpx.dtd">
            <gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1"/>
            """
        let cases: [(name: String, contents: String, status: ExitStatusCode, says: String)] = [
            ("truncated.gpx", String(gpx(points.joined(separator: "\n")).dropLast(30)), .badLocation, "not well-formed XML"),
            ("late-bad-latitude.gpx", gpx((points + ["<trkpt lat=\"99.5\" lon=\"11\"><time>2026-11-24T08:00:00Z</time></trkpt>"]).joined(separator: "\n")), .badLocation, "latitude"),
            ("no-time.gpx", gpx((points + ["<trkpt lat=\"48\" lon=\"11\"/>"]).joined(separator: "\n")), .badLocation, "has no <time>"),
            ("bad-time.gpx", gpx((points + ["<trkpt lat=\"48\" lon=\"11\"><time>yesterday</time></trkpt>"]).joined(separator: "\n")), .badLocation, "not an ISO 8601"),
            ("no-number.gpx", gpx("<trkpt lat=\"north\" lon=\"11\"><time>2026-11-22T08:00:00Z</time></trkpt>"), .badLocation, "is not a number"),
            ("laughs.gpx", laughs, .badLocation, "DOCTYPE is not allowed"),
            ("external.gpx", external, .badLocation, "DOCTYPE is not allowed"),
            ("osm.gpx", "<osm version=\"0.6\"/>", .badLocation, "XML with the root element <osm>"),
            ("empty-track.gpx", gpx(""), .badLocation, "holds no point: nothing to import"),
            ("garbage.bin", "\u{1}\u{2}PK\u{3}\u{4}", .badLocation, "neither GPX"),
            ("no-fix.nmea", "$GPGGA,,,,,,0,00,99.99,,,,,,*48\n", .badLocation, "no"),
            ("bad-checksums.nmea", try String(contentsOf: Fixtures.root.appendingPathComponent("nmea/bad-checksums.nmea"), encoding: .utf8), .badLocation, "checksum"),
        ]
        let first = try home.run("import", try home.directory.file("first.gpx", contents: gpx(points.prefix(10).joined(separator: "\n"))).path)
        XCTAssertEqual(first.status, 0, first.standardError)
        for item in cases {
            let file = try home.directory.file(item.name, contents: item.contents)
            let result = try home.run("import", file.path)
            XCTAssertEqual(result.status, item.status.rawValue, "\(item.name): \(result.standardError)")
            XCTAssertEqual(result.standardErrorLines.count, 1, "\(item.name): \(result.standardError)")
            XCTAssertTrue(result.standardError.hasPrefix("enlog: error: "), "\(item.name): \(result.standardError)")
            XCTAssertTrue(result.standardError.contains(item.says), "\(item.name): \(result.standardError)")
            XCTAssertEqual(result.standardOutput, "", item.name)
            XCTAssertEqual(try fixCount(home), 10, item.name)
        }
        let missing = try home.run("import", home.directory.path("nowhere.gpx"))
        XCTAssertEqual(missing.status, ExitStatusCode.noInput.rawValue, missing.standardError)
        XCTAssertEqual(missing.standardErrorLines.count, 1, missing.standardError)
    }

    /// No size limit any more (files are streamed), so what never ends must still not hang or
    /// fill the memory: a device is refused unread, and a huge file of no known format is refused
    /// from its first 64 KiB (a sparse file: reading it whole would take minutes).
    func testDevicesAndHugeFilesOfNoFormatAreRefusedFromTheirStart() throws {
        let home = try EnlogHome()
        let device = try home.run("import", "/dev/zero")
        XCTAssertEqual(device.status, ExitStatusCode.noInput.rawValue, device.standardError)
        XCTAssertTrue(device.standardError.contains("not a regular file (a character device)"), device.standardError)
        let path = home.directory.path("huge.gpx")
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data()))
        XCTAssertEqual(truncate(path, off_t(64 << 30)), 0)
        let result = try home.run("import", path)
        XCTAssertEqual(result.status, ExitStatusCode.badLocation.rawValue, result.standardError)
        XCTAssertTrue(result.standardError.contains("is not a location history enlog reads"), result.standardError)
        XCTAssertEqual(try fixCount(home), 0)
    }

    /// --notes writes the notes `watch --replay` writes for the same track, on the imported fixes
    /// (no fix stored twice); a second import writes none.
    func testNotesAreWrittenWhereWatchWouldHaveWrittenThemAndOnlyOnce() async throws {
        let track = GeneratedTrack(start: Self.start, legs: [.stop(seconds: 400), .drive(metres: 1200, speed: 8),
                                                             .stop(seconds: 400), .drive(metres: 900, speed: 8), .stop(seconds: 400)], noise: 11)
        // No address lookups: the only geocoder these tests may reach is a local one.
        var watched = try EnlogHome()
        watched.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        let nmea = try watched.directory.file("day.nmea", contents: track.nmea)
        let replay = try watched.run("watch", "--nmea", nmea.path)
        XCTAssertEqual(replay.status, 0, replay.standardError)
        let expected = try watched.notes().map { $0["latitude"] as? Double }
        XCTAssertGreaterThanOrEqual(expected.count, 3)

        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        let imported = try home.run("import", nmea.path, "--notes")
        XCTAssertEqual(imported.status, 0, imported.standardError)
        XCTAssertTrue(imported.standardOutput.hasSuffix("; \(expected.count) notes written\n"), imported.standardOutput)
        XCTAssertEqual(try home.notes().map { $0["latitude"] as? Double }, expected)
        let counts = try home.counts()
        XCTAssertEqual(counts.fixes, track.points.count, "every fix once: notes are written on the imported fixes")
        XCTAssertEqual(counts.notes, expected.count)

        let again = try home.run("import", nmea.path, "--notes")
        XCTAssertEqual(again.status, 0, again.standardError)
        XCTAssertTrue(again.standardOutput.contains("; 0 notes written (\(expected.count) places had theirs)"), again.standardOutput)
        XCTAssertEqual(try home.counts().notes, expected.count)
    }
}
