import CCairo
import Foundation
import XCTest
@testable import Compose

/// The speed-ups of a warm map, each checked for the picture it must still make: the finished
/// map reused from the disk cache (never when its tiles changed), libpng's encoder (the pixels
/// cairo drew, read back by Pillow), and the attribution's font loaded from its file.
final class RenderedMapTests: TileServerTestCase {
    let paris = (latitude: 48.8584, longitude: 2.2945)

    var tiles: Int { MapLayout(latitude: paris.latitude, longitude: paris.longitude, zoom: 16, width: 600, height: 400).tiles.count }

    func render(cache: String?, latitude: Double? = nil, accuracy: Double? = 20) async throws -> MapImage {
        try await MapRenderer.renderAsAProcess(.local(server, cache: cache), latitude: latitude ?? paris.latitude,
                                               longitude: paris.longitude, accuracy: accuracy)
    }

    func testTheSamePlaceAgainReusesTheFinishedMapWhichIsWhatDrawingItMakes() async throws {
        let first = try await render(cache: cachePath)
        XCTAssertFalse(first.statistics.renderedFromCache)
        // A new process (new renderer), a fix 10 cm away: the same pixel, the same picture, from disk.
        let again = try await render(cache: cachePath, latitude: paris.latitude + 0.000001)
        XCTAssertTrue(again.statistics.renderedFromCache)
        XCTAssertEqual(again.statistics.fromDisk, tiles)
        XCTAssertEqual(again.png, first.png)
        XCTAssertEqual(again.latitude, paris.latitude + 0.000001, "the resource carries the fix's own position")
        // What the cache served is exactly what drawing makes: a renderer without a disk cache.
        let drawn = try await render(cache: nil)
        XCTAssertFalse(drawn.statistics.renderedFromCache)
        XCTAssertEqual(drawn.md5, first.md5)
        // Another accuracy circle or another pixel is another picture, drawn anew.
        let otherCircle = try await render(cache: cachePath, accuracy: 60)
        XCTAssertFalse(otherCircle.statistics.renderedFromCache)
        XCTAssertNotEqual(otherCircle.md5, first.md5)
        let otherPixel = try await render(cache: cachePath, latitude: paris.latitude + 0.0001)
        XCTAssertFalse(otherPixel.statistics.renderedFromCache)
        let requests = try await server.log().requests.count
        XCTAssertEqual(requests, 2 * tiles, "only the first map and the one without a disk cache asked the server")
    }

    func testTilesRevalidatedIntoNewBytesNeverServeTheOldMap() async throws {
        try await server.configure("max_age=0")
        let old = try await render(cache: cachePath)
        // Confirmed unchanged (304): the finished map is still the right one.
        let confirmed = try await render(cache: cachePath)
        XCTAssertEqual(confirmed.statistics.revalidated, tiles)
        XCTAssertTrue(confirmed.statistics.renderedFromCache)
        XCTAssertEqual(confirmed.png, old.png)

        // The map was edited: revalidation brings new tiles, and the picture is drawn from them.
        try await server.configure("edition=1")
        let edited = try await render(cache: cachePath)
        XCTAssertEqual(edited.statistics.downloaded, tiles, "the server answered 200 with new bytes")
        XCTAssertFalse(edited.statistics.renderedFromCache)
        XCTAssertNotEqual(edited.md5, old.md5)
        let fresh = try await render(cache: nil)
        XCTAssertEqual(edited.md5, fresh.md5, "the same picture as a renderer that never saw the old tiles")
        let log = try await server.log()
        let statuses = log.statuses.suffix(2 * tiles)
        XCTAssertEqual(Array(statuses.prefix(tiles)), Array(repeating: 200, count: tiles), "revalidations answered with the new edition")
    }

    /// The canvas through libpng and through cairo's own writer: Pillow reads the same pixels from
    /// both, at the canvas's size, for widths whose rows are padded and not.
    func testLibpngEncoderWritesThePixelsCairoDrew() throws {
        for (width, height) in [(600, 400), (333, 257), (16, 16)] {
            let canvas = try MapCanvas(width: width, height: height)
            canvas.drawAccuracy(x: Double(width) / 2, y: Double(height) / 2, radius: Double(min(width, height)) / 3)
            canvas.drawMarker(x: Double(width) / 2 + 0.5, y: Double(height) / 2 + 0.5)
            canvas.drawAttribution(try AttributionStrip.draw(MapSettings.attribution).strip)
            let ours = Data(try canvas.encoded())
            let cairos = Data(try CairoPNG.encodeWithCairo(canvas.image))
            XCTAssertNotEqual(ours, cairos, "two encoders, two files")
            let decoded = try IndependentDecoder.decode(ours)
            XCTAssertEqual([decoded.width, decoded.height], [width, height])
            XCTAssertEqual(decoded.mode, "RGB")
            XCTAssertEqual(decoded.pixels, try IndependentDecoder.decode(cairos).pixels, "\(width)×\(height)")
            if let check = try IndependentDecoder.pngcheck(ours) {
                XCTAssertEqual(check.status, 0, check.standardOutput)
            }
        }
    }

    func testTheAttributionIsDrawnWithTheFontFileFromItsPackage() throws {
        // fonts-dejavu-core is in scripts/apt-packages.txt: without it maps fall back to fontconfig.
        XCTAssertNotNil(AttributionStrip.fontFace(), "no font file among \(AttributionStrip.fontFiles)")
        XCTAssertTrue(try AttributionStrip.draw(MapSettings.attribution).fromFontFile)
        let canvas = try MapCanvas(width: 400, height: 100)
        canvas.drawAttribution(try AttributionStrip.draw(MapSettings.attribution).strip)
        let image = try XCTUnwrap(try? CairoPNG.decode(try canvas.encoded()).get())
        // Dark text on the light band at the bottom right (the canvas is light grey elsewhere).
        cairo_surface_flush(image.surface)
        let stride = Int(cairo_image_surface_get_stride(image.surface))
        let pixels = try XCTUnwrap(cairo_image_surface_get_data(image.surface))
        var dark = 0, darkOutside = 0
        for y in 0..<100 {
            for x in 0..<400 {
                let pixel = pixels.advanced(by: y * stride + x * 4).withMemoryRebound(to: UInt32.self, capacity: 1) { $0.pointee }
                let isDark = (pixel >> 16) & 0xFF < 128 && (pixel >> 8) & 0xFF < 128 && pixel & 0xFF < 128
                if isDark { if x >= 200 && y >= 80 { dark += 1 } else { darkOutside += 1 } }
            }
        }
        XCTAssertGreaterThan(dark, 60, "the attribution's glyphs")
        XCTAssertEqual(darkOutside, 0)
    }
}
