import Foundation
import Support
import Configuration
import Compose
import Outbox

/// Stays as places whose names last: a stay within a known place's radius is that place; any
/// other stay makes a new place. Names come from the user (`enlog places name`, `add`), from an
/// import (Google's visit names, HOME/WORK labels) or from the geocoder, in that order of
/// precedence, and a better name is never replaced by a worse one.
public struct PlaceBook: Sendable {
    let outbox: OutboxStore
    /// The radius of a place a stay makes, metres.
    let newPlaceRadius: Double
    /// The geocoder names new places; nil: they stay unnamed (geocoding off).
    let geocoder: GeocodedPlaces?
    /// At most this many geocoder lookups per run (one a second, as Nominatim asks): the rest are
    /// named on a later run, as a note's address is looked up later when offline.
    static let lookupsPerRun = 10

    public init(outbox: OutboxStore, newPlaceRadius: Double, geocoder: GeocodedPlaces?) {
        self.outbox = outbox
        self.newPlaceRadius = newPlaceRadius
        self.geocoder = geocoder
    }

    /// The place of each stay, in order, making and naming places as needed.
    public func places(of stays: [StayDetector.Stay]) async throws -> [PlaceRecord] {
        var known = try await outbox.places()
        var result: [PlaceRecord] = []
        for stay in stays {
            var place: PlaceRecord
            if let nearest = Self.nearest(to: stay, in: known) {
                place = nearest
            } else {
                place = try await outbox.addPlace(PlaceRecord(latitude: stay.latitude, longitude: stay.longitude,
                                                              radius: newPlaceRadius))
                known.append(place)
            }
            if stay.origin == .visit, let name = stay.name, PlaceRecord.NameSource.google.outranks(place.nameSource) {
                place = try await outbox.namePlace(id: place.id!, name: name, source: .google) ?? place
                known[known.firstIndex { $0.id == place.id }!] = place
            }
            result.append(place)
        }
        var lookups = 0
        for index in result.indices where result[index].name == nil {
            guard let geocoder, lookups < Self.lookupsPerRun else { break }
            let id = result[index].id!
            if let named = known.first(where: { $0.id == id && $0.name != nil }) {
                result[index] = named
                continue
            }
            lookups += 1
            guard let name = await Self.name(of: result[index], geocoder: geocoder),
                  let named = try await outbox.namePlace(id: id, name: name, source: .geocoder) else { continue }
            known[known.firstIndex { $0.id == id }!] = named
            for other in result.indices where result[other].id == id { result[other] = named }
        }
        return result
    }

    /// The known place whose radius holds the stay's centre, the nearest when several do.
    static func nearest(to stay: StayDetector.Stay, in places: [PlaceRecord]) -> PlaceRecord? {
        places.map { ($0, PlaceGeometry.metres($0.latitude, $0.longitude, stay.latitude, stay.longitude)) }
            .filter { $0.1 <= $0.0.radius }
            .min { $0.1 < $1.1 }?.0
    }

    /// The geocoder's most specific name for a place (a venue, else its street, else its
    /// district); nil offline, on any failure, or with no address: the place stays unnamed.
    static func name(of place: PlaceRecord, geocoder: GeocodedPlaces) async -> String? {
        guard let address = try? await geocoder.geocoder.address(latitude: place.latitude, longitude: place.longitude,
                                                                 timeBudget: geocoder.budget) else { return nil }
        let name = address.placeName ?? address.streetLine ?? address.suburb ?? address.city
        return name.flatMap { $0.isEmpty ? nil : $0 }
    }
}
