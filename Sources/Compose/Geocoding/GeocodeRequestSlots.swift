import Foundation

/// Where the geocoder reserves its turn to ask the service: a time shared by every enlog process
/// on the machine, so that together they stay within the service's rate limit. The outbox keeps
/// it (`GeocodeCache`); the geocoder sits below the outbox in the flow and sees only this.
package protocol GeocodeRequestSlots: Sendable {
    /// The time the next request may start, at least `minimumInterval` after the previous one,
    /// reserved for the caller. Throws `GeocodingError.rateLimited` when that would be after
    /// `latestStart`, and the store's own error when it fails.
    func reserveRequestSlot(minimumInterval: TimeInterval, latestStart: Date, clock: @escaping @Sendable () -> Date) async throws -> Date
}

extension NominatimConfiguration {
    /// The language as requests and cache keys carry it: trimmed, lowercase.
    package static func normalizedLanguage(_ language: String) -> String {
        language.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
    }
}
