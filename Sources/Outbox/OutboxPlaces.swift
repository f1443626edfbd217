import Foundation
import GRDB
import Support
import Configuration
import Capture

extension OutboxSchema {
    /// `place`: where someone stays, with the name it goes by and where that name came from, so a
    /// name given once is used for every later visit (`enlog places`, `enlog timeline`).
    static let placesMigration = OutboxMigration("v9-places") { db in
        try db.create(table: "place") { t in
            t.autoIncrementedPrimaryKey("id")
            t.column("latitude", .double).notNull().check { $0 >= -90 && $0 <= 90 }
            t.column("longitude", .double).notNull().check { $0 >= -180 && $0 <= 180 }
            t.column("radius", .double).notNull().check { $0 > 0 }
            t.column("name", .text)
            t.column("nameSource", .text).check(sql: "nameSource IN ('user', 'google', 'geocoder')")
            t.column("createdAt", .datetime).notNull()
        }
    }
}

extension OutboxSchema {
    /// A place's name may come from an import's address (`nameSource` 'address'), and the
    /// placeholder labels earlier versions took for names from Google's kinds of place
    /// ("Location", "Address", "Unknown") are names no more: those places are unnamed again, for
    /// the import's address or the geocoder to name. SQLite cannot change a CHECK constraint:
    /// the table is made anew with the rows it had.
    static let placeNameSourcesMigration = OutboxMigration("day-names-place-sources") { db in
        try db.create(table: "placeNamedBySource") { t in
            t.autoIncrementedPrimaryKey("id")
            t.column("latitude", .double).notNull().check { $0 >= -90 && $0 <= 90 }
            t.column("longitude", .double).notNull().check { $0 >= -180 && $0 <= 180 }
            t.column("radius", .double).notNull().check { $0 > 0 }
            t.column("name", .text)
            t.column("nameSource", .text).check(sql: "nameSource IN ('user', 'google', 'address', 'geocoder')")
            t.column("createdAt", .datetime).notNull()
        }
        try db.execute(sql: """
            INSERT INTO placeNamedBySource (id, latitude, longitude, radius, name, nameSource, createdAt)
            SELECT id, latitude, longitude, radius, name, nameSource, createdAt FROM place
            """)
        try db.drop(table: "place")
        try db.rename(table: "placeNamedBySource", to: "place")
        let named = try Row.fetchAll(db, sql: "SELECT id, name FROM place WHERE nameSource = 'google' AND name IS NOT NULL")
        for row in named where VisitNames.isPlaceholder(row["name"] as String) {
            try db.execute(sql: "UPDATE place SET name = NULL, nameSource = NULL WHERE id = ?", arguments: [row["id"] as Int64])
        }
    }
}

/// A place someone stays at: a centre, a radius, and a name with where it came from.
package struct PlaceRecord: Codable, Sendable, Equatable, Identifiable, FetchableRecord, MutablePersistableRecord, StoredDates {
    package enum NameSource: String, Codable, Sendable, CaseIterable {
        /// `enlog places name` or `add`: never replaced by anything else.
        case user
        /// An import's own name for the place: a visit's name, or its label (Home, Work).
        case google
        /// An import's address for the place, where it gives no name (Google's searched
        /// addresses and private labels).
        case address
        /// The geocoder's most specific name for the centre.
        case geocoder

        /// Whether a name from `self` may replace one from `other`.
        package func outranks(_ other: NameSource?) -> Bool {
            guard let other else { return true }
            let order: [NameSource] = [.geocoder, .address, .google, .user]
            return order.firstIndex(of: self)! > order.firstIndex(of: other)!
        }

        /// Where the name came from, as `places` says it.
        package var description: String {
            switch self {
            case .user: return "yours"
            case .google: return "the import's name"
            case .address: return "the import's address"
            case .geocoder: return "the geocoder's"
            }
        }
    }

    package static let databaseTableName = "place"

    package var id: Int64?
    package var latitude: Double
    package var longitude: Double
    package var radius: Double
    package var name: String?
    package var nameSource: NameSource?
    package var createdAt: Date

    package init(latitude: Double, longitude: Double, radius: Double, name: String? = nil, nameSource: NameSource? = nil,
                createdAt: Date = Date()) {
        self.latitude = latitude
        self.longitude = longitude
        self.radius = radius
        self.name = name
        self.nameSource = name == nil ? nil : nameSource
        self.createdAt = createdAt
    }

    package mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

extension OutboxStore {
    package func places() async throws(OutboxError) -> [PlaceRecord] {
        // A place holding a value of another type is left out with a warning.
        try await readSkipping { db, unreadable in
            try Self.readableRecords(PlaceRecord.order(Column("id")), db, unreadable: &unreadable)
        }
    }

    @discardableResult
    package func addPlace(_ place: PlaceRecord) async throws(OutboxError) -> PlaceRecord {
        try await write { db in
            var place = place
            try place.insert(db)
            return place
        }
    }

    /// The name of the user-named place whose radius holds the position (the nearest when several
    /// do): the one name a note carries in `NoteAttributes.placeName` whatever `note.place_name` says.
    package func userPlaceName(latitude: Double, longitude: Double) async throws(OutboxError) -> String? {
        try await readSkipping { db, unreadable in
            try Self.readableRecords(PlaceRecord.filter(Column("nameSource") == PlaceRecord.NameSource.user.rawValue), db,
                                     unreadable: &unreadable)
                .map { ($0, Fix.metres($0.latitude, $0.longitude, latitude, longitude)) }
                .filter { $0.1 <= $0.0.radius }
                .min { $0.1 < $1.1 }?.0.name
        }
    }

    /// Adds `places` in one transaction, returning them with their ids.
    package func addPlaces(_ places: [PlaceRecord]) async throws(OutboxError) -> [PlaceRecord] {
        try await write { db in
            try places.map { place in
                var place = place
                try place.insert(db)
                return place
            }
        }
    }

    /// Names place `id` when `source` outranks the name it has (a user's name is kept against
    /// Google's and the geocoder's). Returns the place as it now is; nil when there is no such place.
    @discardableResult
    package func namePlace(id: Int64, name: String, source: PlaceRecord.NameSource) async throws(OutboxError) -> PlaceRecord? {
        try await write { db in
            guard var place = try PlaceRecord.fetchOne(db, id: id) else { return nil }
            guard source == .user || source.outranks(place.nameSource) || place.name == nil else { return place }
            place.name = name
            place.nameSource = source
            try place.update(db)
            return place
        }
    }

    /// Folds place `absorbed` into `kept`: one place, centred between them, wide enough for both,
    /// named by the better-sourced name. Nil when either is missing.
    package func mergePlaces(kept: Int64, absorbed: Int64) async throws(OutboxError) -> PlaceRecord? {
        try await write { db in
            guard kept != absorbed, var place = try PlaceRecord.fetchOne(db, id: kept),
                  let other = try PlaceRecord.fetchOne(db, id: absorbed) else { return nil }
            let latitude = (place.latitude + other.latitude) / 2, longitude = (place.longitude + other.longitude) / 2
            let apart = Fix.metres(place.latitude, place.longitude, other.latitude, other.longitude)
            place.radius = max(place.radius, other.radius) + apart / 2
            place.latitude = latitude
            place.longitude = longitude
            if let name = other.name, let source = other.nameSource, place.name == nil || source.outranks(place.nameSource) {
                place.name = name
                place.nameSource = source
            }
            try place.update(db)
            _ = try PlaceRecord.deleteOne(db, id: absorbed)
            return place
        }
    }

    /// Forgets place `id`; false when there was none.
    package func forgetPlace(id: Int64) async throws(OutboxError) -> Bool {
        try await write { db in try PlaceRecord.deleteOne(db, id: id) }
    }
}
