import Crypto
import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Capture

/// Where the images a map needed came from.
package struct TileStatistics: Sendable, Equatable {
    package var fromMemory = 0
    package var fromDisk = 0
    package var downloaded = 0
    /// Expired copies the server confirmed with 304 Not Modified.
    package var revalidated = 0
    /// Expired copies used because the server could not be asked (offline, 5xx).
    package var staleUsed = 0
    /// The finished map came from the disk cache: its tiles' bytes, layout and drawing were
    /// those of a map made before, so nothing was decoded, drawn or encoded.
    package var renderedFromCache = false
    /// A picture drawn anew got the attribution's pixels from the disk cache (or from this
    /// renderer's earlier map): FreeType was not started for it.
    package var attributionFromCache = false

    package init() {}
}

/// Images by URL through memory → SQLite on disk → network, the order that asks the network
/// only for what no cache holds fresh. Downloads take one of `DownloadLimiter.perProcess`'s 3
/// places; a body is cached only once it has been decoded, so an error page never is.
final class TileFetcher: Sendable {
    let client: HTTPClient
    let memory: TileMemoryCache
    let disk: TileDiskCache?
    let limiter: DownloadLimiter
    let now: @Sendable () -> Date

    /// Freshness when the server says nothing (no Cache-Control max-age, no Expires).
    static let defaultFreshness: TimeInterval = 24 * 3600

    init(client: HTTPClient, memory: TileMemoryCache = TileMemoryCache(), disk: TileDiskCache?,
         limiter: DownloadLimiter = .perProcess, now: @escaping @Sendable () -> Date = { Date() }) {
        self.client = client
        self.memory = memory
        self.disk = disk
        self.limiter = limiter
        self.now = now
    }

    /// The cache key of a URL: its SHA-256, so keyed URLs leave no secret in the cache file.
    static func key(_ url: String) -> String {
        HexText.lowercase(SHA256.hash(data: Data(url.utf8)))
    }

    /// The bodies of `urls` (each a decodable PNG), fetched concurrently within the download bound.
    /// The first failure cancels the rest.
    func images(_ urls: [String], statistics: inout TileStatistics) async throws(MapError) -> [String: [UInt8]] {
        let at = now()
        var bodies: [String: [UInt8]] = [:]
        var stale: [String: CachedTile] = [:]
        var missing: [String] = []
        for url in urls {
            if let tile = memory.get(Self.key(url)) {
                if tile.isFresh(at: at) { bodies[url] = tile.body; statistics.fromMemory += 1; continue }
                stale[url] = tile
            }
            missing.append(url)
        }
        let missingKeys = missing.map(Self.key)
        let onDisk = await onDisk { $0.lookup(missingKeys, now: at) } ?? [:]
        var toFetch: [(url: String, cached: CachedTile?)] = []
        for url in missing {
            let key = Self.key(url)
            if let tile = onDisk[key] {
                memory.put(key, tile)
                if tile.isFresh(at: at) { bodies[url] = tile.body; statistics.fromDisk += 1; continue }
                if stale[url] == nil { stale[url] = tile }
            }
            toFetch.append((url, stale[url]))
        }
        guard !toFetch.isEmpty else { return bodies }

        do {
            try await withThrowingTaskGroup(of: (String, [UInt8], Outcome).self) { group in
                for (url, cached) in toFetch {
                    group.addTask { try await self.fetch(url, cached: cached) }
                }
                for try await (url, body, outcome) in group {
                    bodies[url] = body
                    switch outcome {
                    case .downloaded: statistics.downloaded += 1
                    case .revalidated: statistics.revalidated += 1
                    case .staleUsed: statistics.staleUsed += 1
                    }
                }
            }
        } catch let error as MapError {
            throw error
        } catch {
            throw Task.isCancelled || error is CancellationError ? .cancelled : .rendering("\(error)")
        }
        return bodies
    }

    enum Outcome: Sendable { case downloaded, revalidated, staleUsed }

    /// A finished map from the disk cache (nil without one).
    func renderedMap(_ key: String) async -> [UInt8]? {
        let at = now()
        return await onDisk { $0.renderedMap(key, now: at) } ?? nil
    }

    func storeRenderedMap(_ key: String, _ png: [UInt8]) async {
        let at = now()
        await onDisk { $0.storeRenderedMap(key, png, now: at) }
    }

    /// The attribution strip stored under `key` (nil without a disk cache or when none is stored).
    func attributionStrip(_ key: String) async -> AttributionStrip? {
        let at = now()
        return await onDisk { $0.attributionStrip(key, now: at) } ?? nil
    }

    func storeAttributionStrip(_ key: String, _ strip: AttributionStrip) async {
        let at = now()
        await onDisk { $0.storeAttributionStrip(key, strip, now: at) }
    }

    /// SQLite may wait for another process's write (busy timeout): on a thread of its own, never
    /// on the cooperative pool. nil without a disk cache.
    @discardableResult
    private func onDisk<T: Sendable>(_ work: @escaping @Sendable (TileDiskCache) -> T) async -> T? {
        guard let disk else { return nil }
        return await BlockingCall.run("enlog.tiles") { _ in work(disk) }
    }

    /// One image from the network: a conditional request when an expired copy has validators.
    private func fetch(_ url: String, cached: CachedTile?) async throws(MapError) -> (String, [UInt8], Outcome) {
        let key = Self.key(url)
        let host = HTTPURLPolicy.describe(url)
        var headers: [(name: String, value: String)] = [(name: "Accept", value: "image/png")]
        if let cached {
            if let etag = cached.etag { headers.append((name: "If-None-Match", value: etag)) }
            if let lastModified = cached.lastModified { headers.append((name: "If-Modified-Since", value: lastModified)) }
        }
        let response: HTTPResponse
        do {
            let client = self.client
            let request = HTTPRequest(url: url, headers: headers)
            response = try await limiter.withPermit { try await TileRedirects.send(request, with: client) }
        } catch let refusal as TileRedirects.Refusal {
            throw .refusedRedirect(host: host, detail: refusal.detail)
        } catch let error as HTTPError {
            switch error {
            case .cancelled: throw .cancelled
            case .insecureURL, .invalidURL, .caFileUnusable: throw .invalidSettings(error.reason)
            case _ where error.isBadReply: throw .notAnImage(host: host, detail: error.reason)
            default:
                if let cached { return (url, cached.body, .staleUsed) }
                throw .unreachable(host: host, reason: error.reason)
            }
        } catch {
            throw .cancelled
        }
        let at = now()
        switch response.status {
        case 304 where cached != nil:
            var refreshed = cached!
            refreshed.expiresAt = Self.expiry(response.headers, now: at)
            refreshed.etag = response.headers["etag"] ?? refreshed.etag
            refreshed.lastModified = response.headers["last-modified"] ?? refreshed.lastModified
            memory.put(key, refreshed)
            let stored = refreshed
            await onDisk { $0.refresh(key, stored, now: at) }
            return (url, refreshed.body, .revalidated)
        case 200:
            let body = response.body
            if let failure = try await MapRenderer.offPool({ () -> CairoPNG.DecodeFailure? in
                if case .failure(let failure) = CairoPNG.decode(body) { return failure }
                return nil
            }) {
                throw .notAnImage(host: host, detail: failure.detail)
            }
            let tile = CachedTile(body: response.body, etag: response.headers["etag"],
                                  lastModified: response.headers["last-modified"],
                                  expiresAt: Self.expiry(response.headers, now: at))
            if !Self.forbidsStoring(response.headers) {
                memory.put(key, tile)
                await onDisk { $0.store(key, tile, now: at) }
            }
            return (url, tile.body, .downloaded)
        case 500...599 where cached != nil, 429 where cached != nil:
            return (url, cached!.body, .staleUsed)
        default:
            throw .httpStatus(host: host, status: response.status)
        }
    }

    /// `Cache-Control: max-age` first (no-cache: at once), then `Expires` (taken relative to
    /// the server's `Date`, so a wrong local clock does not matter), else a day.
    static func expiry(_ headers: [String: String], now: Date) -> Date {
        if let cacheControl = headers["cache-control"] {
            for directive in cacheControl.split(separator: ",") {
                let part = directive.trimmingCharacters(in: .whitespaces).lowercased()
                if part == "no-cache" || part == "no-store" { return now }
                if part.hasPrefix("max-age="), let seconds = Int(part.dropFirst(8).trimmingCharacters(in: CharacterSet(charactersIn: "\""))) {
                    return now.addingTimeInterval(TimeInterval(max(0, seconds)))
                }
            }
        }
        if let expires = headers["expires"] {
            guard let expiresAt = httpDate(expires) else { return now }   // RFC 9111: invalid = already expired
            let serverNow = headers["date"].flatMap(httpDate) ?? now
            return now.addingTimeInterval(expiresAt.timeIntervalSince(serverNow))
        }
        return now.addingTimeInterval(defaultFreshness)
    }

    static func forbidsStoring(_ headers: [String: String]) -> Bool {
        headers["cache-control"]?.lowercased().split(separator: ",")
            .contains { $0.trimmingCharacters(in: .whitespaces) == "no-store" } ?? false
    }

    /// IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the form servers send.
    static func httpDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text.trimmingCharacters(in: .whitespaces))
    }
}
