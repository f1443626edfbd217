import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Capture
import Compose
import Outbox

/// `NominatimGeocoder` behind a `GeocodeCache`: the usual way to get an address.
///
/// Positions are rounded to the cache's precision *before* asking the service, so every point
/// of a cell gets the cell's answer and the service never sees more precision than needed.
/// - fresh entry: answered from the cache, no request;
/// - no entry or a stale one: asks the service and stores its answer ("no address" included);
/// - the service fails (unreachable, timeout, HTTP error, rate limit): a stale entry is used
///   when there is one, else the error is thrown. A malformed reply is never stored.
/// A database failure is thrown as the outbox's `OutboxError`, never read as a service failure.
public final class CachingGeocoder: ReverseGeocoder {
    public let cache: GeocodeCache
    public let geocoder: NominatimGeocoder
    let now: @Sendable () -> Date

    public init(cache: GeocodeCache, geocoder: NominatimGeocoder, now: @escaping @Sendable () -> Date = { Date() }) {
        self.cache = cache
        self.geocoder = geocoder
        self.now = now
    }

    /// Cache and geocoder over the outbox's database.
    public convenience init(outbox: OutboxStore, configuration: NominatimConfiguration,
                            precision: Int = GeocodeCache.defaultPrecision,
                            timeToLive: TimeInterval = GeocodeCache.defaultTimeToLive) {
        let cache = GeocodeCache(outbox: outbox, precision: precision, timeToLive: timeToLive)
        self.init(cache: cache, geocoder: NominatimGeocoder(configuration: configuration, store: cache))
    }

    public func address(latitude: Double, longitude: Double) async throws -> Address {
        try await address(latitude: latitude, longitude: longitude, timeBudget: geocoder.configuration.timeBudget)
    }

    /// As `address(latitude:longitude:)`, with this call's own time budget.
    public func address(latitude: Double, longitude: Double, timeBudget: Duration) async throws -> Address {
        let key = cache.key(latitude: latitude, longitude: longitude, language: geocoder.configuration.language)
        let cached = try cache.entry(for: key, now: now())
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
            try? cache.store(body, for: key, fetchedAt: now())
        case .failure:
            break
        }
        return try result.get()
    }

    /// The cached answer only, stale or not, without any request: `nil` when nothing is cached;
    /// throws `.noAddress` when the service said there is no address there.
    /// `OutboxError` when the database fails.
    public func cachedAddress(latitude: Double, longitude: Double) throws -> Address? {
        let key = cache.key(latitude: latitude, longitude: longitude, language: geocoder.configuration.language)
        guard let entry = try cache.entry(for: key, now: now()), let answer = Self.answer(entry.reply) else { return nil }
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
}
