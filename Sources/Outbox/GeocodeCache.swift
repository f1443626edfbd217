import Foundation
import Support
import EvernoteAPI
import Configuration
import Capture
import Compose

/// Geocoding answers kept in the outbox's database file (through `OutboxStore`, whose
/// migrations create the tables: `OutboxGeocodeRecords`), plus the shared
/// "last request" time that keeps every enlog process on the machine within the service's
/// rate limit.
///
/// Answers are keyed by coordinates rounded to `precision` decimals (4 ≈ 11 m of latitude) and
/// by language, and stored as the service's raw reply, so that a better parser later applies
/// to old entries too. "No address here" answers are cached like any other. An entry older
/// than `timeToLive` is *stale*: not used when the service can be asked, still used when it
/// cannot (see `CachingGeocoder`). A database failure is the outbox's own `OutboxError`.
package struct GeocodeCache: GeocodeRequestSlots {
    let outbox: OutboxStore
    /// Decimals kept of each coordinate, 0…7.
    package let precision: Int
    package let timeToLive: TimeInterval

    package static let defaultPrecision = 4
    package static let defaultTimeToLive: TimeInterval = 30 * 24 * 3600

    package init(outbox: OutboxStore, precision: Int = GeocodeCache.defaultPrecision,
                timeToLive: TimeInterval = GeocodeCache.defaultTimeToLive) {
        self.outbox = outbox
        self.precision = min(max(precision, 0), 7)
        self.timeToLive = timeToLive
    }

    /// Where a position falls in the cache.
    package struct Key: Sendable, Hashable {
        package let latitudeKey: Int64
        package let longitudeKey: Int64
        package let precision: Int
        package let language: String

        /// The rounded coordinates, which are also the ones sent to the service.
        package var latitude: Double { Double(latitudeKey) / Self.scale(precision) }
        package var longitude: Double { Double(longitudeKey) / Self.scale(precision) }
        /// The rounded coordinates as decimal text with `precision` decimals ("35.6812").
        package var latitudeText: String { String(format: "%.\(precision)f", latitude) }
        package var longitudeText: String { String(format: "%.\(precision)f", longitude) }

        /// The row it is kept in.
        var cell: OutboxStore.GeocodeCell {
            OutboxStore.GeocodeCell(latitudeKey: latitudeKey, longitudeKey: longitudeKey, precision: precision, language: language)
        }

        static func scale(_ precision: Int) -> Double {
            var value = 1.0
            for _ in 0..<precision { value *= 10 }
            return value
        }
    }

    package func key(latitude: Double, longitude: Double, language: String) -> Key {
        let scale = Key.scale(precision)
        func rounded(_ value: Double, limit: Double) -> Int64 {
            let clamped = value.isFinite ? min(max(value, -limit), limit) : 0
            return Int64((clamped * scale).rounded(.toNearestOrAwayFromZero))
        }
        return Key(latitudeKey: rounded(latitude, limit: 90), longitudeKey: rounded(longitude, limit: 180),
                   precision: precision, language: NominatimConfiguration.normalizedLanguage(language))
    }

    package struct Entry: Sendable, Equatable {
        package let reply: [UInt8]
        package let fetchedAt: Date
        package let isStale: Bool
    }

    /// The stored answer for `key`, fresh or stale; `nil` when there is none.
    package func entry(for key: Key, now: Date = Date()) async throws(OutboxError) -> Entry? {
        guard let stored = try await outbox.geocodeReply(for: key.cell) else { return nil }
        let age = now.timeIntervalSince(stored.fetchedAt)
        return Entry(reply: stored.reply, fetchedAt: stored.fetchedAt, isStale: age > timeToLive || age < -timeToLive)
    }

    /// Stores (or replaces) the service's raw reply for `key`.
    package func store(_ reply: [UInt8], for key: Key, fetchedAt: Date = Date()) async throws(OutboxError) {
        try await outbox.storeGeocodeReply(reply, for: key.cell, fetchedAt: fetchedAt)
    }

    /// Deletes entries older than the time to live; returns how many.
    @discardableResult
    package func removeExpired(now: Date = Date()) async throws(OutboxError) -> Int {
        try await outbox.removeGeocodeReplies(fetchedBefore: now.addingTimeInterval(-timeToLive))
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
    /// Throws `OutboxError` when the database fails.
    package func reserveRequestSlot(minimumInterval: TimeInterval, latestStart: Date,
                                   clock: @escaping @Sendable () -> Date = { Date() }) async throws -> Date {
        let latest = latestStart.timeIntervalSince1970
        let slot = try await outbox.replaceGeocodeSlot(clock: clock) { stored, now in
            RequestSlot(start: stored.start, reservedAt: stored.reservedAt).next(after: now, interval: minimumInterval)
        } accept: { start in start <= latest }
        guard slot.taken else { throw GeocodingError.rateLimited(waitSeconds: slot.start - slot.now) }
        return Date(timeIntervalSince1970: slot.start)
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
}
