import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Capture
import Compose
import Outbox

/// Looks up the place a fix is at; the geocoder behind it may be slow or unreachable. Each
/// lookup keeps to its own time budget (`CachingGeocoder`: `geocoding.timeout`).
package protocol PlaceLookup: Sendable {
    func place(for fix: Fix) async throws -> Place
}

/// The address of a fix, the one way enlog gets it: `NominatimGeocoder` (Compose) behind a
/// `GeocodeCache` (Outbox, in the outbox's own file).
///
/// Positions are rounded to the cache's precision *before* asking the service, so every point
/// of a cell gets the cell's answer and the service never sees more precision than needed.
/// - fresh entry: answered from the cache, no request;
/// - no entry or a stale one: asks the service and stores its answer ("no address" included);
/// - the service fails (unreachable, timeout, HTTP error, rate limit): a stale entry is used
///   when there is one, else the error is thrown. A malformed reply is never stored.
/// A database failure is thrown as the outbox's `OutboxError`, never read as a service failure.
/// The time budget is applied once, by the request (`NominatimGeocoder.fetchReply`: the wait
/// for the shared rate limit included); the cache's reads and writes are GRDB's async calls,
/// off Swift's cooperative pool.
package final class CachingGeocoder: PlaceLookup {
    package let cache: GeocodeCache
    package let geocoder: NominatimGeocoder
    let now: @Sendable () -> Date

    package init(cache: GeocodeCache, geocoder: NominatimGeocoder, now: @escaping @Sendable () -> Date = { Date() }) {
        self.cache = cache
        self.geocoder = geocoder
        self.now = now
    }

    /// Cache and geocoder over the outbox's database.
    package convenience init(outbox: OutboxStore, configuration: NominatimConfiguration,
                            precision: Int = GeocodeCache.defaultPrecision,
                            timeToLive: TimeInterval = GeocodeCache.defaultTimeToLive) {
        let cache = GeocodeCache(outbox: outbox, precision: precision, timeToLive: timeToLive)
        self.init(cache: cache, geocoder: NominatimGeocoder(configuration: configuration, store: cache))
    }

    /// A geocoder configured from settings (`geocoding.timeout` its budget), caching in the
    /// outbox's own database file.
    package convenience init(config: Config, outbox: OutboxStore, environment: [String: String] = ProcessInfo.processInfo.environment) {
        let baseURL = config.string(.geocodingURL) ?? NominatimConfiguration.defaultBaseURL
        let configuration = NominatimConfiguration(
            baseURL: baseURL,
            language: config.string(.geocodingLanguage) ?? Self.language(from: environment),
            contact: config.string(.geocodingContact) ?? "",
            timeBudget: config.duration(.geocodingTimeout),
            minimumInterval: config.string(.geocodingInterval) == nil ? NominatimConfiguration.requestSpacing(for: baseURL)
                                                                      : config.duration(.geocodingInterval))
        self.init(outbox: outbox, configuration: configuration)
    }

    /// The configured geocoder, or nil when `geocoding.enabled` is off.
    package static func ifEnabled(config: Config, outbox: OutboxStore) -> CachingGeocoder? {
        config.boolean(.geocodingEnabled) ? CachingGeocoder(config: config, outbox: outbox) : nil
    }

    /// The place of a fix within the configured budget; `.noAddress` when there is none.
    package func place(for fix: Fix) async throws -> Place {
        let address = try await address(latitude: fix.latitude, longitude: fix.longitude)
        guard !address.isEmpty else { throw GeocodingError.noAddress }
        return Place(address: address.formatted, displayName: address.displayName)
    }

    package func address(latitude: Double, longitude: Double) async throws -> Address {
        try await address(latitude: latitude, longitude: longitude, timeBudget: geocoder.configuration.timeBudget)
    }

    /// As `address(latitude:longitude:)`, with this call's own time budget.
    package func address(latitude: Double, longitude: Double, timeBudget: Duration) async throws -> Address {
        let key = cache.key(latitude: latitude, longitude: longitude, language: geocoder.configuration.language)
        let cached = try await cache.entry(for: key, now: now())
        if let cached, !cached.isStale, let answer = Self.answer(cached.reply) {
            return try answer.get()
        }
        let body: [UInt8]
        do {
            body = try await geocoder.fetchReply(latitude: key.latitudeText, longitude: key.longitudeText,
                                                 timeBudget: timeBudget)
        } catch let error as GeocodingError {
            if let cached, let answer = Self.answer(cached.reply) {
                return try answer.get()
            }
            throw error
        }
        let result = Result { () throws(GeocodingError) -> Address in try NominatimReply.parse(body) }
        switch result {
        case .success, .failure(.noAddress):
            // Storing is best effort: the caller has its answer either way.
            try? await cache.store(body, for: key, fetchedAt: now())
        case .failure:
            break
        }
        return try result.get()
    }

    /// The cached answer only, stale or not, without any request: `nil` when nothing is cached;
    /// throws `.noAddress` when the service said there is no address there.
    /// `OutboxError` when the database fails.
    package func cachedAddress(latitude: Double, longitude: Double) async throws -> Address? {
        let key = cache.key(latitude: latitude, longitude: longitude, language: geocoder.configuration.language)
        guard let entry = try await cache.entry(for: key, now: now()), let answer = Self.answer(entry.reply) else { return nil }
        return try answer.get()
    }

    /// The address or "no address" stored in `reply`; `nil` when it cannot be read.
    private static func answer(_ reply: [UInt8]) -> Result<Address, GeocodingError>? {
        do {
            return .success(try NominatimReply.parse(reply))
        } catch .noAddress {
            return .failure(.noAddress)
        } catch {
            return nil
        }
    }

    /// `LANG=ja_JP.UTF-8` → `ja`; POSIX and unset locales → `en`.
    static func language(from environment: [String: String]) -> String {
        let locale = environment["LC_ALL"] ?? environment["LC_MESSAGES"] ?? environment["LANG"] ?? ""
        let code = locale.prefix { $0.isLetter }.lowercased()
        return code.isEmpty || code == "c" || code == "posix" ? "en" : code
    }
}
