import Foundation
import XCTest
@testable import Capture
@testable import Compose
@testable import Outbox
@testable import Diary

/// `enlog digest`: one note for a day, with its GPX track and its route map, uploaded to the test
/// Evernote server and decoded there by the official SDK's classes.
final class DigestTests: TilesAndEvernoteTestCase {
    override class var contact: String { "digest-test@example.org" }
    /// 2026-11-22 08:00 in Europe/Berlin (UTC+1).
    static let morning = Date(timeIntervalSince1970: 1_795_330_800)

    override func setUp() async throws {
        try await super.setUp()
        // The process runs in UTC; the day is Berlin's.
        try home.writeConfig("[note]\ntime_zone = \"Europe/Berlin\"\n")
    }

    /// A day: a drive with stops (notes where watch would write them), plus one fix a minute
    /// before and one a minute after the Berlin day, which are not the day's.
    func importDay() throws -> [Fix] {
        let track = GeneratedTrack(start: Self.morning, legs: [.stop(seconds: 400), .drive(metres: 1500, speed: 8), .stop(seconds: 400)], noise: 5)
        let nmea = try home.directory.file("day.nmea", contents: track.nmea)
        let imported = try home.run("import", nmea.path, "--notes")
        XCTAssertEqual(imported.status, 0, imported.standardError)
        let dayStart = TrackTime.parse("2026-11-21T23:00:00Z")!, dayEnd = TrackTime.parse("2026-11-22T23:00:00Z")!
        let outside = [dayStart.addingTimeInterval(-60), dayEnd.addingTimeInterval(60)].map { time in
            "<trkpt lat=\"48.2\" lon=\"11.6\"><time>\(TrackTime.string(time))</time></trkpt>"
        }
        let edges = try home.directory.file("edges.gpx", contents: """
            <gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>
            <trkpt lat="48.1486" lon="11.5783"><time>\(TrackTime.string(dayStart))</time></trkpt>\(outside.joined())
            </trkseg></trk></gpx>
            """)
        XCTAssertEqual(try home.run("import", edges.path).status, 0)
        return [try Fix(latitude: 48.1486, longitude: 11.5783, timestamp: dayStart, source: .gpx)] + track.fixes
    }

    func testTheDigestCarriesTheDaysGPXAndRouteMapToEvernote() async throws {
        let dayFixes = try importDay()
        let notesBefore = try home.notes().count
        XCTAssertGreaterThanOrEqual(notesBefore, 2)

        let digest = try home.run("digest", "--date", "2026-11-22", "--no-sync")
        XCTAssertEqual(digest.status, 0, digest.standardError)
        // The title gives the day's timeline: its moves, the gaps to the fixes just past midnight
        // (48.2, 11.6, 7 km off) bridged and counted.
        let timeline = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(try home.run("timeline", "--date", "2026-11-22", "--json").standardOutput.utf8)) as? [String: Any])
        let distance = TimelineText.distance(try XCTUnwrap(timeline["distanceMetres"] as? Int))
        let moving = TimelineText.movingTime(try XCTUnwrap(timeline["movingSeconds"] as? Int))
        XCTAssertTrue(digest.standardOutput.hasPrefix("logged note \(notesBefore + 1): Day 2026-11-22: \(distance), \(moving) moving"), digest.standardOutput)
        XCTAssertGreaterThan(timeline["bridgedMetres"] as? Int ?? 0, 0)
        let again = try home.run("digest", "--date", "2026-11-22")
        XCTAssertEqual(again.status, 0, again.standardError)
        XCTAssertEqual(again.standardError, "enlog: 2026-11-22 has its digest already: note \(notesBefore + 1)\n")
        XCTAssertEqual(try home.notes().count, notesBefore + 1)

        let sync = try home.run("sync")
        XCTAssertEqual(sync.status, 0, sync.standardError)
        try await checkUploadedDigest(notesBefore: notesBefore, dayFixes: dayFixes)
    }

    /// Offline at midnight (the tile server failing): the digest is stored with its route
    /// pending, as a note's map is; sync draws it, makes the digest again with it and uploads it.
    func testADigestWhoseRouteCannotBeDrawnWaitsForItAndSyncMakesIt() async throws {
        let dayFixes = try importDay()
        let notesBefore = try home.notes().count
        try await tiles.configure("status=500")
        let digest = try home.run("digest", "--date", "2026-11-22", "--no-sync")
        XCTAssertEqual(digest.status, 0, digest.standardError)
        XCTAssertTrue(digest.standardError.contains("no route map yet ("), digest.standardError)
        XCTAssertTrue(digest.standardError.hasSuffix("; it is made before upload\n"), digest.standardError)
        let queued = try home.run("queue", "list")
        XCTAssertTrue(queued.standardOutput.contains("(map pending)"), queued.standardOutput)
        let id = notesBefore + 1
        let waiting = try await OutboxStore(path: home.database, access: .read).resources(of: Int64(id))
        XCTAssertEqual(waiting.map(\.mime), ["application/gpx+xml"])

        try await tiles.reset()
        let sync = try home.run("sync")
        XCTAssertEqual(sync.status, 0, sync.standardError)
        try await checkUploadedDigest(notesBefore: notesBefore, dayFixes: dayFixes)
        let again = try home.run("digest", "--date", "2026-11-22")
        XCTAssertEqual(again.standardError, "enlog: 2026-11-22 has its digest already: note \(id)\n")
    }

    /// The digest as Evernote's server got it: the day's title and text, every place noted, and
    /// both resources (the GPX read by gpxpy, the route read by Pillow), each referenced by its MD5.
    func checkUploadedDigest(notesBefore: Int, dayFixes: [Fix]) async throws {
        let notes = try await fetchJSON(evernote.baseURL + "/_test/notes") as? [[String: Any]] ?? []
        XCTAssertEqual(notes.count, notesBefore + 1)
        let note = try XCTUnwrap(notes.first { ($0["title"] as? String)?.hasPrefix("Day 2026-11-22") == true }, "\(notes.map { $0["title"] ?? "" })")
        let content = note["content"] as? String ?? ""
        XCTAssertTrue(content.contains("Sunday, 22 November 2026"), content)
        XCTAssertEqual(ENMLValidator().validate(content).errors.count, 0)
        // The places noted follow the timeline, which has items of its own.
        let noted = content.components(separatedBy: "<h3>Places noted</h3>").last ?? ""
        XCTAssertEqual(noted.components(separatedBy: "<li>").count - 1, notesBefore, "every place noted that day: \(content)")

        let resources = try XCTUnwrap(note["resources"] as? [[String: Any]])
        XCTAssertEqual(resources.compactMap { $0["mime"] as? String }.sorted(), ["application/gpx+xml", "image/png"])
        for resource in resources {
            // As the server's Python read them: its own MD5 of the body, the bodyHash and size sent.
            let body = try XCTUnwrap(Data(base64Encoded: resource["body"] as? String ?? ""))
            let md5 = MapImage.md5Hex(body)
            XCTAssertEqual(resource["md5"] as? String, md5)
            XCTAssertEqual(resource["bodyHash"] as? String, md5)
            XCTAssertEqual(resource["size"] as? Int, body.count)
            XCTAssertTrue(content.contains("<en-media type=\"\(resource["mime"] as? String ?? "")\" hash=\"\(md5)\""), content)
            let attributes = try XCTUnwrap(resource["attributes"] as? [String: Any])
            if resource["mime"] as? String == "application/gpx+xml" {
                XCTAssertEqual(attributes["fileName"] as? String, "enlog-2026-11-22.gpx")
                XCTAssertEqual(attributes["attachment"] as? Bool, true)
                let scratch = try TemporaryDirectory()
                let file = scratch.path("day.gpx")
                try body.write(to: URL(fileURLWithPath: file))
                let points = try TrackPeer.read("gpx", file: file).points
                XCTAssertEqual(points.count, dayFixes.count, "the day's fixes in Berlin, not UTC's")
                for (point, fix) in zip(points, dayFixes) {
                    XCTAssertEqual(point.time ?? 0, fix.storedTime.timeIntervalSince1970, accuracy: 0.0005)
                    XCTAssertEqual(point.lat, fix.latitude, accuracy: 2e-6)
                }
            } else {
                XCTAssertEqual(attributes["fileName"] as? String, "route.png")
                XCTAssertNil(attributes["attachment"] as? Bool)
                let decoded = try IndependentDecoder.decode(body)
                XCTAssertEqual([decoded.width, decoded.height], [600, 400])
            }
        }
    }

    func testADayWithoutFixesIsOneLineAndNoNote() throws {
        _ = try importDay()
        let before = try home.notes().count
        let empty = try home.run("digest", "--date", "2026-11-20", "--no-sync")
        XCTAssertEqual(empty.status, ExitStatusCode.noInput.rawValue, empty.standardError)
        XCTAssertEqual(empty.standardErrorLines.count, 1, empty.standardError)
        XCTAssertTrue(empty.standardError.contains("no fix on 2026-11-20"), empty.standardError)
        let bad = try home.run("digest", "--date", "2026-11-31")
        XCTAssertEqual(bad.status, ExitStatusCode.usage.rawValue, bad.standardError)
        XCTAssertEqual(try home.notes().count, before)
    }

    /// Without tiles the digest still carries its track and list, and says why there is no picture.
    func testWithoutMapsTheDigestCarriesTheTrackAlone() async throws {
        _ = try importDay()
        home.extraEnvironment["ENLOG_MAP_STYLE"] = "none"
        let digest = try home.run("digest", "--date", "2026-11-22", "--no-sync", "--json")
        XCTAssertEqual(digest.status, 0, digest.standardError)
        let note = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(digest.standardOutput.utf8)) as? [String: Any])
        let resources = try await OutboxStore(path: home.database, access: .read).resources(of: try XCTUnwrap(note["id"] as? Int).int64)
        XCTAssertEqual(resources.map(\.mime), ["application/gpx+xml"])
    }
}

private extension Int {
    var int64: Int64 { Int64(self) }
}

/// The route drawn on a map fitted to it, checked by Pillow; the fit and the day's statistics.
final class RouteMapTests: XCTestCase {
    func testRouteFitIsTheClosestZoomThatHoldsTheWholeRoute() {
        let points = [(latitude: 48.10, longitude: 11.50), (latitude: 48.16, longitude: 11.62), (latitude: 48.13, longitude: 11.55)]
        let fit = RouteFit(points: points, width: 600, height: 400, maxZoom: 18)
        func span(_ zoom: Int) -> (x: Double, y: Double) {
            let pixels = points.map { WebMercator.pixel(latitude: $0.latitude, longitude: $0.longitude, zoom: zoom) }
            return (pixels.map(\.x).max()! - pixels.map(\.x).min()!, pixels.map(\.y).max()! - pixels.map(\.y).min()!)
        }
        XCTAssertLessThanOrEqual(span(fit.zoom).x, 600 - 48)
        XCTAssertLessThanOrEqual(span(fit.zoom).y, 400 - 48)
        XCTAssertTrue(span(fit.zoom + 1).x > 600 - 48 || span(fit.zoom + 1).y > 400 - 48, "zoom \(fit.zoom) + 1 would still fit")
        XCTAssertEqual(RouteFit(points: [points[0]], width: 600, height: 400, maxZoom: 16).zoom, 16, "one place: the configured zoom")
        let back = WebMercator.coordinate(x: WebMercator.pixel(latitude: -33.8568, longitude: 151.2153, zoom: 12).x,
                                          y: WebMercator.pixel(latitude: -33.8568, longitude: 151.2153, zoom: 12).y, zoom: 12)
        XCTAssertEqual(back.latitude, -33.8568, accuracy: 1e-9)
        XCTAssertEqual(back.longitude, 151.2153, accuracy: 1e-9)
    }

    func testTheRouteIsDrawnWhereItsFixesAre() async throws {
        let server = try TileTestServer()
        defer { server.stop() }
        let track = GeneratedTrack(start: DigestTests.morning, legs: [.drive(metres: 3000, speed: 10)])
        let renderer = MapRenderer(settings: .local(server, cache: nil))
        let image = try await renderer.renderRoute(track.fixes)
        let fit = RouteFit(points: track.fixes.map { ($0.latitude, $0.longitude) }, width: 600, height: 400, maxZoom: 16)
        let layout = MapLayout(latitude: fit.centerLatitude, longitude: fit.centerLongitude, zoom: fit.zoom, width: 600, height: 400)
        let center = WebMercator.pixel(latitude: fit.centerLatitude, longitude: fit.centerLongitude, zoom: fit.zoom)
        func onImage(_ fix: Fix) -> (x: Double, y: Double) {
            let pixel = WebMercator.pixel(latitude: fix.latitude, longitude: fix.longitude, zoom: fit.zoom)
            return (pixel.x - center.x + layout.centerX, pixel.y - center.y + layout.centerY)
        }
        // Along the line, away from the end markers; and 40 pixels off it.
        let along = [track.fixes.count / 4, track.fixes.count / 2, 3 * track.fixes.count / 4].map { onImage(track.fixes[$0]) }
        let off = along.map { (x: $0.x, y: $0.y - 40) }
        let pixels = try TrackPeer.pixels(image.png, at: along + off)
        let blue = MapCanvas.routeColor
        for pixel in pixels.prefix(3) {
            XCTAssertEqual(Double(pixel[0]), Double(blue.red), accuracy: 3, "\(pixels)")
            XCTAssertEqual(Double(pixel[1]), Double(blue.green), accuracy: 3, "\(pixels)")
            XCTAssertEqual(Double(pixel[2]), Double(blue.blue), accuracy: 3, "\(pixels)")
        }
        for pixel in pixels.suffix(3) { XCTAssertNotEqual(pixel, [Int(blue.red), Int(blue.green), Int(blue.blue)], "\(pixels)") }
    }

    func testStatisticsCountMovementNotJitter() {
        let start = DigestTests.morning
        let still = GeneratedTrack(start: start, legs: [.stop(seconds: 3600)], noise: 21, hdop: 0.6...2.0)
        let idle = TrackStatistics(still.fixes)
        XCTAssertEqual(idle.distance, 0, accuracy: 1e-9, "an hour of jitter is no distance")
        XCTAssertEqual(idle.movingTime, 0)

        let day = GeneratedTrack(start: start, legs: [.stop(seconds: 600), .drive(metres: 2000, speed: 10), .stop(seconds: 600),
                                                      .drive(metres: 1000, speed: 1.4), .stop(seconds: 300)], noise: 22)
        let statistics = TrackStatistics(day.fixes)
        XCTAssertEqual(statistics.distance, 3000, accuracy: 3000 * 0.05)
        XCTAssertEqual(statistics.movingTime, 200 + 714, accuracy: (200 + 714) * 0.1)
        XCTAssertEqual(statistics.fixes, day.points.count)
        XCTAssertEqual(TrackStatistics([]).distance, 0)
    }
}

/// Issue 20: a digest counted hours between fixes as time moving, and the straight lines
/// between positions typed by hand hours apart (32,420 km) as distance travelled.
extension DigestTests {
    func testGapsBetweenFixesAreNeitherDistanceNorTimeMoving() throws {
        let start = DigestTests.morning
        let typed = try [(48.8584, 2.2945, 0.0), (52.5200, 13.4050, 4 * 3600.0), (35.6812, 139.7671, 12 * 3600.0)].map {
            try Fix(latitude: $0.0, longitude: $0.1, timestamp: start.addingTimeInterval($0.2), source: .manual)
        }
        let byHand = TrackStatistics(typed)
        XCTAssertEqual(byHand.distance, 0)
        XCTAssertEqual(byHand.movingTime, 0)
        XCTAssertEqual(byHand.gaps, 2)

        let morning = GeneratedTrack(start: start, legs: [.drive(metres: 2000, speed: 10)], noise: 3)
        let afternoon = GeneratedTrack(start: start.addingTimeInterval(3 * 3600), legs: [.drive(metres: 1000, speed: 10)], noise: 3)
        // The second drive starts 5 km from where the first ended, three hours later.
        let shifted = try afternoon.fixes.map { try Fix(latitude: $0.latitude + 0.045, longitude: $0.longitude, timestamp: $0.timestamp, source: .nmea) }
        let statistics = TrackStatistics(morning.fixes + shifted)
        XCTAssertEqual(statistics.distance, 3000, accuracy: 3000 * 0.05, "the drives, not the way between")
        XCTAssertEqual(statistics.movingTime, 300, accuracy: 30, "the drives' 300 s, not the three hours between")
        XCTAssertEqual(statistics.gaps, 1)
    }
}
