import Foundation
import XCTest
@testable import Compose

/// The stays on a route map: a violet disc at each, read back from the PNG by Pillow.
final class RouteStaysTests: XCTestCase {
    /// Where a coordinate falls on a route map of `points` (fixes and stays), as WebMercator and
    /// the fit place it.
    static func projection(of points: [(latitude: Double, longitude: Double)], width: Int = 600, height: Int = 400,
                           maxZoom: Int = 16) -> @Sendable (Double, Double) -> (x: Double, y: Double) {
        let fit = RouteFit(points: points, width: width, height: height, maxZoom: maxZoom)
        let layout = MapLayout(latitude: fit.centerLatitude, longitude: fit.centerLongitude, zoom: fit.zoom, width: width, height: height)
        let center = WebMercator.pixel(latitude: fit.centerLatitude, longitude: fit.centerLongitude, zoom: fit.zoom)
        return { latitude, longitude in
            let pixel = WebMercator.pixel(latitude: latitude, longitude: longitude, zoom: fit.zoom)
            return (pixel.x - center.x + layout.centerX, pixel.y - center.y + layout.centerY)
        }
    }

    static func isStayColour(_ pixel: [Int]) -> Bool {
        let violet = MapCanvas.stayColor
        return abs(pixel[0] - Int(violet.red)) <= 3 && abs(pixel[1] - Int(violet.green)) <= 3 && abs(pixel[2] - Int(violet.blue)) <= 3
    }

    /// Whether the PNG has a stay's ring around each point: violet north, south, east and west of
    /// it on the ring, but where the route's line crosses (at most two of the four).
    static func ringed(_ png: Data, _ points: [(x: Double, y: Double)]) throws -> Bool {
        let radius = MapCanvas.stayRadius
        let compass = points.flatMap { point in
            [(point.x, point.y - radius), (point.x, point.y + radius), (point.x + radius, point.y), (point.x - radius, point.y)]
        }
        let pixels = try TrackPeer.pixels(png, at: compass.map { (x: $0.0, y: $0.1) })
        return stride(from: 0, to: pixels.count, by: 4).allSatisfy { first in
            pixels[first..<first + 4].filter(isStayColour).count >= 2
        }
    }

    /// A stay half-way along a drive and one a kilometre off it: both ringed, the map widened
    /// to hold the second, and the route still blue inside the ring and where no one stayed.
    func testEachStayIsMarkedWhereItIs() async throws {
        let server = try TileTestServer()
        defer { server.stop() }
        let track = GeneratedTrack(start: DigestTests.morning, legs: [.drive(metres: 3000, speed: 10)])
        let middle = track.fixes[track.fixes.count / 2]
        let stays = [(latitude: middle.latitude, longitude: middle.longitude),
                     (latitude: middle.latitude + 0.009, longitude: middle.longitude)]
        let image = try await MapRenderer(settings: .local(server, cache: nil)).renderRoute(track.fixes, stays: stays)
        let onImage = Self.projection(of: track.fixes.map { ($0.latitude, $0.longitude) } + stays)
        let marked = stays.map { onImage($0.latitude, $0.longitude) }
        for point in marked {
            XCTAssertTrue((0..<600.0).contains(point.x) && (0..<400.0).contains(point.y), "on the map: \(point)")
        }
        XCTAssertTrue(try Self.ringed(image.png, marked))
        let quarter = track.fixes[track.fixes.count / 4]
        let pixels = try TrackPeer.pixels(image.png, at: [marked[0], onImage(quarter.latitude, quarter.longitude)])
        let blue = MapCanvas.routeColor
        XCTAssertEqual(pixels, Array(repeating: [Int(blue.red), Int(blue.green), Int(blue.blue)], count: 2))
    }
}
