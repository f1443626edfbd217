import Crypto
import Foundation
import Synchronization
import Support
import EvernoteAPI
import Configuration
import Network
import Capture

/// A rendered map: a PNG ready to become an Evernote resource.
package struct MapImage: Sendable, Equatable {
    package let png: Data
    package let width: Int
    package let height: Int
    /// MD5 of `png`, 32 lowercase hex digits: the resource's `bodyHash` and the `en-media` hash.
    package let md5: String
    /// The position the map shows (as given; the picture clamps it near the poles).
    package let latitude: Double
    package let longitude: Double
    /// Where its images came from.
    package let statistics: TileStatistics

    package static let mimeType = "image/png"

    /// MD5 as Evernote writes it in `en-media`: 32 lowercase hex digits.
    package static func md5Hex(_ bytes: some DataProtocol) -> String {
        HexText.lowercase(Insecure.MD5.hash(data: bytes))
    }

    /// The raw 16 bytes of the MD5 (EDAM `Data.bodyHash`).
    package static func md5Bytes(_ bytes: some DataProtocol) -> [UInt8] {
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
package final class MapRenderer: Sendable {
    package let settings: MapSettings
    let fetcher: TileFetcher
    /// The attribution strip once this process has it (drawn, or read from the disk cache).
    private let attribution = Mutex<AttributionStrip?>(nil)
    /// Finished maps being written to the disk cache, until `finishCaching`.
    private let caching = Mutex<[Task<Void, Never>]>([])

    /// - Parameter warn: told, once, when the disk cache cannot be used (maps still work).
    package init(settings: MapSettings, warn: @escaping @Sendable (String) -> Void = { _ in }) {
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
    package func render(_ fix: Fix, budget: Duration? = nil) async throws(MapError) -> MapImage {
        try await render(latitude: fix.latitude, longitude: fix.longitude, accuracy: fix.horizontalAccuracy, budget: budget)
    }

    /// Waits until every map drawn so far is in the disk cache. Drawing a map does not wait for
    /// its cache write (a few milliseconds, now and then a WAL checkpoint): callers overlap it
    /// with their own work and call this before they finish (a process that ends first only
    /// loses the cached copy).
    package func finishCaching() async {
        for writing in caching.withLock({ writes in defer { writes = [] }; return writes }) {
            await writing.value
        }
    }

    /// - Parameter accuracy: horizontal accuracy in metres, drawn as a circle when known.
    package func render(latitude: Double, longitude: Double, accuracy: Double? = nil,
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
        var statistics = TileStatistics()
        let bodies = try await tileBodies(layout, statistics: &statistics)

        // The marker at the middle of the pixel the position is in, the circle's radius in
        // whole pixels: a fix a metre away draws the same picture, so the finished map can be
        // cached and reused (a diary logs the same places again and again).
        let markerX = layout.centerX.rounded(.down) + 0.5, markerY = layout.centerY.rounded(.down) + 0.5
        var radius: Double?
        if let accuracy, accuracy.isFinite, accuracy > 0 {
            let pixels = accuracy / WebMercator.metresPerPixel(latitude: latitude, zoom: settings.zoom)
            // Beyond the image's diagonal the circle's edge is not in the picture anyway.
            radius = max(1, min(pixels, Double(layout.width + layout.height)).rounded())
        }
        let attributionKey = AttributionStrip.cacheKey(MapSettings.attribution)
        let key = RenderedMapKey.make(layout: layout, markerX: markerX, markerY: markerY, accuracyRadius: radius,
                                      attribution: attributionKey,
                                      bodies: layout.placements.map { placement in
                                          bodies[tileURL(placement.tile)] ?? []
                                      })
        if let png = await fetcher.renderedMap(key) {
            statistics.renderedFromCache = true
            return MapImage(png: png, width: layout.width, height: layout.height,
                            latitude: latitude, longitude: longitude, statistics: statistics)
        }

        let strip = try await attribution(key: attributionKey, statistics: &statistics)
        let circle = radius
        let png = try await drawn(layout, bodies: bodies, attribution: strip) { canvas in
            if let circle { canvas.drawAccuracy(x: markerX, y: markerY, radius: circle) }
            canvas.drawMarker(x: markerX, y: markerY)
        }
        // Written to the cache beside the caller's own work (storing the note), not before it.
        let fetcher = self.fetcher
        let writing = Task { await fetcher.storeRenderedMap(key, png) }
        caching.withLock { $0.append(writing) }
        return MapImage(png: png, width: layout.width, height: layout.height,
                        latitude: latitude, longitude: longitude, statistics: statistics)
    }

    func tileURL(_ tile: TileID) -> String { TileURLTemplate.url(settings.tileURL, zoom: tile.zoom, x: tile.x, y: tile.y) }

    /// The layout's tiles, through memory, disk and network.
    func tileBodies(_ layout: MapLayout, statistics: inout TileStatistics) async throws(MapError) -> [String: [UInt8]] {
        try await fetcher.images(layout.tiles.map(tileURL), statistics: &statistics)
    }

    /// The map's PNG: the layout's tiles decoded into a canvas, `decorate`'s drawing and the
    /// attribution on top, encoded. Tens of milliseconds of CPU on a thread of its own, never on
    /// Swift's small cooperative pool, where it would hold up every other task of the process
    /// (the note's address lookup, the time budget's own timer).
    func drawn(_ layout: MapLayout, bodies: [String: [UInt8]], attribution strip: AttributionStrip,
               decorate: @escaping @Sendable (MapCanvas) -> Void) async throws(MapError) -> [UInt8] {
        try await MapRenderer.offPool { () throws(MapError) -> [UInt8] in
            let canvas = try self.paintedCanvas(layout, bodies: bodies)
            decorate(canvas)
            canvas.drawAttribution(strip)
            return try canvas.encoded()
        }
    }

    /// Runs CPU work (decoding, drawing, encoding) on a thread of its own; a caller cancelled
    /// meanwhile (out of time) gets `.cancelled` at once and the work's result is dropped.
    static func offPool<T: Sendable>(_ work: @escaping @Sendable () throws(MapError) -> T) async throws(MapError) -> T {
        do {
            return try await BlockingCall.run("enlog.map", onCancel: .abandon) { _ in try work() }
        } catch let error as MapError {
            throw error
        } catch {
            throw .cancelled
        }
    }

    /// A canvas with the layout's tiles painted in: what every tiled map draws on.
    func paintedCanvas(_ layout: MapLayout, bodies: [String: [UInt8]]) throws(MapError) -> MapCanvas {
        let canvas = try MapCanvas(width: layout.width, height: layout.height)
        let placements = layout.placements
        do {
            try canvas.paintPNGs(placements.map { placement in
                MapCanvas.PNGPlacement(bytes: bodies[tileURL(placement.tile)] ?? [], x: placement.originX, y: placement.originY)
            }, size: WebMercator.tileSize)
        } catch {
            let tile = placements[error.index].tile
            throw .notAnImage(host: HTTPURLPolicy.describe(tileURL(tile)), detail: "tile \(tile): \(error.failure.detail)")
        }
        return canvas
    }

    /// The licence's attribution for a map (see `attributionStrip`).
    func attribution(key: String? = AttributionStrip.cacheKey(MapSettings.attribution),
                     statistics: inout TileStatistics) async throws(MapError) -> AttributionStrip {
        let attribution = try await attributionStrip(key: key)
        statistics.attributionFromCache = !attribution.drawn
        return attribution.strip
    }

    /// The attribution's pixels: from this process, else from the disk cache under `key`, else
    /// drawn (FreeType) and stored there for the next process.
    private func attributionStrip(key: String?) async throws(MapError) -> (strip: AttributionStrip, drawn: Bool) {
        if let strip = attribution.withLock({ $0 }) { return (strip, false) }
        let strip: AttributionStrip, drawn: Bool
        if let key, let stored = await fetcher.attributionStrip(key) {
            (strip, drawn) = (stored, false)
        } else {
            let made = try AttributionStrip.draw(MapSettings.attribution)
            (strip, drawn) = (made.strip, true)
            if let key, made.fromFontFile { await fetcher.storeAttributionStrip(key, strip) }
        }
        attribution.withLock { $0 = strip }
        return (strip, drawn)
    }

    /// The keyed service's own picture (its marker and attribution included), downloaded and
    /// re-encoded by cairo so that only a decodable PNG is ever attached.
    private func renderStatic(latitude: Double, longitude: Double) async throws(MapError) -> MapImage {
        let url = StaticMapURL.expand(settings.staticMapURL ?? "", latitude: String(format: "%.6f", latitude),
                                      longitude: String(format: "%.6f", longitude), key: settings.staticMapKey)
        var statistics = TileStatistics()
        let body = try await fetcher.images([url], statistics: &statistics)[url] ?? []
        let (png, width, height) = try await Self.offPool { () throws(MapError) -> ([UInt8], Int, Int) in
            switch CairoPNG.decode(body) {
            case .success(let image): return (try CairoPNG.encode(image), image.width, image.height)
            case .failure(let failure): throw .notAnImage(host: HTTPURLPolicy.describe(url), detail: failure.detail)
            }
        }
        return MapImage(png: png, width: width, height: height, latitude: latitude, longitude: longitude, statistics: statistics)
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

/// The disk cache's name for a finished map: everything its pixels depend on. The tiles enter
/// by the SHA-256 of their bytes, so a tile revalidated into new bytes gives a new key and the
/// old picture is never served again (it ages out of the cache); so does the attribution strip's
/// key (its text, drawing and font file). Bump `version` whenever the drawing changes (colours,
/// marker, encoder settings).
enum RenderedMapKey {
    /// 2: the attribution composited as a strip. 3: tiles decoded by libpng into the canvas,
    /// rows written unfiltered.
    static let version = 3

    static func make(layout: MapLayout, markerX: Double, markerY: Double, accuracyRadius: Double?,
                     attribution: String?, bodies: [[UInt8]]) -> String {
        var text = "enlog-map \(version) \(layout.width)x\(layout.height) z\(layout.zoom) marker \(markerX),\(markerY) "
            + "radius \(accuracyRadius.map { "\($0)" } ?? "-") \(MapSettings.attribution) \(attribution ?? "fontconfig") "
            + "level \(CairoPNG.zlibLevel)\n"
        for (placement, body) in zip(layout.placements, bodies) {
            text += "\(placement.tile) at \(placement.originX),\(placement.originY) \(HexText.lowercase(SHA256.hash(data: body)))\n"
        }
        return HexText.lowercase(SHA256.hash(data: Data(text.utf8)))
    }
}
