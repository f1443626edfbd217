import Foundation
import GRDB
import XCTest
@testable import Compose
@testable import Support

/// Maps rendered against the local tile server: caching, revalidation, the download bound,
/// errors, and the picture checked by an independent decoder.
final class MapRendererTests: TileServerTestCase {
    let tokyo = (latitude: 35.681236, longitude: 139.767125)

    /// The page tile_server.py sends with garbage=html.
    static let htmlPage = "<html><body>Service temporarily replaced by this page</body></html>"

    func expectedTiles(width: Int = 600, height: Int = 400, zoom: Int = 16) -> Int {
        MapLayout(latitude: tokyo.latitude, longitude: tokyo.longitude, zoom: zoom, width: width, height: height).tiles.count
    }

    func testFirstMapDownloadsItsTilesThenMemoryAndDiskServeThemWithoutAnyRequest() async throws {
        let renderer = MapRenderer(settings: .local(server, cache: cachePath))
        let first = try await renderer.render(latitude: tokyo.latitude, longitude: tokyo.longitude, accuracy: 30)
        let tiles = expectedTiles()
        XCTAssertEqual(first.statistics.downloaded, tiles)
        var log = try await server.log()
        XCTAssertEqual(log.requests.count, tiles)
        XCTAssertEqual(Set(log.paths).count, tiles, "each tile asked once")
        for request in log.requests {
            XCTAssertEqual(log.header("User-Agent", of: request), "enlog/\(ENLogVersion.current) (+maps-test@example.org)")
        }

        // Another fix there (a few centimetres off): the same tiles, from memory.
        let second = try await renderer.render(latitude: tokyo.latitude + 0.0000003, longitude: tokyo.longitude, accuracy: 5)
        XCTAssertEqual(second.statistics.fromMemory, tiles)
        // A new renderer (as a new process would): from the disk cache.
        let third = try await MapRenderer(settings: .local(server, cache: cachePath))
            .render(latitude: tokyo.latitude, longitude: tokyo.longitude, accuracy: 30)
        XCTAssertEqual(third.statistics.fromDisk, tiles)
        XCTAssertEqual(third.png, first.png, "the same tiles make the same picture")
        log = try await server.log()
        XCTAssertEqual(log.requests.count, tiles, "no request after the first map")
    }

    func testMemoryCacheAloneServesTheSecondMapWhenTheDiskCacheIsOff() async throws {
        let renderer = MapRenderer(settings: .local(server, cache: nil))
        _ = try await renderer.render(latitude: tokyo.latitude, longitude: tokyo.longitude)
        let second = try await renderer.render(latitude: tokyo.latitude, longitude: tokyo.longitude)
        XCTAssertEqual(second.statistics.fromMemory, expectedTiles())
        let requests = try await server.log().requests.count
        XCTAssertEqual(requests, expectedTiles())
    }

    func testExpiredTilesAreRevalidatedWithIfNoneMatchAndA304IsAccepted() async throws {
        try await server.configure("max_age=0")
        let renderer = MapRenderer(settings: .local(server, cache: cachePath))
        let first = try await renderer.render(latitude: tokyo.latitude, longitude: tokyo.longitude)
        let second = try await renderer.render(latitude: tokyo.latitude, longitude: tokyo.longitude)
        let tiles = expectedTiles()
        XCTAssertEqual(second.statistics.revalidated, tiles)
        XCTAssertEqual(second.png, first.png)
        let log = try await server.log()
        let revalidations = Array(log.requests.dropFirst(tiles))
        XCTAssertEqual(revalidations.count, tiles)
        for request in revalidations {
            let path = request["path"] as! String
            let parts = path.dropFirst().dropLast(4).split(separator: "/")
            XCTAssertEqual(log.header("If-None-Match", of: request), "\"t-\(parts[0])-\(parts[1])-\(parts[2])\"")
            XCTAssertEqual(log.header("If-Modified-Since", of: request), "Mon, 02 Nov 2026 10:00:00 GMT")
            XCTAssertEqual(request["status"] as? Int, 304)
        }
        // The 304 is remembered on disk too: a new process revalidates again (max-age=0), still with no body.
        let third = try await MapRenderer(settings: .local(server, cache: cachePath))
            .render(latitude: tokyo.latitude, longitude: tokyo.longitude)
        XCTAssertEqual(third.statistics.revalidated, tiles)
    }

    func testNeverMoreThanThreeDownloadsInFlight() async throws {
        // A big map needs many tiles; the server answers only once 3 requests wait (then the
        // oldest), or once all have arrived: exactly 3 in flight with a client that keeps 3 going.
        let tiles = expectedTiles(width: 1500, height: 1200)
        XCTAssertGreaterThan(tiles, 12)
        try await server.configure("hold=3&total=\(tiles)")
        let image = try await MapRenderer(settings: .local(server, cache: nil, width: 1500, height: 1200))
            .render(latitude: tokyo.latitude, longitude: tokyo.longitude)
        XCTAssertEqual(image.statistics.downloaded, tiles)
        let log = try await server.log()
        XCTAssertEqual(log.requests.count, tiles)
        XCTAssertEqual(log.maxInFlight, 3)
    }

    func testBadTileAnswersAreTypedErrorsAndNothingIsCached() async throws {
        let cases: [(String, (String) -> MapError)] = [
            ("status=404", { .httpStatus(host: $0, status: 404) }),
            ("status=500", { .httpStatus(host: $0, status: 500) }),
            ("garbage=html", { .notAnImage(host: $0, detail: "no PNG signature (\(Self.htmlPage.utf8.count) bytes)") }),
            ("garbage=empty", { .notAnImage(host: $0, detail: "an empty body") }),
        ]
        for (mode, expected) in cases {
            try await server.reset()
            try await server.configure(mode)
            let renderer = MapRenderer(settings: .local(server, cache: cachePath))
            await assertMapError(expected(server.baseURL)) {
                try await renderer.render(latitude: self.tokyo.latitude, longitude: self.tokyo.longitude)
            }
            XCTAssertTrue(expected(server.baseURL).isRetryable, mode)
        }
        // Truncated PNGs: cairo's decoder refuses them (the detail is cairo's).
        try await server.reset()
        try await server.configure("garbage=truncated")
        do {
            _ = try await MapRenderer(settings: .local(server, cache: cachePath)).render(latitude: tokyo.latitude, longitude: tokyo.longitude)
            XCTFail("a truncated tile must not make a map")
        } catch {
            guard case .notAnImage = error else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(TileDiskCache(path: cachePath, maxBytes: 1 << 20, warn: { _ in }).statistics()?.tiles, 0, "nothing cached")
        // Once the server is right again, every tile is downloaded: none was kept from the bad answers.
        try await server.reset()
        let image = try await MapRenderer(settings: .local(server, cache: cachePath)).render(latitude: tokyo.latitude, longitude: tokyo.longitude)
        XCTAssertEqual(image.statistics.downloaded, expectedTiles())
    }

    func testAnIndependentDecoderReadsTheMapAtItsSizeWithTheMarkerAtTheCentre() async throws {
        for (width, height, accuracy) in [(600, 400, 25.0), (333, 257, 0), (1024, 768, 2000)] {
            let image = try await MapRenderer(settings: .local(server, cache: cachePath, width: width, height: height))
                .render(latitude: tokyo.latitude, longitude: tokyo.longitude, accuracy: accuracy)
            XCTAssertEqual(image.width, width)
            XCTAssertEqual(image.height, height)
            let decoded = try IndependentDecoder.decode(image.png)
            XCTAssertEqual(decoded.width, width)
            XCTAssertEqual(decoded.height, height)
            let marker = MapCanvas.markerColor
            XCTAssertEqual(decoded.center, [Int(marker.red), Int(marker.green), Int(marker.blue)])
            if let check = try IndependentDecoder.pngcheck(image.png) {
                XCTAssertEqual(check.status, 0, check.standardOutput)
            }
            if let md5sum = Subprocess.which("md5sum") {
                let scratch = try TemporaryDirectory()
                try image.png.write(to: scratch.url.appendingPathComponent("map.png"))
                let sum = try Subprocess.run(md5sum, [scratch.path("map.png")]).standardOutput
                XCTAssertEqual(String(sum.prefix(32)), image.md5)
            }
        }
    }

    func testTheAntimeridianTakesTilesFromBothEndsOfTheWorld() async throws {
        _ = try await MapRenderer(settings: .local(server, cache: nil)).render(latitude: 10, longitude: 179.9999)
        let columns = Set(try await server.log().paths.map { $0.split(separator: "/")[1] })
        XCTAssertTrue(columns.contains("65535") && columns.contains("0"), "\(columns)")
    }

    func testUnwritableDiskCacheDegradesToMemoryWithOneWarning() async throws {
        // A cache directory that cannot be made, even by root: a file stands where it should be.
        let blocker = try directory.file("cache", contents: "a file, not a directory")
        let warnings = WarningLog()
        let renderer = MapRenderer(settings: .local(server, cache: blocker.path + "/enlog/tiles.sqlite"), warn: warnings.sink)
        let first = try await renderer.render(latitude: tokyo.latitude, longitude: tokyo.longitude)
        let second = try await renderer.render(latitude: tokyo.latitude, longitude: tokyo.longitude)
        XCTAssertEqual(first.statistics.downloaded, expectedTiles())
        XCTAssertEqual(second.statistics.fromMemory, expectedTiles())
        XCTAssertEqual(warnings.all.count, 1, "\(warnings.all)")
    }

    func testTheBudgetBoundsTheWaitAndCancellationStopsTheDownloads() async throws {
        // The server holds every answer (never 1000 in flight, never 1000 arrived).
        try await server.configure("hold=1000&total=1000")
        let renderer = MapRenderer(settings: .local(server, cache: cachePath))
        await assertMapError(.timedOut(seconds: 0.3)) {
            try await renderer.render(latitude: self.tokyo.latitude, longitude: self.tokyo.longitude, budget: .milliseconds(300))
        }
        XCTAssertTrue(MapError.timedOut(seconds: 0.3).isRetryable)
        let position = tokyo
        let task = Task { () async throws -> MapImage in
            try await renderer.render(latitude: position.latitude, longitude: position.longitude, budget: .seconds(600))
        }
        // Cancel once the downloads are held at the server.
        while try await server.log().requests.count < 4 { try await Task.sleep(for: .milliseconds(20)) }
        task.cancel()
        do {
            _ = try await task.value
            XCTFail("a cancelled render must not finish")
        } catch {
            XCTAssertEqual(error as? MapError, .cancelled)
        }
    }

    func testStaticStyleDownloadsTheKeyedImageAndKeepsTheKeyOutOfTheCache() async throws {
        var settings = MapSettings.local(server, cache: cachePath)
        settings.style = .staticImage
        settings.staticMapURL = "\(server.baseURL)/static?center={lat},{lon}&key={key}"
        settings.staticMapKey = "SECRET-KEY"
        let image = try await MapRenderer(settings: settings).render(latitude: tokyo.latitude, longitude: tokyo.longitude)
        XCTAssertEqual(image.width, 320)
        XCTAssertEqual(image.height, 240)
        let decoded = try IndependentDecoder.decode(image.png)
        XCTAssertEqual([decoded.width, decoded.height], [320, 240])
        let request = try await server.log().requests[0]
        XCTAssertEqual((request["query"] as? [String: String])?["key"], "SECRET-KEY")
        XCTAssertEqual((request["query"] as? [String: String])?["center"], "35.681236,139.767125")
        let cacheBytes = try Data(contentsOf: URL(fileURLWithPath: cachePath))
        XCTAssertNil(cacheBytes.range(of: Data("SECRET-KEY".utf8)))
    }

    func testSettingsThatCannotWorkArePermanentErrorsBeforeAnyRequest() async throws {
        var settings = MapSettings.local(server, cache: nil)
        settings.style = .none
        await assertMapError(.disabled) { try await MapRenderer(settings: settings).render(latitude: 1, longitude: 2) }
        settings = .local(server, cache: nil, zoom: 20)
        await assertMapError(.invalidSettings("zoom 20 is outside 0…19 (map.zoom)")) {
            try await MapRenderer(settings: settings).render(latitude: 1, longitude: 2)
        }
        settings = .local(server, cache: nil)
        settings.style = .staticImage
        await assertMapError(.invalidSettings("map.style = static needs note.static_map_url")) {
            try await MapRenderer(settings: settings).render(latitude: 1, longitude: 2)
        }
        XCTAssertFalse(MapError.invalidSettings("x").isRetryable)
        let requests = try await server.log().requests.count
        XCTAssertEqual(requests, 0)
    }
}
