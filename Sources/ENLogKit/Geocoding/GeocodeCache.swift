import Foundation
import GRDB

/// Geocoding answers kept in SQLite, in the outbox's database file, plus the shared
/// "last request" time that keeps every enlog process on the machine within the service's
/// rate limit.
///
/// Answers are keyed by coordinates rounded to `precision` decimals (4 ≈ 11 m of latitude) and
/// by language, and stored as the service's raw reply, so that a better parser later applies
/// to old entries too. "No address here" answers are cached like any other. An entry older
/// than `timeToLive` is *stale*: not used when the service can be asked, still used when it
/// cannot (see `CachingGeocoder`).
public struct GeocodeCache: Sendable {
    public let writer: any DatabaseWriter
    /// Decimals kept of each coordinate, 0…7.
    public let precision: Int
    public let timeToLive: TimeInterval

    public static let defaultPrecision = 4
    public static let defaultTimeToLive: TimeInterval = 30 * 24 * 3600
    public static let migrationName = "v2-geocode-cache"

    /// - Parameter writer: the outbox's `DatabasePool` (or any writer whose migrator ran
    ///   `registerMigrations`).
    public init(writer: any DatabaseWriter, precision: Int = GeocodeCache.defaultPrecision,
                timeToLive: TimeInterval = GeocodeCache.defaultTimeToLive) {
        self.writer = writer
        self.precision = min(max(precision, 0), 7)
        self.timeToLive = timeToLive
    }

    /// Adds the cache's tables to the outbox's migrator (append-only, like every migration).
    public static func registerMigrations(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration(migrationName) { db in
            try db.create(table: "geocodeCache") { t in
                // Coordinates × 10^precision, rounded: integers compare exactly.
                t.column("latitudeKey", .integer).notNull()
                t.column("longitudeKey", .integer).notNull()
                t.column("precision", .integer).notNull()
                t.column("language", .text).notNull()
                t.column("reply", .blob).notNull()
                t.column("fetchedAt", .datetime).notNull()
                t.primaryKey(["latitudeKey", "longitudeKey", "precision", "language"])
            }
            try db.create(index: "geocodeCache_on_fetchedAt", on: "geocodeCache", columns: ["fetchedAt"])
            // One row: when the latest request to the service started (or is scheduled to start),
            // in seconds since 1970. Processes reserve their slot here before asking.
            try db.create(table: "geocodeRateLimit") { t in
                t.primaryKey("id", .integer).check { $0 == 1 }
                t.column("lastRequestAt", .double).notNull()
            }
            try db.execute(sql: "INSERT INTO geocodeRateLimit (id, lastRequestAt) VALUES (1, 0)")
        }
    }

    /// Where a position falls in the cache.
    public struct Key: Sendable, Hashable {
        public let latitudeKey: Int64
        public let longitudeKey: Int64
        public let precision: Int
        public let language: String

        /// The rounded coordinates, which are also the ones sent to the service.
        public var latitude: Double { Double(latitudeKey) / Self.scale(precision) }
        public var longitude: Double { Double(longitudeKey) / Self.scale(precision) }
        /// The rounded coordinates as decimal text with `precision` decimals ("35.6812").
        public var latitudeText: String { String(format: "%.\(precision)f", latitude) }
        public var longitudeText: String { String(format: "%.\(precision)f", longitude) }

        static func scale(_ precision: Int) -> Double {
            var value = 1.0
            for _ in 0..<precision { value *= 10 }
            return value
        }
    }

    public func key(latitude: Double, longitude: Double, language: String) -> Key {
        let scale = Key.scale(precision)
        func rounded(_ value: Double, limit: Double) -> Int64 {
            let clamped = value.isFinite ? min(max(value, -limit), limit) : 0
            return Int64((clamped * scale).rounded(.toNearestOrAwayFromZero))
        }
        return Key(latitudeKey: rounded(latitude, limit: 90), longitudeKey: rounded(longitude, limit: 180),
                   precision: precision, language: Self.normalizedLanguage(language))
    }

    static func normalizedLanguage(_ language: String) -> String {
        language.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
    }

    public struct Entry: Sendable, Equatable {
        public let reply: [UInt8]
        public let fetchedAt: Date
        public let isStale: Bool
    }

    /// The stored answer for `key`, fresh or stale; `nil` when there is none.
    public func entry(for key: Key, now: Date = Date()) throws(GeocodingError) -> Entry? {
        let row = try run { try writer.read { db in
            try Row.fetchOne(db, sql: """
                SELECT reply, fetchedAt FROM geocodeCache
                WHERE latitudeKey = ? AND longitudeKey = ? AND precision = ? AND language = ?
                """, arguments: [key.latitudeKey, key.longitudeKey, key.precision, key.language])
        } }
        guard let row, let fetchedAt = row["fetchedAt"] as Date? else { return nil }
        let reply: Data = row["reply"]
        let age = now.timeIntervalSince(fetchedAt)
        return Entry(reply: [UInt8](reply), fetchedAt: fetchedAt, isStale: age > timeToLive || age < -timeToLive)
    }

    /// Stores (or replaces) the service's raw reply for `key`.
    public func store(_ reply: [UInt8], for key: Key, fetchedAt: Date = Date()) throws(GeocodingError) {
        try run { try writer.write { db in
            try db.execute(sql: """
                INSERT OR REPLACE INTO geocodeCache (latitudeKey, longitudeKey, precision, language, reply, fetchedAt)
                VALUES (?, ?, ?, ?, ?, ?)
                """, arguments: [key.latitudeKey, key.longitudeKey, key.precision, key.language,
                                 Data(reply), fetchedAt])
        } }
    }

    /// Deletes entries older than the time to live; returns how many.
    @discardableResult
    public func removeExpired(now: Date = Date()) throws(GeocodingError) -> Int {
        try run { try writer.write { db in
            try db.execute(sql: "DELETE FROM geocodeCache WHERE fetchedAt < ?",
                           arguments: [now.addingTimeInterval(-timeToLive)])
            return db.changesCount
        } }
    }

    /// The latest reserved slot and the wall time it was reserved at (`v3-geocode-slot-clock`).
    static let slotClockMigrationName = "v3-geocode-slot-clock"

    /// Adds `reservedAt` to the shared slot; registered after every earlier migration of the file.
    public static func registerSlotClockMigration(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration(slotClockMigrationName) { db in
            try db.alter(table: "geocodeRateLimit") { t in
                t.add(column: "reservedAt", .double).notNull().defaults(to: 0)
            }
        }
    }

    /// Reserves the next request slot, shared by every enlog process using this database: the
    /// later of now and the latest slot already reserved plus `minimumInterval`. Returns the slot
    /// time; the caller waits until then before sending. N processes asking at once get now,
    /// now + 1 interval, …, now + (N − 1) intervals: a reservation is never discarded for lying
    /// ahead, however many processes queue.
    ///
    /// Throws `.rateLimited` (reserving nothing) when the slot would be later than `latestStart`.
    ///
    /// A clock set back: reservations run one at a time (an IMMEDIATE transaction) and read the
    /// clock inside it, so on a sane clock each one sees a time no earlier than the previous
    /// one's `reservedAt`. Seeing an earlier time means the wall clock went back; the stored slot
    /// was then `slot − reservedAt` ahead of its own clock, and that distance is carried over to
    /// the new clock as if no time had passed since (the cautious reading: never closer than the
    /// interval, and never a wait longer than the reserving process itself accepted, rather than
    /// an hour's block after the clock went back an hour).
    public func reserveRequestSlot(minimumInterval: TimeInterval, latestStart: Date,
                                   clock: () -> Date = { Date() }) throws(GeocodingError) -> Date {
        let outcome: Result<Double, GeocodingError> = try run {
            try writer.writeWithoutTransaction { db in
                // IMMEDIATE: take the write lock before reading, so two processes cannot both
                // read the same previous slot.
                var outcome: Result<Double, GeocodingError> = .success(0)
                try db.inTransaction(.immediate) {
                    let now = clock().timeIntervalSince1970
                    let row = try Row.fetchOne(db, sql: "SELECT lastRequestAt, reservedAt FROM geocodeRateLimit WHERE id = 1")
                    let latest = RequestSlot(start: row?["lastRequestAt"] ?? 0, reservedAt: row?["reservedAt"] ?? 0)
                    let slot = latest.next(after: now, interval: minimumInterval)
                    if slot > latestStart.timeIntervalSince1970 {
                        outcome = .failure(.rateLimited(waitSeconds: slot - now))
                        return .rollback
                    }
                    try db.execute(sql: "INSERT OR REPLACE INTO geocodeRateLimit (id, lastRequestAt, reservedAt) VALUES (1, ?, ?)",
                                   arguments: [slot, now])
                    outcome = .success(slot)
                    return .commit
                }
                return outcome
            }
        }
        return Date(timeIntervalSince1970: try outcome.get())
    }

    /// The latest reserved request slot, in seconds since 1970, and the wall time it was reserved at.
    struct RequestSlot: Equatable {
        var start: Double
        var reservedAt: Double

        /// The next free slot for a reservation made at `now` (see `reserveRequestSlot`).
        func next(after now: Double, interval: Double) -> Double {
            let latest = now < reservedAt ? now + max(0, start - reservedAt) : start
            return max(now, latest + interval)
        }
    }

    private func run<T>(_ body: () throws -> T) throws(GeocodingError) -> T {
        do {
            return try body()
        } catch let error as GeocodingError {
            throw error
        } catch let error as DatabaseError {
            throw .cache(AddressText.oneLine(error.message ?? "\(error.resultCode)") ?? "SQLite error")
        } catch {
            throw .cache(AddressText.oneLine("\(error)") ?? "error")
        }
    }
}
