import CCairo
import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Capture

/// The view of a route: the largest zoom (up to `maxZoom`) at which the route's bounding box fits
/// the image inside a margin, and the box's centre. A route crossing the antimeridian is fitted
/// the long way round (the world at a low zoom), which is still a true picture.
package struct RouteFit: Sendable, Equatable {
    package let zoom: Int
    package let centerLatitude: Double
    package let centerLongitude: Double

    /// - Parameter margin: pixels kept free at every edge, so the line and its end markers are whole.
    package init(points: [(latitude: Double, longitude: Double)], width: Int, height: Int, maxZoom: Int, margin: Int = 24) {
        let pixels = points.map { WebMercator.pixel(latitude: $0.latitude, longitude: $0.longitude, zoom: 0) }
        let minX = pixels.map(\.x).min() ?? 128, maxX = pixels.map(\.x).max() ?? 128
        let minY = pixels.map(\.y).min() ?? 128, maxY = pixels.map(\.y).max() ?? 128
        let room = (x: Double(max(width - 2 * margin, 1)), y: Double(max(height - 2 * margin, 1)))
        var zoom = max(0, maxZoom)
        while zoom > 0 {
            let scale = pow(2, Double(zoom))
            if (maxX - minX) * scale <= room.x && (maxY - minY) * scale <= room.y { break }
            zoom -= 1
        }
        self.zoom = zoom
        let center = WebMercator.coordinate(x: (minX + maxX) / 2, y: (minY + maxY) / 2, zoom: 0)
        centerLatitude = center.latitude
        centerLongitude = center.longitude
    }
}

extension WebMercator {
    /// The coordinate at a world-pixel position: `pixel(latitude:longitude:zoom:)` inverted.
    package static func coordinate(x: Double, y: Double, zoom: Int) -> (latitude: Double, longitude: Double) {
        let size = worldSize(zoom: zoom)
        let longitude = x / size * 360 - 180
        let latitude = atan(sinh(.pi * (1 - 2 * y / size))) * 180 / .pi
        return (latitude, longitude)
    }
}

extension MapRenderer {
    /// The map of a route (a day's fixes, in order): tiles at the zoom that fits the whole route
    /// and its stays into `map.width` × `map.height`, never closer than `map.zoom`, the route
    /// drawn as a line with a green start and the usual red marker at its end, and a violet ring
    /// around each stay (no text: a name would hide the streets). Tiles only: the static-image
    /// service draws its own picture, on which enlog cannot place a line.
    package func renderRoute(_ fixes: [Fix], stays: [(latitude: Double, longitude: Double)] = [],
                            budget: Duration? = nil) async throws(MapError) -> MapImage {
        if settings.style == .none { throw .disabled }
        if settings.style == .staticImage {
            throw .invalidSettings("a route is drawn on tiles only (map.style = tiles), not on a static map image")
        }
        if let problem = settings.problem() { throw .invalidSettings(problem) }
        guard let last = fixes.last else { throw .invalidSettings("a route needs at least one position") }
        let fit = RouteFit(points: fixes.map { ($0.latitude, $0.longitude) } + stays, width: settings.width,
                           height: settings.height, maxZoom: settings.zoom)
        let layout = MapLayout(latitude: fit.centerLatitude, longitude: fit.centerLongitude, zoom: fit.zoom,
                               width: settings.width, height: settings.height)
        // Image position of a coordinate: its world pixel, shifted as the layout's centre is.
        let center = WebMercator.pixel(latitude: fit.centerLatitude, longitude: fit.centerLongitude, zoom: fit.zoom)
        let offset = (x: layout.centerX - center.x, y: layout.centerY - center.y)
        func onImage(_ latitude: Double, _ longitude: Double) -> (x: Double, y: Double) {
            let pixel = WebMercator.pixel(latitude: latitude, longitude: longitude, zoom: fit.zoom)
            return (x: pixel.x + offset.x, y: pixel.y + offset.y)
        }
        let points = fixes.map { onImage($0.latitude, $0.longitude) }
        let stayPoints = stays.map { onImage($0.latitude, $0.longitude) }
        return try await Self.within(budget ?? settings.timeBudget) { () async throws(MapError) -> MapImage in
            var statistics = TileStatistics()
            let bodies = try await self.tileBodies(layout, statistics: &statistics)
            let strip = try await self.attribution(statistics: &statistics)
            let png = try await self.drawn(layout, bodies: bodies, attribution: strip) { canvas in
                canvas.drawRoute(points)
                canvas.drawStart(x: points[0].x, y: points[0].y)
                canvas.drawMarker(x: points[points.count - 1].x, y: points[points.count - 1].y)
                for stay in stayPoints { canvas.drawStay(x: stay.x, y: stay.y) }
            }
            return MapImage(png: png, width: layout.width, height: layout.height,
                            latitude: last.latitude, longitude: last.longitude, statistics: statistics)
        }
    }
}

extension MapCanvas {
    /// The route's colour, sRGB bytes: the blue map apps draw routes in.
    static let routeColor: (red: UInt8, green: UInt8, blue: UInt8) = (0x1A, 0x5F, 0xD6)

    /// A polyline through `points` (image pixels): a white casing under a blue line, so it reads on
    /// any tile. Points less than a pixel from the last one drawn add nothing and are skipped.
    func drawRoute(_ points: [(x: Double, y: Double)]) {
        guard let first = points.first else { return }
        cairo_new_path(context)
        cairo_move_to(context, first.x, first.y)
        var last = first
        for point in points.dropFirst() where abs(point.x - last.x) >= 1 || abs(point.y - last.y) >= 1 {
            cairo_line_to(context, point.x, point.y)
            last = point
        }
        cairo_set_line_join(context, CAIRO_LINE_JOIN_ROUND)
        cairo_set_line_cap(context, CAIRO_LINE_CAP_ROUND)
        strokeOnCasing(Self.routeColor, width: 4, casing: 7)
    }

    /// Strokes the current path in `color` over a wider white casing, so it reads on any tile.
    private func strokeOnCasing(_ color: (red: UInt8, green: UInt8, blue: UInt8), width: Double, casing: Double) {
        cairo_set_source_rgba(context, 1, 1, 1, 0.9)
        cairo_set_line_width(context, casing)
        cairo_stroke_preserve(context)
        cairo_set_source_rgb(context, Double(color.red) / 255, Double(color.green) / 255, Double(color.blue) / 255)
        cairo_set_line_width(context, width)
        cairo_stroke(context)
    }

    /// A stay's colour, sRGB bytes: violet, apart from the route's blue, the start's green, the
    /// end's red and the greens, blues and beiges of map tiles.
    static let stayColor: (red: UInt8, green: UInt8, blue: UInt8) = (0x8E, 0x44, 0xAD)
    /// Wider than the start and end markers: a ring, not a disc, so the route, the start and the
    /// end stay visible inside it (most days start and end at a stay).
    static let stayRadius = 11.0

    /// Where someone stayed: a violet ring on a white casing.
    func drawStay(x: Double, y: Double) {
        cairo_new_path(context)
        cairo_arc(context, x, y, Self.stayRadius, 0, 2 * .pi)
        strokeOnCasing(Self.stayColor, width: 3.5, casing: 6)
    }

    /// Where the route began: a small green dot with a white ring.
    func drawStart(x: Double, y: Double) {
        cairo_new_path(context)
        cairo_arc(context, x, y, 6, 0, 2 * .pi)
        cairo_set_source_rgb(context, 0.18, 0.62, 0.27)
        cairo_fill_preserve(context)
        cairo_set_source_rgb(context, 1, 1, 1)
        cairo_set_line_width(context, 2)
        cairo_stroke(context)
    }
}
