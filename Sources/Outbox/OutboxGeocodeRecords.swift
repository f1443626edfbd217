import Foundation
import GRDB
import Support
import EvernoteAPI
import Configuration
import Capture
import Compose

/// The geocode cache's rows, kept in the outbox's own database file and read and written only
/// through these methods (tables created by `OutboxSchema`'s migrations): `geocodeCache`, the
/// service's raw replies by rounded position and language, and `geocodeRateLimit`, the one row
/// holding the request slot every enlog process on the machine shares. Each is one short
/// transaction, awaited through GRDB's async API: the SQLite work (and its busy wait, up to
/// `busyTimeout`) runs on GRDB's own queue, never on Swift's small cooperative pool, where it
/// would hold up the map drawn beside the lookup. Every failure is an `OutboxError`.
extension OutboxStore {
    /// Where a reply is kept: coordinates × 10^precision, rounded, and a normalised language.
    package struct GeocodeCell: Sendable, Hashable {
        package var latitudeKey: Int64
        package var longitudeKey: Int64
        package var precision: Int
        package var language: String

        package init(latitudeKey: Int64, longitudeKey: Int64, precision: Int, language: String) {
            self.latitudeKey = latitudeKey
            self.longitudeKey = longitudeKey
            self.precision = precision
            self.language = language
        }
    }

    /// The stored reply for `cell` and when it was fetched, if any.
    package func geocodeReply(for cell: GeocodeCell) async throws(OutboxError) -> GeocodeReply? {
        try await read { db in
            guard let row = try Row.fetchOne(db, sql: """
                SELECT reply, fetchedAt FROM geocodeCache
                WHERE latitudeKey = ? AND longitudeKey = ? AND precision = ? AND language = ?
                """, arguments: [cell.latitudeKey, cell.longitudeKey, cell.precision, cell.language]),
                  // A value of another type (sqlite3 wrote it) is a miss, not a trap: the
                  // reply fetched again replaces the row.
                  let fetchedAt = Date.fromDatabaseValue(row["fetchedAt"] as DatabaseValue),
                  let reply = Data.fromDatabaseValue(row["reply"] as DatabaseValue) else { return nil }
            return GeocodeReply(reply: [UInt8](reply), fetchedAt: fetchedAt)
        }
    }

    /// A stored reply and when it was fetched.
    package struct GeocodeReply: Sendable {
        package var reply: [UInt8]
        package var fetchedAt: Date
    }

    /// Stores (or replaces) the reply for `cell`.
    package func storeGeocodeReply(_ reply: [UInt8], for cell: GeocodeCell, fetchedAt: Date) async throws(OutboxError) {
        try await write { db in
            try db.execute(sql: """
                INSERT OR REPLACE INTO geocodeCache (latitudeKey, longitudeKey, precision, language, reply, fetchedAt)
                VALUES (?, ?, ?, ?, ?, ?)
                """, arguments: [cell.latitudeKey, cell.longitudeKey, cell.precision, cell.language,
                                 Data(reply), fetchedAt])
        }
    }

    /// Deletes replies fetched before `date`; returns how many.
    package func removeGeocodeReplies(fetchedBefore date: Date) async throws(OutboxError) -> Int {
        try await write { db in
            try db.execute(sql: "DELETE FROM geocodeCache WHERE fetchedAt < ?", arguments: [date])
            return db.changesCount
        }
    }

    /// The shared request slot: when the latest request starts (or is scheduled to start) and
    /// the wall time that was decided at, both in seconds since 1970.
    package struct GeocodeSlot: Sendable, Equatable {
        package var start: Double
        package var reservedAt: Double
    }

    /// Reads the shared slot and replaces it, under the write lock from before the read (an
    /// IMMEDIATE transaction), so two processes never both build on the same previous slot.
    /// `next` gets the slot stored and the clock read inside the transaction, and returns the new
    /// slot's start; `accept` says whether the caller takes it (else the row stays as it was).
    /// Returns that start and the clock reading it was decided at.
    package func replaceGeocodeSlot(clock: @escaping @Sendable () -> Date,
                                   next: @escaping @Sendable (_ latest: GeocodeSlot, _ now: Double) -> Double,
                                   accept: @escaping @Sendable (_ start: Double) -> Bool)
    async throws(OutboxError) -> (start: Double, now: Double, taken: Bool) {
        try await writeWithoutTransaction { db in
            var outcome = (start: 0.0, now: 0.0, taken: false)
            try db.inTransaction(.immediate) {
                let now = clock().timeIntervalSince1970
                let row = try Row.fetchOne(db, sql: "SELECT lastRequestAt, reservedAt FROM geocodeRateLimit WHERE id = 1")
                // A value that is no number reads as no request yet (not a trap); this write replaces it.
                let number = { (column: String) in row.flatMap { Double.fromDatabaseValue($0[column] as DatabaseValue) } ?? 0 }
                let start = next(GeocodeSlot(start: number("lastRequestAt"), reservedAt: number("reservedAt")), now)
                outcome = (start, now, accept(start))
                guard outcome.taken else { return .rollback }
                try db.execute(sql: "INSERT OR REPLACE INTO geocodeRateLimit (id, lastRequestAt, reservedAt) VALUES (1, ?, ?)",
                               arguments: [start, now])
                return .commit
            }
            return outcome
        }
    }
}
