import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Capture

/// One 256-pixel tile of the Web-Mercator pyramid (EPSG:3857, the "slippy map" scheme).
package struct TileID: Sendable, Hashable, CustomStringConvertible {
    package let zoom: Int
    package let x: Int
    package let y: Int

    package var description: String { "\(zoom)/\(x)/\(y)" }
}

/// Web-Mercator arithmetic in "world pixels": at zoom z the world is 256·2^z pixels square,
/// x growing east from the antimeridian, y growing south from the top edge (≈ 85.0511° N).
package enum WebMercator {
    package static let tileSize = 256
    /// The latitude where the projection's square ends: atan(sinh(π)).
    package static let maxLatitude = 85.051_128_779_806_59
    /// Equatorial circumference / 256: metres per pixel at zoom 0 on the equator.
    static let metresPerPixelAtZoom0 = 2 * Double.pi * 6_378_137 / 256

    package static func worldSize(zoom: Int) -> Double { Double(tileSize) * pow(2, Double(zoom)) }

    /// A longitude in [-180, 180): 180 and -180 are the same meridian.
    package static func wrappedLongitude(_ longitude: Double) -> Double {
        let wrapped = (longitude + 180).truncatingRemainder(dividingBy: 360)
        return (wrapped < 0 ? wrapped + 360 : wrapped) - 180
    }

    /// A latitude the projection can show (it maps the poles to infinity).
    package static func clampedLatitude(_ latitude: Double) -> Double {
        min(max(latitude, -maxLatitude), maxLatitude)
    }

    /// The world-pixel position of a coordinate (latitude clamped, longitude wrapped).
    package static func pixel(latitude: Double, longitude: Double, zoom: Int) -> (x: Double, y: Double) {
        let size = worldSize(zoom: zoom)
        let lat = clampedLatitude(latitude) * .pi / 180
        let x = (wrappedLongitude(longitude) + 180) / 360 * size
        let y = (1 - log(tan(lat) + 1 / cos(lat)) / .pi) / 2 * size
        return (x, min(max(y, 0), size))
    }

    /// Ground metres one pixel covers at this latitude and zoom.
    package static func metresPerPixel(latitude: Double, zoom: Int) -> Double {
        metresPerPixelAtZoom0 * cos(clampedLatitude(latitude) * .pi / 180) / pow(2, Double(zoom))
    }

    /// A tile column taken around the world: column -1 is the last one, column 2^z the first.
    package static func wrappedColumn(_ x: Int, zoom: Int) -> Int {
        let count = 1 << zoom
        return ((x % count) + count) % count
    }
}

/// Where the tiles of one map go: the image's top-left corner in world pixels (whole pixels,
/// so tiles are painted unscaled and sharp) and each needed tile's place on the image.
package struct MapLayout: Sendable, Equatable {
    package struct Placement: Sendable, Equatable {
        /// The tile to fetch (column wrapped around the antimeridian).
        package let tile: TileID
        /// Its top-left corner on the image, pixels.
        package let originX: Int
        package let originY: Int
    }

    package let width: Int
    package let height: Int
    package let zoom: Int
    /// The position on the image, pixels from the top-left corner.
    package let centerX: Double
    package let centerY: Double
    package let placements: [Placement]

    package init(latitude: Double, longitude: Double, zoom: Int, width: Int, height: Int) {
        self.width = width
        self.height = height
        self.zoom = zoom
        let position = WebMercator.pixel(latitude: latitude, longitude: longitude, zoom: zoom)
        let left = Int(position.x.rounded(.down)) - width / 2
        let top = Int(position.y.rounded(.down)) - height / 2
        centerX = position.x - Double(left)
        centerY = position.y - Double(top)
        let size = WebMercator.tileSize
        let rows = 1 << zoom
        func floorDiv(_ a: Int, _ b: Int) -> Int { a >= 0 ? a / b : -((-a + b - 1) / b) }
        var placements: [Placement] = []
        for row in floorDiv(top, size)...floorDiv(top + height - 1, size) where (0..<rows).contains(row) {
            for column in floorDiv(left, size)...floorDiv(left + width - 1, size) {
                placements.append(Placement(tile: TileID(zoom: zoom, x: WebMercator.wrappedColumn(column, zoom: zoom), y: row),
                                            originX: column * size - left, originY: row * size - top))
            }
        }
        self.placements = placements
    }

    /// Each distinct tile once (at low zoom the same tile can appear side by side).
    package var tiles: [TileID] {
        var seen = Set<TileID>()
        return placements.map(\.tile).filter { seen.insert($0).inserted }
    }
}
