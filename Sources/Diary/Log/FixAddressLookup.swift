import Foundation
import Support
import Capture
import Compose
import Outbox

/// The address side of a note (`LocationLogger`, step 1): what the note says of where the fix
/// is. It owns the outbox reads `log` makes before its insert, both GRDB async reads on the
/// run's one `OutboxStore` (off Swift's cooperative pool), made side by side:
/// - the name of a place the user named (`places name`), read whatever the geocoding settings;
/// - the geocoder's address (`CachingGeocoder`: its cache in the outbox, then the service within
///   `geocoding.timeout`), when an address is wanted now. Only on a cache miss does the cache
///   write: the shared request slot before asking, the reply after (`GeocodeCache`).
package struct FixAddressLookup: Sendable {
    package struct Found: Sendable, Equatable {
        /// The user's name for the place the fix is in: the title names it, and naming it is the
        /// consent Evernote asks for `placeName`.
        package var placeName: String?
        /// The geocoder's answer; nil when not asked or when it failed.
        package var place: Place?
        /// Why the lookup failed (unreachable, too slow, no address), when it was tried and did.
        package var lookupProblem: String?
    }

    private let outbox: OutboxStore
    /// nil: no address now (geocoding off, or `log --no-geocode`).
    private let geocoder: (any PlaceLookup)?

    package init(outbox: OutboxStore, geocoder: (any PlaceLookup)?) {
        self.outbox = outbox
        self.geocoder = geocoder
    }

    /// Whether an address is looked up now.
    package var looksUp: Bool { geocoder != nil }

    /// The user's name for the fix's place and the geocoder's address. Only a failing database
    /// throws; a failed lookup is kept in `lookupProblem`.
    package func address(of fix: Fix) async throws(OutboxError) -> Found {
        async let looked = geocoded(fix)
        let named = try await outbox.userPlaceName(latitude: fix.latitude, longitude: fix.longitude)
        let (place, problem) = await looked
        return Found(placeName: named, place: place, lookupProblem: problem)
    }

    private func geocoded(_ fix: Fix) async -> (Place?, problem: String?) {
        guard let geocoder else { return (nil, nil) }
        do {
            return (try await geocoder.place(for: fix), nil)
        } catch {
            return (nil, (error as? any ENLogError)?.reason ?? "\(error)")
        }
    }
}
