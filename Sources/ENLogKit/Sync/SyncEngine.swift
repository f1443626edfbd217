import Foundation
import Synchronization
import GRDB

public struct SyncOptions: Sendable {
    /// Upload at most this many notes in one run (nil: all that are due).
    public var maxNotes: Int?
    /// Report what is due without any network call or state change.
    public var dryRun: Bool
    /// A note whose attempt count reaches this is parked instead of failed.
    public var maxAttempts: Int
    /// Failed address lookups (one per run) after which a deferred-address note is uploaded
    /// with its coordinates only.
    public var addressAttempts: Int
    /// Time allowed for one address lookup.
    public var addressBudget: Duration
    /// Address lookups tried per run at most.
    public var addressLookupsPerRun: Int
    /// Retry backoff: base · 2^(attempts−1), capped, then scaled by a random factor in [0.5, 1].
    public var backoffBase: TimeInterval
    public var backoffCap: TimeInterval
    /// Consecutive transient failures (5xx, timeouts…) after which the run stops.
    public var maxConsecutiveFailures: Int
    /// Wait this long when Evernote says RATE_LIMIT_REACHED without a duration.
    public var defaultRateLimitWait: TimeInterval
    /// The signed-in account (`EvernoteAccount.accountKey`): notes queued for another account are
    /// never uploaded to this one. nil: no filter.
    public var account: String?
    /// Told what happens, note by note (progress lines, `--verbose`); called on the run's task.
    public var observer: (@Sendable (SyncEvent) -> Void)?

    public init(maxNotes: Int? = nil, dryRun: Bool = false, maxAttempts: Int = 8, addressAttempts: Int = 3,
                addressBudget: Duration = .seconds(3), addressLookupsPerRun: Int = 20,
                backoffBase: TimeInterval = 30, backoffCap: TimeInterval = 6 * 3600,
                maxConsecutiveFailures: Int = 3, defaultRateLimitWait: TimeInterval = 300, account: String? = nil,
                observer: (@Sendable (SyncEvent) -> Void)? = nil) {
        self.account = account
        self.observer = observer
        self.maxNotes = maxNotes
        self.dryRun = dryRun
        self.maxAttempts = maxAttempts
        self.addressAttempts = addressAttempts
        self.addressBudget = addressBudget
        self.addressLookupsPerRun = addressLookupsPerRun
        self.backoffBase = backoffBase
        self.backoffCap = backoffCap
        self.maxConsecutiveFailures = maxConsecutiveFailures
        self.defaultRateLimitWait = defaultRateLimitWait
    }
}

/// What a run reports while it works.
public enum SyncEvent: Sendable, Equatable {
    /// Before the first note: how many notes this run expects to handle.
    case started(total: Int)
    /// One note handled (`guid` when it is on Evernote).
    case note(id: Int64, action: SyncNoteAction, guid: String?)
    /// Something worth a line in verbose output (e.g. which address was used).
    case notice(String)
}

public enum SyncNoteAction: String, Sendable, Codable {
    case uploaded
    case alreadyPresent = "already-present"
    case failed
    case parked
}

public struct SyncSummary: Sendable, Codable, Equatable {
    public enum StopReason: String, Sendable, Codable {
        /// Nothing due is left.
        case completed
        case maxNotes
        case dryRun
        /// RATE_LIMIT_REACHED now or earlier: see `notBefore`.
        case rateLimited
        /// The service could not be reached at all.
        case networkDown
        /// Several transient failures in a row (HTTP 5xx, timeouts, unreadable replies).
        case serviceFailing
        case cancelled
        /// Reachability said so before any call: nothing was sent (`SyncSession`).
        case offline
        case noUplink
    }

    /// Created by this run.
    public var uploaded = 0
    /// Found already in Evernote by the lookup (an earlier attempt's reply was lost) and marked synced.
    public var alreadyPresent = 0
    /// Attempts that failed this run (the note stays queued with a retry time, or is parked).
    public var failed = 0
    /// Of those, notes set aside (rejected by Evernote, or `maxAttempts` reached).
    public var parked = 0
    /// Deferred addresses filled in (or given up on) before upload.
    public var addressesResolved = 0
    /// Dry run: notes that would be sent.
    public var due = 0
    /// Notes neither synced nor parked after the run (pending, failed, sending, address pending).
    public var remaining = 0
    public var stoppedBecause: StopReason = .completed
    /// Rate limit in force: no Evernote call before this time.
    public var notBefore: Date?
    /// The last error seen, one line.
    public var lastError: String?
    /// The kind of the last failure that left a note queued or parked (see `verdict(for:)`).
    public var failure: FailureClass?
    /// Notes that failed (this run or an earlier one) and wait for their retry time; the earliest.
    public var waitingForRetry = 0
    public var nextRetryAt: Date?
    /// Notes still waiting for their address after the run (not due until it is filled in or
    /// given up on).
    public var waitingForAddress = 0
    /// Address lookups that failed this run, and the last one's error.
    public var addressLookupsFailed = 0
    public var lastAddressError: String?
    /// Failed lookups (one per sync) a waiting note may still have before it is uploaded
    /// without its address; nil when none waits.
    public var addressTriesLeft: Int?
    /// How the run ended, once everything above is final: what `enlog sync` exits with.
    public var verdict: Verdict = .complete

    public init() {}
}

/// Uploads the outbox to Evernote, each note exactly once whatever fails or is killed.
///
/// Exactly once: every note carries its outbox uid in `applicationData["enlog.id"]`, is marked
/// `sending` (committed) before `createNote`, and `synced` with the returned guid after. When
/// the outcome of a `createNote` is unknown — a process killed mid-request (the note is still
/// `sending` at the next run, which holds the lock, so nobody else is sending it), a timeout, a
/// lost connection, an unreadable reply, a non-200 HTTP status — the note is flagged
/// (`SyncState` `needsLookup`, written before it leaves `sending`) and its next attempt first
/// searches Evernote: `findNotesMetadata(words: "applicationData:enlog.id", notebook, order
/// CREATED descending)` narrowed to notes whose `created` equals the note's own (the engine sets
/// `created` from the outbox row, so it is the same on every attempt), then
/// `getNoteApplicationDataEntry(guid, "enlog.id") == uid`. Found: marked synced; not found:
/// created. (On the real service the search index may lag a just-created note by seconds; a
/// killed `enlog sync` restarted at once could then create a duplicate — Evernote documents no
/// consistent lookup by applicationData.)
public struct SyncEngine: Sendable {
    public static let applicationDataKey = "enlog.id"

    /// Makes a NoteStore client. Called once per run (notebooks, lookups) and once per
    /// `createNote`: each result must have its own `HTTPClient` (connection pool), so that a
    /// `createNote` never goes out on a reused connection (see `SyncRun.upload`).
    public typealias ClientFactory = @Sendable (_ noteStoreURL: String, _ token: String) -> NoteStoreClient

    public static let defaultClientFactory: ClientFactory = { url, token in
        NoteStoreClient(transport: ThriftHTTPTransport(url: url), authenticationToken: token)
    }

    /// Clients over `http` whose successful calls report their address to `connected`.
    static func clientFactory(http: HTTPConfiguration, connected: ConnectedAddress) -> ClientFactory {
        { url, token in
            NoteStoreClient(transport: ThriftHTTPTransport(url: url, client: HTTPClient(configuration: http),
                                                           onConnected: { connected.record($0) }),
                            authenticationToken: token)
        }
    }

    let outbox: OutboxStore
    let noteStoreURL: String
    let token: String
    let makeClient: ClientFactory
    let placeLookup: (any PlaceLookup)?
    let renderer: NoteRenderer?
    let clock: @Sendable () -> Date
    let options: SyncOptions
    /// The address the run's NoteStore calls reached; remembered per host at the end of the run.
    let connected = ConnectedAddress()
    let rememberAddress: Bool

    /// - Parameters:
    ///   - makeClient: nil: clients over `http` that record the address they reach, remembered
    ///     (`SyncState.rememberAddress`) unless `rememberAddress` is false (through a proxy the
    ///     address reached is the proxy's, not the NoteStore's).
    ///   - placeLookup, renderer: fill in deferred addresses (`addressPending` notes) before
    ///     upload; without them such notes are uploaded as queued (coordinates only).
    ///   - clock: "now" for every state change, retry time and rate-limit check.
    public init(outbox: OutboxStore, noteStoreURL: String, token: String,
                makeClient: ClientFactory? = nil, http: HTTPConfiguration = HTTPConfiguration(),
                rememberAddress: Bool = true,
                placeLookup: (any PlaceLookup)? = nil, renderer: NoteRenderer? = nil,
                clock: @escaping @Sendable () -> Date = { Date() }, options: SyncOptions = SyncOptions()) {
        self.outbox = outbox
        self.noteStoreURL = noteStoreURL
        self.token = token
        self.makeClient = makeClient ?? Self.clientFactory(http: http, connected: connected)
        self.rememberAddress = rememberAddress && makeClient == nil
        self.placeLookup = placeLookup
        self.renderer = renderer
        self.clock = clock
        self.options = options
    }

    /// One sync. Throws `SyncError.syncInProgress` (another sync holds the lock),
    /// `SyncError.reauthenticationRequired` (token refused; nothing is lost), `OutboxError`.
    /// Everything else ends the run with a summary saying why it stopped.
    public func run() async throws -> SyncSummary {
        let lock = try SyncLock(databasePath: outbox.path)
        defer { lock.release() }
        let state = try await SyncState(writer: outbox.databaseWriter)
        let client = makeClient(noteStoreURL, token)
        let cancellation = CancellationFlag()
        // The run's own bookkeeping must not see the caller's cancellation (GRDB refuses database
        // access from a cancelled task, which would leave a stored note unmarked): it runs in an
        // unstructured task, and cancellation only raises a flag checked between notes and
        // cancels the request in flight.
        let outbox = self.outbox
        let engine = self
        let work = Task { () async throws -> SyncSummary in
            let run = SyncRun(engine: engine, state: state, client: client, cancellation: cancellation)
            let result: Result<SyncSummary, Error>
            do { result = .success(try await run.execute()) } catch { result = .failure(error) }
            // Whatever ended the run, a call that got through proves the address.
            await engine.rememberConnectedAddress(state)
            var summary = try result.get()
            summary.remaining = try await Self.remaining(outbox)
            let retries = try await outbox.retryWaits()
            summary.waitingForRetry = retries.count
            summary.nextRetryAt = retries.next
            let waits = try await state.addressWaits()
            summary.waitingForAddress = waits.count
            summary.addressTriesLeft = waits.count > 0 ? max(0, engine.options.addressAttempts - waits.fewestTries) : nil
            summary.verdict = SyncSummary.verdict(for: summary)
            return summary
        }
        return try await withTaskCancellationHandler {
            try await work.value
        } onCancel: {
            cancellation.cancel()
        }
    }

    /// Stores the last address a call reached as `ip:port` for the NoteStore host. Best effort:
    /// failing to remember must not fail a sync that worked.
    func rememberConnectedAddress(_ state: SyncState) async {
        guard rememberAddress, let ip = connected.latest,
              let endpoint = NoteStoreEndpoint(url: noteStoreURL) else { return }
        let address = ip.contains(":") ? "[\(ip)]:\(endpoint.port)" : "\(ip):\(endpoint.port)"
        guard (try? ReachabilityChecker.parse(address: address)) != nil else { return }
        try? await state.rememberAddress(address, host: endpoint.host, now: clock())
    }

    static func remaining(_ outbox: OutboxStore) async throws -> Int {
        let counts = try await outbox.counts()
        return (counts[.pending] ?? 0) + (counts[.failed] ?? 0) + (counts[.sending] ?? 0)
    }

    /// The EDAM note uploaded for an outbox row. Deterministic: every attempt sends the same
    /// `created` and `enlog.id`, which is what the lookup matches.
    public static func edamNote(for note: OutboxNote, notebookGuid: EDAM.Guid?) -> EDAM.Note {
        var attributes = EDAM.NoteAttributes()
        attributes.latitude = note.latitude
        attributes.longitude = note.longitude
        attributes.altitude = note.altitude
        attributes.placeName = note.placeName
        attributes.subjectDate = note.subjectDate.map(milliseconds)
        attributes.source = note.source
        attributes.sourceApplication = note.sourceApplication
        attributes.applicationData = EDAM.LazyMap(fullMap: [applicationDataKey: note.uid])
        var edam = EDAM.Note(title: note.title, content: note.content, notebookGuid: notebookGuid,
                             tagNames: note.tags.isEmpty ? nil : note.tags, attributes: attributes)
        edam.created = milliseconds(note.createdAt)
        return edam
    }

    static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }
}

/// How a failed call is handled.
enum FailureKind {
    /// The request may have been processed: look the note up before the next attempt.
    case ambiguous
    /// Certainly not processed, but worth retrying; `networkDown` stops the run.
    case notProcessed(networkDown: Bool)
    /// Evernote rejected this note; it cannot succeed unchanged.
    case rejected
    /// Account quota: keep the note, retry much later.
    case quota
    case rateLimited(seconds: Int?)
    case reauthenticate
    case cancelled

    static func classify(_ error: Error) -> FailureKind {
        if error is CancellationError { return .cancelled }
        if let e = error as? EvernoteError {
            if e.requiresReauthentication { return .reauthenticate }
            switch e {
            case .rateLimited(let seconds): return .rateLimited(seconds: seconds)
            case .quotaReached: return .quota
            case .enmlValidation, .badDataFormat, .dataRequired, .limitReached, .permissionDenied,
                 .dataConflict, .notFound:
                return .rejected
            case .service, .application:
                // The service answered with an exception: nothing was stored.
                return .notProcessed(networkDown: false)
            default:
                // Unreadable/mismatched reply: the call may have gone through.
                return .ambiguous
            }
        }
        if let e = error as? HTTPError {
            switch e {
            case .couldNotResolveHost, .couldNotConnect, .tls, .insecureURL, .invalidURL:
                return .notProcessed(networkDown: true)
            case .cancelled: return .cancelled
            case .timedOut, .connectionLost, .responseTooLarge, .other: return .ambiguous
            }
        }
        // ThriftHTTPError (a proxy or the service answering non-Thrift) and anything unknown.
        return .ambiguous
    }
}

func oneLine(_ error: Error) -> String {
    if let e = error as? any ENLogError { return e.reason }
    return "\(error)"
}

/// The mutable state of one run, owned by the run's task.
final class SyncRun {
    let engine: SyncEngine
    let state: SyncState
    let client: NoteStoreClient
    var summary = SyncSummary()
    var notebooks: [EDAM.Notebook]?
    var notebookGuids: [String: EDAM.Guid] = [:]
    var needsLookup: Set<Int64> = []
    var consecutiveFailures = 0
    let cancellation: CancellationFlag
    var outbox: OutboxStore { engine.outbox }
    var options: SyncOptions { engine.options }

    /// Ends the run early with a reason (not an error for the caller).
    struct Stop: Error { var reason: SyncSummary.StopReason }

    init(engine: SyncEngine, state: SyncState, client: NoteStoreClient, cancellation: CancellationFlag) {
        self.engine = engine
        self.state = state
        self.client = client
        self.cancellation = cancellation
    }

    func execute() async throws -> SyncSummary {
        let now = engine.clock()
        if let hold = try await state.notBefore() {
            if hold.until > now {
                summary.notBefore = hold.until
                summary.lastError = hold.reason
                summary.stoppedBecause = .rateLimited
                return summary
            }
            try await state.setNotBefore(nil, now: now)
        }
        if options.dryRun {
            summary.due = try await outbox.dueNotes(now: now, limit: options.maxNotes ?? Int.max, account: options.account).count
                + outbox.notes(state: .sending).count
            summary.stoppedBecause = .dryRun
            return summary
        }
        do {
            try await resolveDeferredAddresses()
            if let observer = options.observer {
                // Interrupted notes are either found or due again, so counted once either way.
                let sending = try await outbox.notes(state: .sending).count
                let due = try await outbox.dueNotes(now: engine.clock(), limit: options.maxNotes ?? Int.max,
                                                    account: options.account).count
                observer(.started(total: sending + due))
            }
            needsLookup = try await state.notesNeedingLookup()
            try await resolveInterrupted()
            try await uploadDue()
        } catch let stop as Stop {
            summary.stoppedBecause = stop.reason
        }
        return summary
    }

    // MARK: Deferred addresses

    /// Notes queued before their address was known: look it up (bounded), re-render and
    /// re-validate, store (`resolveAddress`). After `addressAttempts` failed lookups (counted
    /// once per run), or with no lookup configured, the note is released as queued — its
    /// coordinates and map link, no address — rather than held forever.
    func resolveDeferredAddresses() async throws {
        let writer = outbox.databaseWriter
        let limit = options.maxNotes ?? 1000
        let rows: [(OutboxNote, FixRecord?)] = try await writer.read { db in
            let notes = try OutboxNote
                .filter(OutboxNote.Columns.addressPending == true)
                .filter([OutboxNote.State.pending, OutboxNote.State.failed].contains(OutboxNote.Columns.state))
                .order(OutboxNote.Columns.id).limit(limit).fetchAll(db)
            return try notes.map { ($0, try FixRecord.fetchOne(db, id: $0.fixId)) }
        }
        var lookups = 0, consecutiveLookupFailures = 0
        for (note, record) in rows {
            if cancellation.isCancelled { throw Stop(reason: .cancelled) }
            let id = note.id!
            if let lookup = engine.placeLookup, let renderer = engine.renderer, let record,
               lookups < options.addressLookupsPerRun, consecutiveLookupFailures < 2 {
                lookups += 1
                do {
                    let fix = try record.fix()
                    let place = try await withDeadline(options.addressBudget) { try await lookup.place(for: fix) }
                    let draft = try renderer.render(fix: fix, place: place, uid: note.uid)
                    try await outbox.resolveAddress(id, placeName: draft.placeName, title: draft.title,
                                                    content: draft.content, now: engine.clock())
                    summary.addressesResolved += 1
                    consecutiveLookupFailures = 0
                    continue
                } catch let error as OutboxError {
                    if case .noteNotFound = error { continue }   // dropped while its address was looked up
                    throw error
                } catch {
                    consecutiveLookupFailures += 1
                    summary.addressLookupsFailed += 1
                    summary.lastAddressError = oneLine(error)
                    guard let tries = try await state.recordAddressFailure(id) else { continue }   // dropped
                    if tries < options.addressAttempts { continue }
                }
            } else if engine.placeLookup != nil && engine.renderer != nil && record != nil {
                continue   // lookup budget for this run used up: try in a later run
            }
            // Give up on the address: upload the note as rendered at log time.
            if try await releaseWithoutAddress(note) { summary.addressesResolved += 1 }
        }
    }

    /// Gives up on a note's address: it goes as rendered at log time. False when the note is
    /// gone (dropped meanwhile).
    func releaseWithoutAddress(_ note: OutboxNote) async throws -> Bool {
        do {
            try await outbox.resolveAddress(note.id!, placeName: note.placeName, title: note.title,
                                            content: note.content, now: engine.clock())
            return true
        } catch {
            if case .noteNotFound = error { return false }
            throw error
        }
    }

    // MARK: Ambiguous outcomes

    /// Notes left `sending` by a process that died mid-upload. This run holds the lock, so no
    /// one else is sending them: look each up, then synced or back in the queue.
    func resolveInterrupted() async throws {
        let sending = try await outbox.notes(state: .sending)
        for note in sending {
            if cancellation.isCancelled { throw Stop(reason: .cancelled) }
            let id = note.id!
            try await state.setNeedsLookup(id, true)
            needsLookup.insert(id)
            do {
                let guid = try await notebookGuid(for: note.notebookName)
                if let found = try await findUploaded(note, notebookGuid: guid) {
                    try await outbox.markSynced(id, guid: found.guid, usn: found.usn, now: engine.clock())
                    try await state.setNeedsLookup(id, false)
                    needsLookup.remove(id)
                    summary.alreadyPresent += 1
                    report(id, .alreadyPresent, guid: found.guid)
                } else {
                    // Not there: the request never arrived. Due again at once, no lookup needed.
                    try await outbox.markFailed(id, reason: "interrupted before Evernote stored it", retryAt: engine.clock(),
                                                now: engine.clock())
                    try await state.setNeedsLookup(id, false)
                    needsLookup.remove(id)
                }
            } catch let stop as Stop {
                throw stop
            } catch let error as OutboxError {
                throw error
            } catch {
                // Lookup failed: the note stays `sending` (and flagged) for the next run.
                try await handleRunLevel(error)
            }
        }
    }

    /// The uploaded copy of `note`, if an earlier attempt created it.
    func findUploaded(_ note: OutboxNote, notebookGuid: EDAM.Guid?) async throws -> (guid: String, usn: Int64?)? {
        let created = SyncEngine.milliseconds(note.createdAt)
        var filter = EDAM.NoteFilter(order: 1, ascending: false, words: "applicationData:\(SyncEngine.applicationDataKey)",
                                     notebookGuid: notebookGuid)
        filter.inactive = false
        var spec = EDAM.NotesMetadataResultSpec(includeCreated: true)
        spec.includeUpdateSequenceNum = true
        var offset: Int32 = 0
        while true {
            let client = self.client, start = offset, pageFilter = filter, pageSpec = spec
            let page = try await cancellation.cancellable {
                try await client.findNotesMetadata(filter: pageFilter, offset: start, maxNotes: 100, resultSpec: pageSpec)
            }
            for meta in page.notes {
                if let c = meta.created, c < created { return nil }   // newest first: past it
                if let c = meta.created, c != created { continue }
                do {
                    let value = try await client.getNoteApplicationDataEntry(guid: meta.guid, key: SyncEngine.applicationDataKey)
                    if value == note.uid { return (meta.guid, meta.updateSequenceNum.map(Int64.init)) }
                } catch EvernoteError.notFound {
                    continue
                }
            }
            offset += Int32(page.notes.count)
            if page.notes.isEmpty || offset >= page.totalNotes { return nil }
        }
    }

    // MARK: Notebooks

    /// The guid of the notebook named `name` (case-insensitive), created when missing; nil
    /// (the account's default notebook) when no name. Resolved once per run.
    func notebookGuid(for name: String?) async throws -> EDAM.Guid? {
        guard let name, !name.isEmpty else { return nil }
        let key = name.lowercased()
        if let guid = notebookGuids[key] { return guid }
        func match() -> EDAM.Guid? { notebooks?.first { $0.name?.lowercased() == key }?.guid }
        if notebooks == nil { notebooks = try await client.listNotebooks() }
        if let guid = match() { notebookGuids[key] = guid; return guid }
        do {
            let created = try await client.createNotebook(EDAM.Notebook(name: name))
            notebooks?.append(created)
            notebookGuids[key] = created.guid
            return created.guid
        } catch EvernoteError.dataConflict {
            // Created meanwhile by someone else (or an earlier attempt whose reply was lost).
            notebooks = try await client.listNotebooks()
            if let guid = match() { notebookGuids[key] = guid; return guid }
            throw EvernoteError.dataConflict(parameter: "Notebook.name")
        }
    }

    // MARK: Upload

    func uploadDue() async throws {
        var attempted: Set<Int64> = []
        let budget = options.maxNotes ?? Int.max
        while true {
            let left = budget - attempted.count
            if left <= 0 {
                if try await !outbox.dueNotes(now: engine.clock(), limit: 1, account: engine.options.account).isEmpty { throw Stop(reason: .maxNotes) }
                return
            }
            let batch = try await outbox.dueNotes(now: engine.clock(), limit: min(left, 100) + attempted.count, account: engine.options.account)
                .filter { !attempted.contains($0.id!) }
                .prefix(left)
            if batch.isEmpty { return }
            for note in batch {
                if cancellation.isCancelled { throw Stop(reason: .cancelled) }
                attempted.insert(note.id!)
                try await upload(note)
            }
        }
    }

    func upload(_ note: OutboxNote) async throws {
        let id = note.id!
        let notebookGuid: EDAM.Guid?
        do {
            notebookGuid = try await self.notebookGuid(for: note.notebookName)
        } catch let error as EvernoteError where FailureKind.classify(error).isNoteLevel {
            // The notebook cannot be created (bad name, limit): this note cannot go.
            guard try await claim(id) != nil else { return }
            summary.noteFailure(error)
            try await fail(id, reason: oneLine(error), kind: .rejected)
            return
        } catch {
            try await handleRunLevel(error)
            return
        }
        // pending with attempts > 0 only comes from `OutboxStore.requeueInterrupted` (a note
        // taken out of `sending` without this engine): its outcome is unknown too.
        if needsLookup.contains(id) || (note.state == .pending && note.attempts > 0) {
            do {
                if let found = try await findUploaded(note, notebookGuid: notebookGuid) {
                    guard try await claim(id) != nil else { return }
                    try await outbox.markSynced(id, guid: found.guid, usn: found.usn, now: engine.clock())
                    try await state.setNeedsLookup(id, false)
                    needsLookup.remove(id)
                    summary.alreadyPresent += 1
                    report(id, .alreadyPresent, guid: found.guid)
                    consecutiveFailures = 0
                    return
                }
            } catch {
                try await handleRunLevel(error)
                return
            }
        }
        guard let sending = try await claim(id) else { return }   // committed before the request
        do {
            // A client of its own, so a connection of its own: libcurl silently re-sends a request
            // on a reused keep-alive connection that the server closed without a reply, and for
            // createNote that re-send is a duplicate this engine could never see.
            let creator = engine.makeClient(engine.noteStoreURL, engine.token)
            let edam = SyncEngine.edamNote(for: sending, notebookGuid: notebookGuid)
            let created = try await cancellation.cancellable { try await creator.createNote(edam) }
            guard let guid = created.guid else { throw EvernoteError.missingResult(method: "createNote") }
            try await outbox.markSynced(id, guid: guid, usn: created.updateSequenceNum.map(Int64.init), now: engine.clock())
            if needsLookup.contains(id) {
                try await state.setNeedsLookup(id, false)
                needsLookup.remove(id)
            }
            summary.uploaded += 1
            report(id, .uploaded, guid: guid)
            consecutiveFailures = 0
        } catch let error as OutboxError {
            throw error
        } catch {
            let kind = FailureKind.classify(error)
            summary.lastError = oneLine(error)
            if kind.leavesNoteBehind { summary.noteFailure(error) }
            switch kind {
            case .cancelled:
                // Left `sending`: the next run looks it up.
                throw Stop(reason: .cancelled)
            case .ambiguous:
                try await state.setNeedsLookup(id, true)   // before leaving `sending`
                needsLookup.insert(id)
                try await fail(id, reason: oneLine(error), kind: kind)
                try countTransient()
            case .notProcessed(let networkDown):
                try await fail(id, reason: oneLine(error), kind: kind)
                if networkDown { throw Stop(reason: .networkDown) }
                try countTransient()
            case .rejected, .quota:
                try await fail(id, reason: oneLine(error), kind: kind)
            case .rateLimited(let seconds):
                let until = try await holdForRateLimit(seconds: seconds, error: error)
                try await outbox.markFailed(id, reason: oneLine(error), retryAt: until, now: engine.clock())
                summary.failed += 1   // queued again, due when the hold ends
                report(id, .failed, guid: nil)
                throw Stop(reason: .rateLimited)
            case .reauthenticate:
                // Not stored; due again as soon as the user has signed in.
                try await outbox.markFailed(id, reason: oneLine(error), retryAt: engine.clock(), now: engine.clock())
                summary.failed += 1
                report(id, .failed, guid: nil)
                throw SyncError.reauthenticationRequired(detail: oneLine(error))
            }
        }
    }

    /// pending or failed → sending, or nil when the note is no longer there to send: dropped
    /// (`enlog queue drop`) or changed by another command since this run listed it. Skipped,
    /// not an error: the user asked for it.
    func claim(_ id: Int64) async throws -> OutboxNote? {
        do {
            return try await outbox.markSending(id, now: engine.clock())
        } catch {
            switch error {
            case .noteNotFound, .invalidTransition:
                options.observer?(.notice("note \(id) skipped: dropped or changed while this sync ran"))
                return nil
            default:
                throw error
            }
        }
    }

    /// A failure not tied to one note (notebook listing, lookup): stop the run or carry on.
    func handleRunLevel(_ error: Error) async throws {
        if let stop = error as? Stop { throw stop }
        if error is OutboxError { throw error }
        switch FailureKind.classify(error) {
        case .reauthenticate, .cancelled: summary.lastError = oneLine(error)
        default: summary.noteFailure(error)
        }
        switch FailureKind.classify(error) {
        case .reauthenticate: throw SyncError.reauthenticationRequired(detail: oneLine(error))
        case .rateLimited(let seconds):
            _ = try await holdForRateLimit(seconds: seconds, error: error)
            throw Stop(reason: .rateLimited)
        case .cancelled: throw Stop(reason: .cancelled)
        case .notProcessed(networkDown: true): throw Stop(reason: .networkDown)
        default: throw Stop(reason: .serviceFailing)
        }
    }

    func holdForRateLimit(seconds: Int?, error: Error) async throws -> Date {
        let now = engine.clock()
        let until = now.addingTimeInterval(seconds.map(TimeInterval.init) ?? options.defaultRateLimitWait)
        try await state.setNotBefore(.init(until: until, reason: oneLine(error)), now: now)
        summary.notBefore = until
        return until
    }

    func countTransient() throws {
        consecutiveFailures += 1
        if consecutiveFailures >= options.maxConsecutiveFailures { throw Stop(reason: .serviceFailing) }
    }

    /// sending → failed with a backoff, or parked (rejected by Evernote, or out of attempts).
    func fail(_ id: Int64, reason: String, kind: FailureKind) async throws {
        let now = engine.clock()
        let current = try await outbox.note(id: id)
        summary.failed += 1
        if case .rejected = kind {
            try await outbox.park(id, reason: reason, now: now)
            summary.parked += 1
            report(id, .parked, guid: nil)
            return
        }
        if current.attempts >= options.maxAttempts {
            try await outbox.park(id, reason: "\(reason) (gave up after \(current.attempts) attempts)", now: now)
            summary.parked += 1
            report(id, .parked, guid: nil)
            return
        }
        let delay: TimeInterval
        if case .quota = kind {
            delay = options.backoffCap
        } else {
            delay = Self.backoff(attempts: current.attempts, base: options.backoffBase, cap: options.backoffCap)
        }
        try await outbox.markFailed(id, reason: reason, retryAt: now.addingTimeInterval(delay), now: now)
        report(id, .failed, guid: nil)
    }

    func report(_ id: Int64, _ action: SyncNoteAction, guid: String?) {
        options.observer?(.note(id: id, action: action, guid: guid))
    }

    /// Capped exponential backoff with jitter in [50 %, 100 %] of the capped value.
    static func backoff(attempts: Int, base: TimeInterval, cap: TimeInterval) -> TimeInterval {
        let raw = min(cap, base * pow(2, Double(max(attempts - 1, 0))))
        return raw * Double.random(in: 0.5...1.0)
    }
}

extension FailureKind {
    /// The note stays queued (or is parked) because of a failure, which decides the run's
    /// verdict; rate limits and refused tokens end the run with their own reasons instead.
    var leavesNoteBehind: Bool {
        switch self {
        case .ambiguous, .notProcessed, .rejected, .quota: return true
        case .rateLimited, .reauthenticate, .cancelled: return false
        }
    }

    /// Errors about this note (or its notebook) rather than the account or the network.
    var isNoteLevel: Bool {
        if case .rejected = self { return true }
        return false
    }
}

/// The last address a NoteStore call reached. Written from HTTP threads, read at the end of a run.
final class ConnectedAddress: Sendable {
    private let value = Mutex<String?>(nil)

    func record(_ ip: String) { value.withLock { $0 = ip } }
    var latest: String? { value.withLock { $0 } }
}
