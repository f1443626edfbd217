import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Capture
import Compose
import Outbox

/// The outbox's geocoder as the diary sees it: an address for a fix, from the cache or Nominatim.
public struct GeocodedPlaces: PlaceLookup {
    let geocoder: CachingGeocoder
    let budget: Duration

    public init(geocoder: CachingGeocoder, budget: Duration) {
        self.geocoder = geocoder
        self.budget = budget
    }

    /// A geocoder configured from settings, caching in the outbox's own database file.
    public init(config: Config, outbox: OutboxStore, environment: [String: String] = ProcessInfo.processInfo.environment) {
        let budget = config.duration(.geocodingTimeout)
        let baseURL = config.string(.geocodingURL) ?? NominatimConfiguration.defaultBaseURL
        let configuration = NominatimConfiguration(
            baseURL: baseURL,
            language: config.string(.geocodingLanguage) ?? Self.language(from: environment),
            contact: config.string(.geocodingContact) ?? "",
            timeBudget: budget, minimumInterval: config.string(.geocodingInterval) == nil ? NominatimConfiguration.requestSpacing(for: baseURL)
                                                                                 : config.duration(.geocodingInterval))
        self.init(geocoder: CachingGeocoder(outbox: outbox, configuration: configuration), budget: budget)
    }

    /// The configured geocoder, or nil when `geocoding.enabled` is off.
    public static func ifEnabled(config: Config, outbox: OutboxStore) -> GeocodedPlaces? {
        config.boolean(.geocodingEnabled) ? GeocodedPlaces(config: config, outbox: outbox) : nil
    }

    public func place(for fix: Fix) async throws -> Place {
        let address = try await geocoder.address(latitude: fix.latitude, longitude: fix.longitude, timeBudget: budget)
        guard !address.isEmpty else { throw GeocodingError.noAddress }
        return Place(address: address.formatted, displayName: address.displayName)
    }

    /// `LANG=ja_JP.UTF-8` → `ja`; POSIX and unset locales → `en`.
    static func language(from environment: [String: String]) -> String {
        let locale = environment["LC_ALL"] ?? environment["LC_MESSAGES"] ?? environment["LANG"] ?? ""
        let code = locale.prefix { $0.isLetter }.lowercased()
        return code.isEmpty || code == "c" || code == "posix" ? "en" : code
    }
}
