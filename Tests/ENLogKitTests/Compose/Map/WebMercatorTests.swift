import Foundation
import XCTest
@testable import Compose

/// Tile arithmetic against values computed independently (the OSM wiki's formulas, by hand).
final class WebMercatorTests: XCTestCase {
    func testTokyoStationFallsInItsKnownTileAtZoom16() {
        // x = floor((139.767125 + 180) / 360 · 2^16) = 58211; y = floor((1 − asinh(tan φ)/π) / 2 · 2^16) = 25806.
        let position = WebMercator.pixel(latitude: 35.681236, longitude: 139.767125, zoom: 16)
        XCTAssertEqual(Int(position.x) / 256, 58211)
        XCTAssertEqual(Int(position.y) / 256, 25806)
    }

    func testOriginAndEdges() {
        let size = WebMercator.worldSize(zoom: 3)
        let center = WebMercator.pixel(latitude: 0, longitude: 0, zoom: 3)
        XCTAssertEqual(center.x, size / 2, accuracy: 1e-9)
        XCTAssertEqual(center.y, size / 2, accuracy: 1e-9)
        XCTAssertEqual(WebMercator.pixel(latitude: 90, longitude: 0, zoom: 3).y, 0, accuracy: 1e-6, "poles are clamped to the square's edge")
        XCTAssertEqual(WebMercator.pixel(latitude: -90, longitude: 0, zoom: 3).y, size, accuracy: 1e-6)
        XCTAssertEqual(WebMercator.pixel(latitude: 0, longitude: 180, zoom: 3).x, 0, accuracy: 1e-9, "180 is -180")
    }

    func testLongitudeWrapsAndColumnsWrapAroundTheWorld() {
        XCTAssertEqual(WebMercator.wrappedLongitude(180), -180)
        XCTAssertEqual(WebMercator.wrappedLongitude(-181), 179, accuracy: 1e-9)
        XCTAssertEqual(WebMercator.wrappedLongitude(540), -180)
        XCTAssertEqual(WebMercator.wrappedColumn(-1, zoom: 4), 15)
        XCTAssertEqual(WebMercator.wrappedColumn(16, zoom: 4), 0)
        XCTAssertEqual(WebMercator.wrappedColumn(0, zoom: 0), 0)
    }

    func testMetresPerPixel() {
        XCTAssertEqual(WebMercator.metresPerPixel(latitude: 0, zoom: 0), 156_543.034, accuracy: 0.001)
        XCTAssertEqual(WebMercator.metresPerPixel(latitude: 60, zoom: 16), 156_543.034 / 2 / 65536, accuracy: 1e-6)
    }

    func testLayoutCentresThePositionAndCoversTheImageWithTiles() {
        let layout = MapLayout(latitude: 35.681236, longitude: 139.767125, zoom: 16, width: 600, height: 400)
        XCTAssertEqual(Int(layout.centerX), 300)
        XCTAssertEqual(Int(layout.centerY), 200)
        // Every image pixel is covered by exactly one placement.
        var covered = [Int](repeating: 0, count: 600 * 400)
        for placement in layout.placements {
            for y in max(0, placement.originY)..<min(400, placement.originY + 256) {
                for x in max(0, placement.originX)..<min(600, placement.originX + 256) { covered[y * 600 + x] += 1 }
            }
        }
        XCTAssertEqual(Set(covered), [1])
        XCTAssertEqual(layout.tiles.count, layout.placements.count)
    }

    func testLayoutAtTheAntimeridianUsesTilesFromBothEnds() {
        let layout = MapLayout(latitude: 10, longitude: 179.9999, zoom: 16, width: 600, height: 400)
        let columns = Set(layout.tiles.map(\.x))
        XCTAssertTrue(columns.contains(65535) && columns.contains(0), "\(columns.sorted())")
        XCTAssertTrue(columns.allSatisfy { (0..<65536).contains($0) })
    }

    func testLayoutNearThePoleSkipsRowsOutsideTheWorldAndAtZoom0RepeatsTheOneTile() {
        let pole = MapLayout(latitude: 89.9, longitude: 0, zoom: 2, width: 600, height: 400)
        XCTAssertTrue(pole.placements.allSatisfy { (0..<4).contains($0.tile.y) })
        XCTAssertEqual(Int(pole.centerY), 200, "the clamped position stays centred")
        let world = MapLayout(latitude: 0, longitude: 0, zoom: 0, width: 600, height: 400)
        XCTAssertEqual(world.tiles, [TileID(zoom: 0, x: 0, y: 0)])
        XCTAssertEqual(world.placements.count, 3)
    }
}
