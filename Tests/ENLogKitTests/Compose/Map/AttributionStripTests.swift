import Foundation
import XCTest
@testable import Compose

/// The attribution's pixels kept in the tile cache: a new picture made with the cached strip is
/// the picture drawing the text makes, and a strip is only ever found under the name of the
/// font file and text it was drawn with.
final class AttributionStripTests: TileServerTestCase {
    let paris = (latitude: 48.8584, longitude: 2.2945)

    func render(cache: String?, accuracy: Double) async throws -> MapImage {
        try await MapRenderer.renderAsAProcess(.local(server, cache: cache), latitude: paris.latitude,
                                               longitude: paris.longitude, accuracy: accuracy)
    }

    func testANewPictureWithTheCachedStripIsThePictureDrawingTheTextMakes() async throws {
        let first = try await render(cache: cachePath, accuracy: 20)
        XCTAssertFalse(first.statistics.attributionFromCache, "an empty cache: the text is drawn")
        // Another process (a new renderer), another circle: a new picture, the strip from disk.
        let cached = try await render(cache: cachePath, accuracy: 60)
        XCTAssertFalse(cached.statistics.renderedFromCache)
        XCTAssertTrue(cached.statistics.attributionFromCache)
        // The same picture from a renderer without a disk cache, which draws the text with FreeType.
        let drawn = try await render(cache: nil, accuracy: 60)
        XCTAssertFalse(drawn.statistics.attributionFromCache)
        XCTAssertEqual(cached.md5, drawn.md5)
        // And read by an independent decoder: the same pixels, and the text is there (not blank).
        let ours = try IndependentDecoder.decode(cached.png), theirs = try IndependentDecoder.decode(drawn.png)
        XCTAssertEqual(ours.pixels, theirs.pixels)
        let stored = try XCTUnwrap(TileDiskCache(path: cachePath, maxBytes: 50 << 20, warn: { _ in })
            .attributionStrip(XCTUnwrap(AttributionStrip.cacheKey(MapSettings.attribution)), now: Date()))
        XCTAssertEqual(stored, try AttributionStrip.draw(MapSettings.attribution).strip, "stored pixel for pixel")
        XCTAssertTrue(stored.image.hasAlpha)
        XCTAssertGreaterThan(Set(stored.image.pixels).count, 16, "glyph edges in many shades")
    }

    func testTheStripsNameChangesWithTheFontFileAndTheText() throws {
        let font = try XCTUnwrap(AttributionStrip.fontFiles.first { FileManager.default.fileExists(atPath: $0) })
        let copy = directory.path("DejaVuSans.ttf")
        try FileManager.default.copyItem(atPath: font, toPath: copy)
        let text = MapSettings.attribution
        let original = try XCTUnwrap(AttributionStrip.cacheKey(text, fontFiles: [copy]))
        XCTAssertEqual(AttributionStrip.cacheKey(text, fontFiles: [copy]), original, "a name, not a random value")
        XCTAssertNotEqual(AttributionStrip.cacheKey(text + ".", fontFiles: [copy]), original, "other text")
        XCTAssertNotEqual(AttributionStrip.cacheKey(text), original, "another file")

        // The package updated in place: a new modification time.
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_600_000_000)], ofItemAtPath: copy)
        let touched = try XCTUnwrap(AttributionStrip.cacheKey(text, fontFiles: [copy]))
        XCTAssertNotEqual(touched, original)
        // Replaced by another file of the same size and time (a new inode).
        let replacement = directory.path("replacement.ttf")
        try FileManager.default.copyItem(atPath: copy, toPath: replacement)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_600_000_000)], ofItemAtPath: replacement)
        try FileManager.default.removeItem(atPath: copy)
        try FileManager.default.moveItem(atPath: replacement, toPath: copy)
        XCTAssertNotEqual(AttributionStrip.cacheKey(text, fontFiles: [copy]), touched)
        // No font file at all: fontconfig's choice, which no name can capture: nothing cached.
        try FileManager.default.removeItem(atPath: copy)
        XCTAssertNil(AttributionStrip.cacheKey(text, fontFiles: [copy]))
    }

    /// The renderer takes the strip stored under the current name, and only that one: a black
    /// strip stored under another text's name is never used; stored under the current name, it is
    /// (which shows the first check could fail).
    func testTheRendererUsesOnlyTheStripStoredUnderTheCurrentName() async throws {
        let disk = TileDiskCache(path: cachePath, maxBytes: 50 << 20, warn: { _ in })
        let drawn = try AttributionStrip.draw(MapSettings.attribution).strip.image
        let black = AttributionStrip(image: DecodedImage(width: drawn.width, height: drawn.height, hasAlpha: true,
                                                         pixels: [UInt8](repeating: 0, count: drawn.pixels.count).enumerated()
                                                             .map { $0.offset % 4 == 3 ? 0xFF : 0 }))
        let current = try XCTUnwrap(AttributionStrip.cacheKey(MapSettings.attribution))
        disk.storeAttributionStrip(try XCTUnwrap(AttributionStrip.cacheKey("© Some Other Map")), black, now: Date())
        let reference = try await render(cache: nil, accuracy: 20)

        let stale = try await render(cache: cachePath, accuracy: 20)
        XCTAssertFalse(stale.statistics.attributionFromCache)
        XCTAssertEqual(stale.md5, reference.md5)

        disk.storeAttributionStrip(current, black, now: Date())
        let poisoned = try await render(cache: cachePath, accuracy: 40)
        XCTAssertTrue(poisoned.statistics.attributionFromCache)
        let clean = try await render(cache: nil, accuracy: 40)
        XCTAssertNotEqual(poisoned.md5, clean.md5, "the black strip was composited")
    }
}
