import Foundation
import GRDB
import Support
import EvernoteAPI
import Configuration
import Capture
import Compose

/// What the sync engine remembers between runs, kept in the outbox's own database file and read
/// and written only through these methods (tables created by `OutboxSchema`'s migrations):
///
/// - `syncState` (key/value): `notBefore` — no Evernote call before this time (rate limit), with
///   the reason that set it.
/// - `syncNote` (one row per note that needs one, deleted with the note): `needsLookup` — an
///   earlier `createNote` for this note may have reached Evernote (timeout, lost connection,
///   unreadable reply), so the next attempt must look for it first; `addressTries` — failed
///   lookups of a deferred address.
/// - `syncAddress` (one row per NoteStore host): the `ip:port` a Thrift call last reached, so
///   that reachability can probe it and a sync can connect to it when DNS fails.
///
/// Every failure is an `OutboxError`, like any other use of the outbox.
extension OutboxStore {
    /// A rate limit in force: no Evernote call before `until`.
    package struct RateLimitHold: Sendable, Equatable, Codable {
        package var until: Date
        package var reason: String

        /// The longest wait a hold keeps: Evernote's rate limits are counted per hour, so no
        /// longer wait is real (a `rateLimitDuration` of 2147483647 s would hold every sync
        /// until 2094). Longer ones, stored or reported, are cut to this.
        package static let longest: TimeInterval = 3600

        package init(until: Date, reason: String) {
            self.until = until
            self.reason = reason
        }
    }

    /// The `ip:port` (IPv6 in brackets) last reached for NoteStore host `host`, if any.
    package func noteStoreAddress(host: String) async throws(OutboxError) -> String? {
        let key = host.lowercased()
        return try await read { db in
            try String.fetchOne(db, sql: "SELECT address FROM syncAddress WHERE host = ?", arguments: [key])
        }
    }

    /// Remembers `address` (`ip:port`) for NoteStore host `host`; a no-op write when unchanged.
    package func rememberNoteStoreAddress(_ address: String, host: String, now: Date = Date()) async throws(OutboxError) {
        let key = host.lowercased()
        try await write { db in
            try db.execute(sql: """
                INSERT INTO syncAddress (host, address, updatedAt) VALUES (?, ?, ?)
                ON CONFLICT(host) DO UPDATE SET address = excluded.address, updatedAt = excluded.updatedAt
                WHERE address != excluded.address
                """, arguments: [key, address, now])
        }
    }

    /// The persisted "no call before" time, if any (also when already past), never more than
    /// `RateLimitHold.longest` after it was set (a hold an older enlog stored for decades included).
    package func rateLimitHold() async throws(OutboxError) -> RateLimitHold? {
        try await readSkipping { db, unreadable in
            guard let row = try Row.fetchOne(db, sql: "SELECT value, date, updatedAt FROM syncState WHERE key = 'notBefore'"),
                  !(row["date"] as DatabaseValue).isNull else { return nil }
            // A date another program wrote that is no time: the hold is left out with a warning
            // (GRDB's row["date"] would trap), and the next rate limit stores a new one.
            guard let date = Date.fromDatabaseValue(row["date"] as DatabaseValue) else {
                unreadable.append(UnreadableRow(table: "syncState", id: nil,
                                                detail: "its notBefore date holds \((row["date"] as DatabaseValue).shown), which is not a time"))
                return nil
            }
            let set = Date.fromDatabaseValue(row["updatedAt"] as DatabaseValue)
            let until = set.map { min(date, $0.addingTimeInterval(RateLimitHold.longest)) } ?? date
            return RateLimitHold(until: until, reason: String.fromDatabaseValue(row["value"] as DatabaseValue) ?? "")
        }
    }

    package func setRateLimitHold(_ hold: RateLimitHold?, now: Date = Date()) async throws(OutboxError) {
        try await write { db in
            if let hold {
                try db.execute(sql: """
                    INSERT INTO syncState (key, value, date, updatedAt) VALUES ('notBefore', ?, ?, ?)
                    ON CONFLICT(key) DO UPDATE SET value = excluded.value, date = excluded.date, updatedAt = excluded.updatedAt
                    """, arguments: [hold.reason, hold.until, now])
            } else {
                try db.execute(sql: "DELETE FROM syncState WHERE key = 'notBefore'")
            }
        }
    }

    /// Removes the hold, one that ended or one the user chose to end (`queue retry`, signing in
    /// again), and makes due the notes a rate limit set to wait for it (their retry time is the
    /// hold's, as stored: 2094 for a hold an older enlog stored). Returns when a hold still in
    /// force would have ended, nil when none was.
    @discardableResult
    package func liftRateLimitHold(now: Date = Date()) async throws(OutboxError) -> Date? {
        guard let hold = try await rateLimitHold() else { return nil }
        try await write { db in
            guard let stored = try Date.fetchOne(db, sql: "SELECT date FROM syncState WHERE key = 'notBefore'") else { return }
            try OutboxNote.filter(OutboxNote.Columns.state == OutboxNote.State.failed && OutboxNote.Columns.nextAttemptAt == stored)
                .updateAll(db, OutboxNote.Columns.nextAttemptAt.set(to: now))
            try db.execute(sql: "DELETE FROM syncState WHERE key = 'notBefore'")
        }
        return hold.until > now ? hold.until : nil
    }

    /// Ids of the notes whose earlier upload may have reached Evernote.
    package func notesNeedingLookup() async throws(OutboxError) -> Set<Int64> {
        try await read { db in
            Set(try Int64.fetchAll(db, sql: "SELECT noteId FROM syncNote WHERE needsLookup"))
        }
    }

    /// Ids of the notes whose `createNote` went out twice and whose copies were not counted yet
    /// (`needsLookup` = 2): their lookup must find every copy, not just one.
    package func notesSentTwice() async throws(OutboxError) -> Set<Int64> {
        try await read { db in
            Set(try Int64.fetchAll(db, sql: "SELECT noteId FROM syncNote WHERE needsLookup = 2"))
        }
    }

    /// Flags a note for a lookup that finds every copy (its request went out twice).
    package func setSentTwice(_ noteId: Int64) async throws(OutboxError) {
        try await write { db in
            try db.execute(sql: """
                INSERT INTO syncNote (noteId, needsLookup) VALUES (?, 2)
                ON CONFLICT(noteId) DO UPDATE SET needsLookup = 2
                """, arguments: [noteId])
        }
    }

    /// Flags (or clears) the exactly-once lookup for a note. Flagging keeps a `setSentTwice` flag.
    package func setNeedsLookup(_ noteId: Int64, _ value: Bool) async throws(OutboxError) {
        try await write { db in
            try db.execute(sql: """
                INSERT INTO syncNote (noteId, needsLookup) VALUES (?, ?)
                ON CONFLICT(noteId) DO UPDATE SET
                    needsLookup = CASE WHEN excluded.needsLookup THEN MAX(needsLookup, 1) ELSE 0 END
                """, arguments: [noteId, value])
        }
    }

    /// What a `createNote` returned, recorded by `markSynced(_:now:)`.
    package struct SyncedNote: Sendable, Equatable {
        package var id: Int64
        package var guid: String
        package var usn: Int64?

        package init(id: Int64, guid: String, usn: Int64?) {
            self.id = id
            self.guid = guid
            self.usn = usn
        }
    }

    /// pending or failed → sending for a batch of notes, in one transaction (one fsync), before
    /// any of their requests goes out; counts an attempt for each. Returns the notes claimed, in
    /// the order asked; a note dropped or changed since it was listed is left out.
    package func markSending(batch ids: [Int64], now: Date = Date()) async throws(OutboxError) -> [OutboxNote] {
        let stamp = StorageTime.text(now).databaseValue
        return try await write { db in
            var claimed: [OutboxNote] = []
            // The row as updated, in the same step: a note dropped or changed since it was
            // listed matches nothing and returns no row.
            let claim = try db.cachedStatement(sql: """
                UPDATE note SET state = 'sending', attempts = attempts + 1, lastAttemptAt = ?, nextAttemptAt = NULL,
                                updatedAt = ? WHERE id = ? AND state IN ('pending', 'failed') RETURNING *
                """)
            for id in ids {
                guard let note = try OutboxNote.fetchOne(claim, arguments: [stamp, stamp, id]) else { continue }
                claimed.append(note)
            }
            return claimed
        }
    }

    /// sending → synced for every note in `results`, in one transaction, clearing their
    /// exactly-once lookup flags. A note no longer `sending` is left as it is.
    package func markSynced(_ results: [SyncedNote], now: Date = Date()) async throws(OutboxError) {
        guard !results.isEmpty else { return }
        let stamp = StorageTime.text(now).databaseValue
        try await write { db in
            let update = try db.cachedStatement(sql: """
                UPDATE note SET state = 'synced', guid = ?, usn = ?, lastError = NULL, nextAttemptAt = NULL, updatedAt = ?
                WHERE id = ? AND state = 'sending'
                """)
            let clear = try db.cachedStatement(sql: "UPDATE syncNote SET needsLookup = 0 WHERE noteId = ? AND needsLookup")
            for result in results {
                try update.execute(arguments: [result.guid, result.usn, stamp, result.id])
                try clear.execute(arguments: [result.id])
            }
        }
    }

    /// sending → back in the queue for notes a batch claimed but never sent (the run stopped
    /// first): the attempt is not counted and no lookup is needed; a failed note is due at once.
    package func releaseUnsent(_ ids: [Int64], now: Date = Date()) async throws(OutboxError) {
        guard !ids.isEmpty else { return }
        let stamp = StorageTime.text(now).databaseValue
        try await write { db in
            // SQLite evaluates every SET expression on the row as it was.
            let update = try db.cachedStatement(sql: """
                UPDATE note SET attempts = MAX(attempts - 1, 0),
                                state = CASE WHEN attempts > 1 THEN 'failed' ELSE 'pending' END,
                                nextAttemptAt = CASE WHEN attempts > 1 THEN ? ELSE NULL END, updatedAt = ?
                WHERE id = ? AND state = 'sending'
                """)
            for id in ids { try update.execute(arguments: [stamp, stamp, id]) }
        }
    }

    /// The resources of several notes in one read, by note id (each note's in stored order):
    /// one query per batch instead of one per note.
    package func resources(ofNotes ids: [Int64]) async throws(OutboxError) -> [Int64: [NoteResource]] {
        guard !ids.isEmpty else { return [:] }
        return try await read { db in
            let rows = try NoteResource.filter(ids.contains(NoteResource.Columns.noteId)).order(Column("id")).fetchAll(db)
            return Dictionary(grouping: rows, by: \.noteId)
        }
    }

    /// Gives up on the address of queued notes in one transaction: they go as rendered at log
    /// time (`addressPending` cleared; title and content unchanged). Returns the ids released;
    /// a note dropped or sent meanwhile is left out.
    package func releaseWithoutAddress(_ ids: [Int64], now: Date = Date()) async throws(OutboxError) -> [Int64] {
        guard !ids.isEmpty else { return [] }
        let stamp = StorageTime.text(now).databaseValue
        return try await write { db in
            let update = try db.cachedStatement(sql: """
                UPDATE note SET addressPending = 0, updatedAt = ?
                WHERE id = ? AND addressPending AND state IN ('pending', 'failed', 'parked')
                """)
            var released: [Int64] = []
            for id in ids {
                try update.execute(arguments: [stamp, id])
                if db.changesCount == 1 { released.append(id) }
            }
            return released
        }
    }

    /// How many notes `dueNotes` would return, counted by SQLite: a run's total for its progress
    /// line without decoding every due note.
    package func dueCount(now: Date = Date(), limit: Int, account: String? = nil) async throws(OutboxError) -> Int {
        try await read { db in
            let pending = try Self.dueRequest(state: .pending, now: now, limit: limit, account: account).fetchCount(db)
            let failed = try Self.dueRequest(state: .failed, now: now, limit: limit, account: account).fetchCount(db)
            return min(limit, pending + failed)
        }
    }

    /// `dueNotes` after the note `afterId` (nil: from the start): the sync engine's cursor, so
    /// that a long run reads each due note once instead of re-reading the ones it has done.
    package func dueNotes(now: Date = Date(), limit: Int, account: String? = nil, afterId: Int64?) async throws(OutboxError) -> [OutboxNote] {
        try await read { db in
            func request(_ state: OutboxNote.State) -> QueryInterfaceRequest<OutboxNote> {
                let due = Self.dueRequest(state: state, now: now, limit: limit, account: account)
                return afterId.map { due.filter(OutboxNote.Columns.id > $0) } ?? due
            }
            let pending = try request(.pending).fetchAll(db)
            let failed = try request(.failed).fetchAll(db)
            return Array((pending + failed).sorted { $0.id! < $1.id! }.prefix(limit))
        }
    }

    /// Ids of the queued notes waiting for their address, oldest first (`notesWaitingForAddress`
    /// without reading the notes and their fixes, for a sync that has no lookup to make).
    package func idsWaitingForAddress(limit: Int) async throws(OutboxError) -> [Int64] {
        try await read { db in
            try Int64.fetchAll(db, sql: """
                SELECT id FROM note WHERE addressPending AND state IN ('pending', 'failed') ORDER BY id LIMIT ?
                """, arguments: [limit])
        }
    }

    /// Counts one more failed address lookup for the note; returns the new count, or nil when
    /// the note is gone (dropped meanwhile).
    package func recordAddressFailure(_ noteId: Int64) async throws(OutboxError) -> Int? {
        try await write { db in
            guard try Int.fetchOne(db, sql: "SELECT 1 FROM note WHERE id = ?", arguments: [noteId]) != nil else { return nil }
            try db.execute(sql: """
                INSERT INTO syncNote (noteId, addressTries) VALUES (?, 1)
                ON CONFLICT(noteId) DO UPDATE SET addressTries = addressTries + 1
                """, arguments: [noteId])
            return try Int.fetchOne(db, sql: "SELECT addressTries FROM syncNote WHERE noteId = ?", arguments: [noteId]) ?? 1
        }
    }

    /// Queued notes still waiting for their address, and the fewest failed lookups among them.
    package func addressWaits() async throws(OutboxError) -> (count: Int, fewestTries: Int) {
        try await read { db in
            let row = try Row.fetchOne(db, sql: """
                SELECT COUNT(*) AS count, MIN(COALESCE(syncNote.addressTries, 0)) AS fewest
                FROM note LEFT JOIN syncNote ON syncNote.noteId = note.id
                WHERE note.addressPending AND note.state IN ('pending', 'failed')
                """)
            return (row?["count"] ?? 0, row?["fewest"] ?? 0)
        }
    }

    /// Queued notes waiting for their address (pending or failed), oldest first, each with the
    /// fix it was logged from (nil when that row is missing).
    package func notesWaitingForAddress(limit: Int) async throws(OutboxError) -> [(note: OutboxNote, fix: FixRecord?)] {
        try await read { db in
            let notes = try OutboxNote
                .filter(OutboxNote.Columns.addressPending == true)
                .filter([OutboxNote.State.pending, OutboxNote.State.failed].contains(OutboxNote.Columns.state))
                .order(OutboxNote.Columns.id).limit(limit).fetchAll(db)
            return try notes.map { ($0, try FixRecord.fetchOne(db, id: $0.fixId)) }
        }
    }
}

extension OutboxNote {
    /// A row read column by column instead of through `Decodable` (GRDB's keyed decoding
    /// container cost more than the rest of a row's read, and a sync reads every note twice).
    /// Same columns and conversions as the `Codable` form it is written with: dates and enums
    /// through `DatabaseValueConvertible`, `tags` as the JSON array GRDB stores for an array.
    /// A stored property added to `OutboxNote` without a default fails to compile here.
    package init(row: Row) throws {
        id = try row.decode(forColumn: "id")
        uid = try row.decode(forColumn: "uid")
        fixId = try row.decode(forColumn: "fixId")
        title = try row.decode(forColumn: "title")
        content = try row.decode(forColumn: "content")
        notebookName = try row.decode(forColumn: "notebookName")
        let tagsJSON: Data = try row.decode(forColumn: "tags")
        tags = try JSONDecoder().decode([String].self, from: tagsJSON)
        latitude = try row.decode(forColumn: "latitude")
        longitude = try row.decode(forColumn: "longitude")
        altitude = try row.decode(forColumn: "altitude")
        placeName = try row.decode(forColumn: "placeName")
        subjectDate = try row.decode(forColumn: "subjectDate")
        source = try row.decode(forColumn: "source")
        sourceApplication = try row.decode(forColumn: "sourceApplication")
        addressPending = try row.decode(forColumn: "addressPending")
        state = try row.decode(forColumn: "state")
        guid = try row.decode(forColumn: "guid")
        usn = try row.decode(forColumn: "usn")
        attempts = try row.decode(forColumn: "attempts")
        lastAttemptAt = try row.decode(forColumn: "lastAttemptAt")
        nextAttemptAt = try row.decode(forColumn: "nextAttemptAt")
        lastError = try row.decode(forColumn: "lastError")
        account = try row.decode(forColumn: "account")
        createdAt = try row.decode(forColumn: "createdAt")
        updatedAt = try row.decode(forColumn: "updatedAt")
    }
}
