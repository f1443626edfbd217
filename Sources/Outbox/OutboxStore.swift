import Foundation
import GRDB
import Support
import EvernoteAPI
import Configuration
import Capture
import Compose

/// The durable queue of notes waiting for upload, plus the history of every logged fix.
///
/// Built on a GRDB `DatabaseWriter` (as GRDB's own `AppDatabase` is): the outbox file opened
/// from a path (`init(path:)`, what enlog does), or one the caller opened (`init(_:)`: an
/// in-memory `DatabaseQueue` where the file is not the point).
///
/// Safe to use from several processes at once: SQLite in WAL mode serialises writers, and a
/// writer that finds the database busy waits up to `busyTimeout` before failing with
/// `OutboxError.locked`. Every method is one transaction.
package struct OutboxStore: Sendable {
    package let path: String
    package let busyTimeout: TimeInterval
    /// The database open; for a file opened from its path, it notices the path deleted or
    /// replaced under a writer and goes on with a copy (`OutboxFile`).
    let file: OutboxFile
    var pool: any DatabaseWriter { file.pool }

    package static let defaultBusyTimeout: TimeInterval = 5

    /// How a command uses the outbox, which decides what opening it may do to the disk.
    package enum Access: Sendable {
        /// Reading commands (`queue list`, `history`): never write, never create; an outbox the
        /// user cannot write (a read-only file, folder or file system) still opens.
        case read
        /// Changing notes already there (`queue retry`, `drop`): the outbox must exist.
        case change
        /// Adding notes (`log`, `sync`): creates the outbox and its folders when missing.
        case create
    }

    /// The outbox on a database the caller opened and owns (`DatabaseQueue()` for one in
    /// memory), its schema brought up to date. Its file, if any, is not followed when deleted or
    /// replaced: that is `init(path:)`'s, which knows how the file was opened.
    package init(_ writer: any DatabaseWriter, busyTimeout: TimeInterval = OutboxStore.defaultBusyTimeout) throws(OutboxError) {
        try OutboxOpening.prepareSchema(of: writer, path: writer.path, busyTimeout: busyTimeout)
        self.init(file: OutboxFile(path: writer.path, pool: writer, tracking: false) { path throws(OutboxError) in
            throw OutboxError.cannotOpen(path: path, detail: "an outbox opened by its caller is not reopened")
        }, busyTimeout: busyTimeout)
    }

    /// Opens the outbox at `path` and, unless reading, brings its schema up to date
    /// (`OutboxOpening`: what opening may do to the disk for each `Access`).
    ///
    /// Refuses a file that is not an outbox (`OutboxError.foreign`) before writing to it, and,
    /// unless `access` is `.create`, a path where no outbox is (`.missing`).
    package init(path: String, busyTimeout: TimeInterval = OutboxStore.defaultBusyTimeout,
                access mode: Access = .create) throws(OutboxError) {
        let pool = try OutboxOpening(path: path, busyTimeout: busyTimeout).open(for: mode)
        self.init(file: OutboxFile(path: path, pool: pool, tracking: mode != .read) { copy throws(OutboxError) in
            try OutboxOpening.openPool(path: copy, busyTimeout: busyTimeout, readOnly: false)
        }, busyTimeout: busyTimeout)
    }

    private init(file: OutboxFile, busyTimeout: TimeInterval) {
        self.path = file.path
        self.busyTimeout = busyTimeout
        self.file = file
    }

    // MARK: Writing

    /// Stores `fix` in the history and `note` in the outbox, both or neither.
    @discardableResult
    package func enqueue(fix: Fix, note draft: NoteDraft, now: Date = Date()) async throws(OutboxError) -> OutboxNote {
        try await write { db in
            var fixRecord = FixRecord(fix, createdAt: now)
            try fixRecord.insert(db)
            return try Self.insert(draft, on: fixRecord, db, now: now)
        }
    }

    /// The note, its resources and pending map, on a fix already in the history; inside the
    /// caller's transaction.
    static func insert(_ draft: NoteDraft, on fixRecord: FixRecord, _ db: Database, now: Date) throws -> OutboxNote {
        var note = OutboxNote(draft: draft, fix: fixRecord, fixId: fixRecord.id!, now: now)
        do {
            try note.insert(db)
        } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
            throw OutboxError.duplicateNote(uid: draft.uid)
        }
        for var resource in draft.resources {
            resource.noteId = note.id!
            try resource.insert(db)
        }
        if let message = draft.message {
            try NoteMessage(noteId: note.id!, text: message).insert(db)
        }
        if draft.mapPending {
            try PendingMap(noteId: note.id!, address: draft.place?.address, displayName: draft.place?.displayName,
                           attempts: 0, lastError: nil).insert(db)
        }
        return try Self.stored(note, db)
    }

    /// pending or failed → sending; counts the attempt.
    @discardableResult
    package func markSending(_ id: Int64, now: Date = Date()) async throws(OutboxError) -> OutboxNote {
        try await transition(id, .markSending, allowedFrom: [.pending, .failed]) { note in
            note.state = .sending
            note.attempts += 1
            note.lastAttemptAt = now
            note.nextAttemptAt = nil
            note.updatedAt = now
        }
    }

    /// sending → synced, recording what Evernote returned.
    @discardableResult
    package func markSynced(_ id: Int64, guid: String, usn: Int64?, now: Date = Date()) async throws(OutboxError) -> OutboxNote {
        try await transition(id, .markSynced, allowedFrom: [.sending]) { note in
            note.state = .synced
            note.guid = guid
            note.usn = usn
            note.lastError = nil
            note.nextAttemptAt = nil
            note.updatedAt = now
        }
    }

    /// sending → failed; the note becomes due again at `retryAt`, by default after
    /// `RetryBackoff.standard` (without jitter) on the number of attempts.
    @discardableResult
    package func markFailed(_ id: Int64, reason: String, retryAt: Date? = nil, now: Date = Date()) async throws(OutboxError) -> OutboxNote {
        try await transition(id, .markFailed, allowedFrom: [.sending]) { note in
            note.state = .failed
            note.lastError = reason
            note.nextAttemptAt = retryAt ?? now.addingTimeInterval(RetryBackoff.standard.ceiling(afterAttempts: note.attempts))
            note.updatedAt = now
        }
    }

    /// Sets a note aside until `retry`: for errors no automatic retry can fix (invalid ENML,
    /// quota, permission), or when the user asks.
    @discardableResult
    package func park(_ id: Int64, reason: String? = nil, now: Date = Date()) async throws(OutboxError) -> OutboxNote {
        try await transition(id, .park, allowedFrom: [.pending, .failed, .sending]) { note in
            note.state = .parked
            if let reason { note.lastError = reason }
            note.nextAttemptAt = nil
            note.updatedAt = now
        }
    }

    /// failed, parked or exported (or pending) → pending with a fresh attempt count. An exported
    /// note may be in Evernote already (its ENEX file imported): it is flagged for the
    /// exactly-once lookup, so the next sync looks for it by its `enlog.id` (in every notebook:
    /// `notesExportedBefore`) before creating it.
    @discardableResult
    package func retry(_ id: Int64, now: Date = Date()) async throws(OutboxError) -> OutboxNote {
        try await transition(id, .retry, allowedFrom: [.pending, .failed, .parked, .exported], alongside: { db in
            guard try ENEXExportRecord.exists(db, key: id) else { return }
            try db.execute(sql: """
                INSERT INTO syncNote (noteId, needsLookup) VALUES (?, 1)
                ON CONFLICT(noteId) DO UPDATE SET needsLookup = MAX(needsLookup, 1)
                """, arguments: [id])
        }) { note in
            note.state = .pending
            note.attempts = 0
            note.nextAttemptAt = nil
            note.lastError = nil
            note.updatedAt = now
        }
    }

    /// Removes a note from the outbox; its fix stays in the history. Refused while it is being
    /// sent, unless `includingSending` (the caller holds the sync lock: no sync is sending it).
    /// Returns the note as it was.
    @discardableResult
    package func drop(_ id: Int64, includingSending: Bool = false) async throws(OutboxError) -> OutboxNote {
        let allowed: Set<OutboxNote.State> = includingSending ? [.pending, .failed, .parked, .synced, .exported, .sending]
            : [.pending, .failed, .parked, .synced, .exported]
        return try await transition(id, .drop, allowedFrom: allowed, delete: true) { _ in }
    }

    /// sending → pending for a note no sync is sending (the caller holds the sync lock): its
    /// upload was cut off with an unknown outcome. The attempt count is kept (at least 1), which
    /// tells the sync engine to look the note up in Evernote before creating it again.
    @discardableResult
    package func requeueSending(_ id: Int64, now: Date = Date()) async throws(OutboxError) -> OutboxNote {
        try await transition(id, .retry, allowedFrom: [.sending]) { note in
            note.state = .pending
            note.attempts = max(note.attempts, 1)
            note.nextAttemptAt = nil
            note.updatedAt = now
        }
    }

    /// Fills in the geocoded address of a note queued with `addressPending`.
    @discardableResult
    package func resolveAddress(_ id: Int64, placeName: String?, title: String, content: String,
                               now: Date = Date()) async throws(OutboxError) -> OutboxNote {
        try await transition(id, .resolveAddress, allowedFrom: [.pending, .failed, .parked]) { note in
            // A user-named place's name, set when the note was logged, stays.
            note.placeName = note.placeName ?? placeName
            note.title = title
            note.content = content
            note.addressPending = false
            note.updatedAt = now
        }
    }

    /// Puts back to pending the notes left `sending` by a process that died mid-upload
    /// (attempt started more than `age` seconds ago). Returns how many were requeued.
    @discardableResult
    package func requeueInterrupted(olderThan age: TimeInterval, now: Date = Date()) async throws(OutboxError) -> Int {
        try await write { db in
            try OutboxNote
                .filter(OutboxNote.Columns.state == OutboxNote.State.sending)
                .filter(OutboxNote.Columns.lastAttemptAt < now.addingTimeInterval(-age))
                .updateAll(db, OutboxNote.Columns.state.set(to: OutboxNote.State.pending),
                           OutboxNote.Columns.updatedAt.set(to: now))
        }
    }

    // MARK: Reading

    package func note(id: Int64) async throws(OutboxError) -> OutboxNote {
        try await read { db in
            guard let note = try OutboxNote.fetchOne(db, id: id) else { throw OutboxError.noteNotFound(id: id) }
            return note
        }
    }

    /// Notes in `state`, oldest first.
    package func notes(state: OutboxNote.State, limit: Int? = nil) async throws(OutboxError) -> [OutboxNote] {
        try await readSkipping { db, unreadable in
            try Self.readableRecords(Self.notesRequest(state: state, limit: nil), db, limit: limit, unreadable: &unreadable)
        }
    }

    /// Every note whatever its state, oldest first.
    package func allNotes(limit: Int? = nil) async throws(OutboxError) -> [OutboxNote] {
        try await readSkipping { db, unreadable in
            try Self.readableRecords(OutboxNote.order(OutboxNote.Columns.id), db, limit: limit, unreadable: &unreadable)
        }
    }

    /// What a sync should send now, oldest first: pending notes, and failed ones whose retry is due.
    /// Notes still waiting for their address are left out, and so, when `account` is given, are
    /// notes queued for another account (notes queued before any sign-in go to whoever syncs).
    package func dueNotes(now: Date = Date(), limit: Int, account: String? = nil) async throws(OutboxError) -> [OutboxNote] {
        try await read { db in
            // Two index walks merged here, rather than one OR query that SQLite would sort.
            let pending = try Self.dueRequest(state: .pending, now: now, limit: limit, account: account).fetchAll(db)
            let failed = try Self.dueRequest(state: .failed, now: now, limit: limit, account: account).fetchAll(db)
            return Array((pending + failed).sorted { $0.id! < $1.id! }.prefix(limit))
        }
    }

    /// Failed notes waiting for their retry time, and the earliest of those times.
    package func retryWaits() async throws(OutboxError) -> (count: Int, next: Date?) {
        try await read { db in
            let failed = OutboxNote.filter(OutboxNote.Columns.state == OutboxNote.State.failed)
            return (try failed.fetchCount(db),
                    try Date.fetchOne(db, failed.select(min(OutboxNote.Columns.nextAttemptAt))))
        }
    }

    /// How many notes are in each state.
    package func counts() async throws(OutboxError) -> [OutboxNote.State: Int] {
        try await read { db in
            var counts: [OutboxNote.State: Int] = [:]
            for state in OutboxNote.State.allCases {
                counts[state] = try OutboxNote.filter(OutboxNote.Columns.state == state).fetchCount(db)
            }
            return counts
        }
    }

    /// Fixes with `since <= timestamp < until`, oldest first; with `notedOnly`, those that have a note
    /// (not the track `watch` keeps, nor imported fixes).
    package func history(since: Date? = nil, until: Date? = nil, limit: Int? = nil,
                        notedOnly: Bool = false) async throws(OutboxError) -> [FixRecord] {
        try await readSkipping { db, unreadable in
            var request = FixRecord.order(Column("timestamp"), Column("id"))
            if let since { request = request.filter(Column("timestamp") >= since) }
            if let until { request = request.filter(Column("timestamp") < until) }
            if notedOnly { request = request.filter(sql: "EXISTS (SELECT 1 FROM note WHERE note.fixId = fix.id)") }
            return try Self.readableRecords(request, db, limit: limit, unreadable: &unreadable)
        }
    }

    /// How many fixes of `since..<until` carry no note (the track `watch` keeps, imported tracks):
    /// what `history` without `--track` leaves out, counted by SQLite.
    package func unnotedFixCount(since: Date? = nil, until: Date? = nil) async throws(OutboxError) -> Int {
        try await read { db in
            var request = FixRecord.filter(sql: "NOT EXISTS (SELECT 1 FROM note WHERE note.fixId = fix.id)")
            if let since { request = request.filter(Column("timestamp") >= since) }
            if let until { request = request.filter(Column("timestamp") < until) }
            return try request.fetchCount(db)
        }
    }

    /// The most recently taken fix in the history, if any (where `watch`'s track resumes after a restart).
    package func latestFix() async throws(OutboxError) -> FixRecord? {
        try await readSkipping { db, unreadable in
            try Self.readableRecords(FixRecord.order(Column("timestamp").desc, Column("id").desc), db, limit: 1, unreadable: &unreadable).first
        }
    }

    /// The most recently taken fix that has a note (what `watch` measures movement from after a
    /// restart: the track and imported fixes between notes are not notes).
    package func latestNotedFix() async throws(OutboxError) -> FixRecord? {
        try await readSkipping { db, unreadable in
            try Self.readableRecords(FixRecord.filter(sql: "EXISTS (SELECT 1 FROM note WHERE note.fixId = fix.id)")
                .order(Column("timestamp").desc, Column("id").desc), db, limit: 1, unreadable: &unreadable).first
        }
    }

    /// `PRAGMA integrity_check`'s verdict: "ok", or the problems found.
    package func integrityCheck() async throws(OutboxError) -> [String] {
        try await read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
    }

    // MARK: Plumbing

    // The requests behind the listing methods, visible to tests that check their query plans.
    static func notesRequest(state: OutboxNote.State, limit: Int?) -> QueryInterfaceRequest<OutboxNote> {
        let request = OutboxNote.filter(OutboxNote.Columns.state == state).order(OutboxNote.Columns.id)
        return limit.map { request.limit($0) } ?? request
    }

    static func dueRequest(state: OutboxNote.State, now: Date, limit: Int, account: String? = nil) -> QueryInterfaceRequest<OutboxNote> {
        var request = OutboxNote
            .filter(OutboxNote.Columns.state == state)
            .filter(OutboxNote.Columns.addressPending == false)
            .filter(sql: "NOT EXISTS (SELECT 1 FROM pendingMap WHERE pendingMap.noteId = note.id)")
        if let account { request = request.filter(Column("account") == nil || Column("account") == account) }
        if state == .failed { request = request.filter(OutboxNote.Columns.nextAttemptAt <= now) }
        return request.order(OutboxNote.Columns.id).limit(limit)
    }

    /// The database, for tests only (`@testable`: raw SQL to stage a state or check a
    /// query plan). Everything in enlog goes through the store's methods — the sync engine's
    /// records and the geocode cache too (`OutboxSyncRecords`, `OutboxGeocodeRecords`) — so
    /// that every database error is an `OutboxError`.
    var databaseWriter: any DatabaseWriter { pool }

    /// - Parameter alongside: other rows to write in the same transaction (the note's resources,
    ///   its pending map), once the note's state is known to allow it.
    func transition(_ id: Int64, _ action: OutboxNote.Action, allowedFrom allowed: Set<OutboxNote.State>,
                    delete: Bool = false, alongside: (@Sendable (Database) throws -> Void)? = nil,
                    _ change: @escaping @Sendable (inout OutboxNote) -> Void)
    async throws(OutboxError) -> OutboxNote {
        try await write { db in
            guard var note = try OutboxNote.fetchOne(db, id: id) else { throw OutboxError.noteNotFound(id: id) }
            guard allowed.contains(note.state) else {
                throw OutboxError.invalidTransition(id: id, state: note.state, action: action)
            }
            try alongside?(db)
            if delete {
                try note.delete(db)
                return note
            }
            change(&note)
            try note.update(db)
            return try Self.stored(note, db)
        }
    }

    /// The row as it reads back: dates are kept to the millisecond, so the value handed to the
    /// caller must come from the database to compare equal to a later `note(id:)`.
    static func stored(_ note: OutboxNote, _ db: Database) throws -> OutboxNote {
        try OutboxNote.fetchOne(db, id: note.id!)!
    }

    // The transactions every method runs in, mapping any failure to `OutboxError`. Internal for
    // the store's own files in Outbox/ only.

    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(OutboxError) -> T {
        try await followingTheFile { () async throws(OutboxError) -> T in
            try await mappingFailures { try await pool.write(body) }
        }
    }

    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(OutboxError) -> T {
        try await mappingFailures { try await pool.read(body) }
    }

    /// As `write`, for a caller that opens its own transaction (the geocoder's IMMEDIATE one).
    func writeWithoutTransaction<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(OutboxError) -> T {
        try await followingTheFile { () async throws(OutboxError) -> T in
            try await mappingFailures { try await pool.writeWithoutTransaction(body) }
        }
    }

    /// Blocking variant, for the history import's writer only (it runs on a thread of its own).
    func writeNow<T>(_ body: (Database) throws -> T) throws(OutboxError) -> T {
        try followingTheFileNow { () throws(OutboxError) -> T in
            try mappingFailures { try pool.write(body) }
        }
    }

    /// As `writeNow` without a transaction: the import writer finalizes its prepared statements on
    /// the writer connection's own queue.
    func writeNowWithoutTransaction<T>(_ body: (Database) throws -> T) throws(OutboxError) -> T {
        try followingTheFileNow { () throws(OutboxError) -> T in
            try mappingFailures { try pool.writeWithoutTransaction(body) }
        }
    }

    /// One call into GRDB, its failure said as the `OutboxError` of this file.
    private func mappingFailures<T>(_ call: () async throws -> T) async throws(OutboxError) -> T {
        do {
            return try await call()
        } catch {
            throw OutboxError.map(error, path: path, busyTimeout: busyTimeout)
        }
    }

    private func mappingFailures<T>(_ call: () throws -> T) throws(OutboxError) -> T {
        do {
            return try call()
        } catch {
            throw OutboxError.map(error, path: path, busyTimeout: busyTimeout)
        }
    }
}
