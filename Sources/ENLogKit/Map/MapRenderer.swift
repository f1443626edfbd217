import Crypto
import Foundation

/// A rendered map: a PNG ready to become an Evernote resource.
public struct MapImage: Sendable, Equatable {
    public let png: Data
    public let width: Int
    public let height: Int
    /// MD5 of `png`, 32 lowercase hex digits: the resource's `bodyHash` and the `en-media` hash.
    public let md5: String
    /// The position the map shows (as given; the picture clamps it near the poles).
    public let latitude: Double
    public let longitude: Double
    /// Where its images came from.
    public let statistics: TileStatistics

    public static let mimeType = "image/png"

    /// MD5 as Evernote writes it in `en-media`: 32 lowercase hex digits.
    public static func md5Hex(_ bytes: some DataProtocol) -> String {
        HexText.lowercase(Insecure.MD5.hash(data: bytes))
    }

    /// The raw 16 bytes of the MD5 (EDAM `Data.bodyHash`).
    public static func md5Bytes(_ bytes: some DataProtocol) -> [UInt8] {
        Array(Insecure.MD5.hash(data: bytes))
    }

    init(png: [UInt8], width: Int, height: Int, latitude: Double, longitude: Double, statistics: TileStatistics) {
        self.png = Data(png)
        self.width = width
        self.height = height
        self.md5 = Self.md5Hex(png)
        self.latitude = latitude
        self.longitude = longitude
        self.statistics = statistics
    }
}

/// Makes the map image of a position: OSM-compatible raster tiles stitched with cairo, centred
/// on the position, with a marker, the accuracy circle and the tile licence's attribution
/// (`map.style = tiles`), or one image downloaded from the keyed static-map service (`static`).
///
/// Keep one renderer per process: its memory cache and HTTP connections serve every later map.
/// It never throws anything but `MapError`; `MapError.isRetryable` tells a caller whether to
/// keep the note's map pending (offline, server down, out of time) or give it up (settings).
public final class MapRenderer: Sendable {
    public let settings: MapSettings
    let fetcher: TileFetcher

    /// - Parameter warn: told, once, when the disk cache cannot be used (maps still work).
    public init(settings: MapSettings, warn: @escaping @Sendable (String) -> Void = { _ in }) {
        self.settings = settings
        let client = HTTPClient(configuration: HTTPConfiguration(
            connectTimeout: .seconds(10), totalTimeout: .seconds(30), userAgent: settings.userAgent,
            maxResponseBytes: 4 << 20, caFile: settings.caFile))
        let disk = settings.cachePath.flatMap { path in
            settings.cacheSizeBytes > 0 ? TileDiskCache(path: path, maxBytes: settings.cacheSizeBytes, warn: warn) : nil
        }
        fetcher = TileFetcher(client: client, disk: disk)
    }

    /// The map of a fix, within `budget` (default: `settings.timeBudget`). Cancelling the
    /// calling task stops its downloads; tiles already downloaded stay cached.
    public func render(_ fix: Fix, budget: Duration? = nil) async throws(MapError) -> MapImage {
        try await render(latitude: fix.latitude, longitude: fix.longitude, accuracy: fix.horizontalAccuracy, budget: budget)
    }

    /// - Parameter accuracy: horizontal accuracy in metres, drawn as a circle when known.
    public func render(latitude: Double, longitude: Double, accuracy: Double? = nil,
                       budget: Duration? = nil) async throws(MapError) -> MapImage {
        if settings.style == .none { throw .disabled }
        if let problem = settings.problem() { throw .invalidSettings(problem) }
        guard latitude.isFinite, longitude.isFinite, (-90...90).contains(latitude), (-180...180).contains(longitude) else {
            throw .invalidSettings("no map for the position \(latitude),\(longitude)")
        }
        let budget = budget ?? settings.timeBudget
        return try await Self.within(budget) { () async throws(MapError) -> MapImage in
            switch self.settings.style {
            case .staticImage:
                return try await self.renderStatic(latitude: latitude, longitude: longitude)
            default:
                return try await self.renderTiles(latitude: latitude, longitude: longitude, accuracy: accuracy)
            }
        }
    }

    private func renderTiles(latitude: Double, longitude: Double, accuracy: Double?) async throws(MapError) -> MapImage {
        let layout = MapLayout(latitude: latitude, longitude: longitude, zoom: settings.zoom,
                               width: settings.width, height: settings.height)
        let urls = layout.tiles.map { TileURLTemplate.url(settings.tileURL, zoom: $0.zoom, x: $0.x, y: $0.y) }
        var statistics = TileStatistics()
        let bodies = try await fetcher.images(urls, statistics: &statistics)

        let canvas = try MapCanvas(width: layout.width, height: layout.height)
        var decoded: [TileID: CairoImage] = [:]
        for placement in layout.placements {
            let tile = placement.tile
            if decoded[tile] == nil {
                let url = TileURLTemplate.url(settings.tileURL, zoom: tile.zoom, x: tile.x, y: tile.y)
                switch CairoPNG.decode(bodies[url] ?? []) {
                case .success(let image): decoded[tile] = image
                case .failure(let failure):
                    throw .notAnImage(host: HTTPURLPolicy.describe(url), detail: "tile \(tile): \(failure.detail)")
                }
            }
            canvas.paint(decoded[tile]!, x: placement.originX, y: placement.originY, size: WebMercator.tileSize)
        }
        if let accuracy, accuracy.isFinite, accuracy > 0 {
            let radius = accuracy / WebMercator.metresPerPixel(latitude: latitude, zoom: settings.zoom)
            // Beyond the image's diagonal the circle's edge is not in the picture anyway.
            let diagonal = Double(layout.width + layout.height)
            canvas.drawAccuracy(x: layout.centerX, y: layout.centerY, radius: min(radius, diagonal))
        }
        canvas.drawMarker(x: layout.centerX, y: layout.centerY)
        canvas.drawAttribution(MapSettings.attribution)
        return MapImage(png: try canvas.encoded(), width: layout.width, height: layout.height,
                        latitude: latitude, longitude: longitude, statistics: statistics)
    }

    /// The keyed service's own picture (its marker and attribution included), downloaded and
    /// re-encoded by cairo so that only a decodable PNG is ever attached.
    private func renderStatic(latitude: Double, longitude: Double) async throws(MapError) -> MapImage {
        let url = StaticMapURL.expand(settings.staticMapURL ?? "", latitude: String(format: "%.6f", latitude),
                                      longitude: String(format: "%.6f", longitude), key: settings.staticMapKey)
        var statistics = TileStatistics()
        let bodies = try await fetcher.images([url], statistics: &statistics)
        let image: CairoImage
        switch CairoPNG.decode(bodies[url] ?? []) {
        case .success(let decoded): image = decoded
        case .failure(let failure): throw .notAnImage(host: HTTPURLPolicy.describe(url), detail: failure.detail)
        }
        return MapImage(png: try CairoPNG.encode(image), width: image.width, height: image.height,
                        latitude: latitude, longitude: longitude, statistics: statistics)
    }

    /// Runs `operation` for at most `budget`: past it the operation is cancelled and the call
    /// fails with `.timedOut`; a cancelled caller gets `.cancelled`.
    static func within<T: Sendable>(_ budget: Duration,
                                    _ operation: @escaping @Sendable () async throws(MapError) -> T) async throws(MapError) -> T {
        do {
            return try await withThrowingTaskGroup(of: T?.self) { group in
                group.addTask { try await operation() }
                group.addTask {
                    try await Task.sleep(for: budget)
                    return nil
                }
                defer { group.cancelAll() }
                guard let first = try await group.next(), let value = first else {
                    throw MapError.timedOut(seconds: budget.secondsValue)
                }
                return value
            }
        } catch let error as MapError {
            if Task.isCancelled { throw .cancelled }
            throw error
        } catch {
            throw .cancelled
        }
    }
}
