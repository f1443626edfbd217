import Foundation
import Support
import Configuration
import Capture
import Compose
import Outbox

/// Stays as places whose names last: a stay within a known place's radius is that place; any
/// other stay makes a new place. Names come, in that order of precedence, from the user
/// (`enlog places name`, `add`), from an import's own name (Google's visit names, Home and Work),
/// from an import's address, or from the geocoder; a better name is never replaced by a worse
/// one. A placeholder (Google's "aliased location", "searched address", "unknown") is no name
/// (`VisitNames`): such a place takes its address, else the geocoder's name.
package struct PlaceBook: Sendable {
    let outbox: OutboxStore
    /// The radius of a place a stay makes, metres.
    let newPlaceRadius: Double
    /// The geocoder names new places; nil: they stay unnamed (geocoding off).
    let geocoder: CachingGeocoder?
    /// Whether new places and names are kept in the outbox; false for an outbox the user cannot
    /// write: the known places are told, a new one is shown unkept (no id) and unnamed but for an
    /// import's own name.
    let keeping: Bool
    /// At most this many geocoder lookups per run (one a second, as Nominatim asks): the rest are
    /// named on a later run, as a note's address is looked up later when offline.
    static let lookupsPerRun = 10

    package init(outbox: OutboxStore, newPlaceRadius: Double, geocoder: CachingGeocoder?, keeping: Bool = true) {
        self.outbox = outbox
        self.newPlaceRadius = newPlaceRadius
        self.geocoder = keeping ? geocoder : nil
        self.keeping = keeping
    }

    /// The place of each stay, in order, making and naming places as needed (the new places in
    /// one transaction, however many stays a span of years has).
    package func places(of stays: [StayDetector.Stay]) async throws -> [PlaceRecord] {
        var known = try await outbox.places()
        let stored = known.count
        var renamed: [Int: (name: String, source: PlaceRecord.NameSource)] = [:]
        var chosen: [Int] = []
        for stay in stays {
            let index: Int
            if let nearest = Self.nearest(to: stay, in: known) {
                index = nearest
            } else {
                known.append(PlaceRecord(latitude: stay.latitude, longitude: stay.longitude, radius: newPlaceRadius))
                index = known.count - 1
            }
            if stay.origin == .visit, let name = stay.name, !VisitNames.isPlaceholder(name) {
                let source: PlaceRecord.NameSource = stay.nameIsAddress ? .address : .google
                if source.outranks(known[index].nameSource) || known[index].name == nil {
                    known[index].name = name
                    known[index].nameSource = source
                    if index < stored { renamed[index] = (name, source) }
                }
            }
            chosen.append(index)
        }
        guard keeping else { return chosen.map { known[$0] } }
        if known.count > stored {
            let added = try await outbox.addPlaces(Array(known[stored...]))
            known.replaceSubrange(stored..., with: added)
        }
        for (index, named) in renamed {
            known[index] = try await outbox.namePlace(id: known[index].id!, name: named.name, source: named.source) ?? known[index]
        }
        var lookups = 0
        for index in Set(chosen).sorted() where known[index].name == nil {
            guard let geocoder, lookups < Self.lookupsPerRun else { break }
            lookups += 1
            guard let name = await Self.name(of: known[index], geocoder: geocoder),
                  let named = try await outbox.namePlace(id: known[index].id!, name: name, source: .geocoder) else { continue }
            known[index] = named
        }
        return chosen.map { known[$0] }
    }

    /// The index of the place whose radius holds the stay's centre, the nearest when several do.
    static func nearest(to stay: StayDetector.Stay, in places: [PlaceRecord]) -> Int? {
        places.indices.map { ($0, Fix.metres(places[$0].latitude, places[$0].longitude, stay.latitude, stay.longitude)) }
            .filter { $0.1 <= places[$0.0].radius }
            .min { $0.1 < $1.1 }?.0
    }

    /// The geocoder's most specific name for a place (a venue, else its street, else its
    /// district); nil offline, on any failure, or with no address: the place stays unnamed.
    static func name(of place: PlaceRecord, geocoder: CachingGeocoder) async -> String? {
        guard let address = try? await geocoder.address(latitude: place.latitude, longitude: place.longitude) else { return nil }
        let name = address.placeName ?? address.streetLine ?? address.suburb ?? address.city
        return name.flatMap { $0.isEmpty ? nil : $0 }
    }
}
