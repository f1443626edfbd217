import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Auth
import Capture
import Compose
import Outbox
import Diary

/// The state of one pass over the outbox, created by `SyncEngine.run` and dropped when it
/// returns: the summary being counted, the notebooks listed so far, the notes flagged for the
/// exactly-once lookup, the count of transient failures in a row, and the NoteStore client for
/// listings and lookups. Owned by the run's task alone (so a class without locks). Its steps
/// live beside it: deferred addresses (`SyncDeferredAddresses.swift`), interrupted notes and the
/// lookup (`SyncExactlyOnce.swift`), notebooks (`SyncNotebooks.swift`), what a failure does to a
/// note and to the run (`SyncFailurePolicy.swift`); this file holds the order of the steps and
/// the upload of due notes.
final class SyncRun {
    let engine: SyncEngine
    let client: NoteStoreClient
    var summary = SyncSummary()
    var notebooks: [EDAM.Notebook]?
    var notebookGuids: [String: EDAM.Guid] = [:]
    var needsLookup: Set<Int64> = []
    /// Notes whose request went out twice: their lookup finds every copy.
    var sentTwice: Set<Int64> = []
    /// Notes put back in the queue after an ENEX export: their lookup searches every notebook.
    var exportedBefore: Set<Int64> = []
    var consecutiveFailures = 0
    let cancellation: CancellationFlag
    var outbox: OutboxStore { engine.outbox }
    var options: SyncOptions { engine.options }

    /// Ends the run early with a reason (not an error for the caller).
    struct Stop: Error { var reason: SyncSummary.StopReason }

    init(engine: SyncEngine, client: NoteStoreClient, cancellation: CancellationFlag) {
        self.engine = engine
        self.client = client
        self.cancellation = cancellation
    }

    func execute() async throws -> SyncSummary {
        let now = engine.clock()
        if let hold = try await outbox.rateLimitHold() {
            if hold.until > now {
                summary.notBefore = hold.until
                summary.lastError = hold.reason
                summary.stoppedBecause = .rateLimited
                return summary
            }
            try await outbox.liftRateLimitHold(now: now)
        }
        if options.dryRun {
            summary.due = try await outbox.dueCount(now: now, limit: options.maxNotes ?? Int.max, account: options.account)
                + outbox.notes(state: .sending).count
            summary.stoppedBecause = .dryRun
            return summary
        }
        do {
            try await resolveDeferredAddresses()
            try await makePendingMaps()
            if let observer = options.observer {
                // Interrupted notes are either found or due again, so counted once either way.
                let sending = try await outbox.notes(state: .sending).count
                let due = try await outbox.dueCount(now: engine.clock(), limit: options.maxNotes ?? Int.max,
                                                    account: options.account)
                observer(.started(total: sending + due))
            }
            needsLookup = try await outbox.notesNeedingLookup()
            sentTwice = try await outbox.notesSentTwice()
            exportedBefore = try await outbox.notesExportedBefore()
            try await resolveInterrupted()
            try await uploadDue()
        } catch let stop as Stop {
            summary.stoppedBecause = stop.reason
        }
        return summary
    }

    // MARK: Upload

    func uploadDue() async throws {
        var attempted: Set<Int64> = []
        let budget = options.maxNotes ?? Int.max
        // Batches grow 1, 2, 4 … up to `batchSize`: the first notes of a run go at once, and a
        // run killed early leaves few notes to look up.
        var size = 1
        var cursor: Int64?
        while true {
            let left = budget - attempted.count
            if left <= 0 {
                if try await !outbox.dueNotes(now: engine.clock(), limit: 1, account: engine.options.account).isEmpty { throw Stop(reason: .maxNotes) }
                return
            }
            // Oldest first, after the last note listed: a failed note whose retry falls due
            // during the run waits for the next run, like one failed in this run.
            let due = try await outbox.dueNotes(now: engine.clock(), limit: min(left, 100), account: engine.options.account,
                                                afterId: cursor)
                .filter { !attempted.contains($0.id!) }
                .prefix(left)
            cursor = due.last?.id ?? cursor
            if due.isEmpty { return }
            var start = due.startIndex
            while start < due.endIndex {
                if cancellation.isCancelled { throw Stop(reason: .cancelled) }
                let end = due.index(start, offsetBy: size, limitedBy: due.endIndex) ?? due.endIndex
                size = min(size * 2, max(1, options.batchSize))
                let batch = Array(due[start..<end])
                attempted.formUnion(batch.map { $0.id! })
                try await uploadBatch(batch)
                start = end
            }
        }
    }

    /// A note ready to go: its notebook known, and looked up first when an earlier attempt may
    /// have reached Evernote.
    struct Ready {
        var note: OutboxNote
        var notebookGuid: EDAM.Guid?
    }

    /// Uploads up to `batchSize` notes with two durable writes: all of them marked `sending` in
    /// one transaction before the first request, and the results recorded in one transaction
    /// after the last (a note that fails is recorded at once, as before). A process killed in
    /// between leaves at most `batchSize` notes `sending`: the next run looks each one up.
    func uploadBatch(_ notes: [OutboxNote]) async throws {
        var ready: [Ready] = []
        for note in notes {
            if cancellation.isCancelled { throw Stop(reason: .cancelled) }
            if let one = try await prepare(note) { ready.append(one) }
        }
        guard !ready.isEmpty else { return }
        let notebooks = Dictionary(ready.map { ($0.note.id!, $0.notebookGuid) }, uniquingKeysWith: { a, _ in a })
        let claimed = try await outbox.markSending(batch: ready.map { $0.note.id! }, now: engine.clock())   // before any request
        if claimed.count < ready.count {
            let gone = Set(ready.map { $0.note.id! }).subtracting(claimed.map { $0.id! })
            for id in gone.sorted() { options.observer?(.notice("note \(id) skipped: dropped or changed while this sync ran")) }
        }
        let resources = try await outbox.resources(ofNotes: claimed.map { $0.id! })
        var results: [OutboxStore.SyncedNote] = []
        var sent = 0
        do {
            for note in claimed {
                if cancellation.isCancelled { throw Stop(reason: .cancelled) }
                sent += 1
                if let result = try await send(note, notebookGuid: notebooks[note.id!] ?? nil, resources: resources[note.id!] ?? []) {
                    results.append(result)
                }
            }
        } catch {
            // Whatever stops the run: what went through is recorded, what never left goes back.
            try await outbox.markSynced(results, now: engine.clock())
            try await outbox.releaseUnsent(claimed.dropFirst(sent).map { $0.id! }, now: engine.clock())
            throw error
        }
        try await outbox.markSynced(results, now: engine.clock())
    }

    /// The notebook, and the exactly-once lookup when the note needs one. nil when the note was
    /// dealt with here (found on Evernote, its notebook refused, or the run must stop).
    func prepare(_ note: OutboxNote) async throws -> Ready? {
        let id = note.id!
        let notebookGuid: EDAM.Guid?
        do {
            notebookGuid = try await self.notebookGuid(for: note.notebookName)
        } catch let error as EvernoteError where FailureKind.classify(error).isNoteLevel {
            // The notebook cannot be created (bad name, limit): this note cannot go.
            guard try await claim(id) != nil else { return nil }
            summary.noteFailure(error)
            try await fail(id, reason: oneLine(error), kind: .rejected)
            return nil
        } catch {
            try await handleRunLevel(error)
            return nil
        }
        // pending with attempts > 0 only comes from `OutboxStore.requeueInterrupted` (a note
        // taken out of `sending` without this engine): its outcome is unknown too.
        if needsLookup.contains(id) || (note.state == .pending && note.attempts > 0) {
            do {
                if let found = try await findUploaded(note, notebookGuid: notebookGuid) {
                    guard try await claim(id) != nil else { return nil }
                    try await outbox.markSynced(id, guid: found.guid, usn: found.usn, now: engine.clock())
                    try await outbox.setNeedsLookup(id, false)
                    needsLookup.remove(id)
                    summary.alreadyPresent += 1
                    report(id, .alreadyPresent, guid: found.guid)
                    consecutiveFailures = 0
                    return nil
                }
            } catch {
                try await handleRunLevel(error)
                return nil
            }
        }
        return Ready(note: note, notebookGuid: notebookGuid)
    }

    /// One `createNote` for a note already `sending`, on the run's kept-alive connection. libcurl
    /// is stopped from sending it twice (see `HTTPConfiguration.rewindableBodies`); should a
    /// reply still come back to a request that went out twice, the note is looked up before
    /// anything else (`settleResent`). Returns what to record, or nil when the note failed
    /// (already recorded) or was settled here.
    func send(_ sending: OutboxNote, notebookGuid: EDAM.Guid?, resources: [NoteResource]) async throws -> OutboxStore.SyncedNote? {
        let id = sending.id!
        let resendsBefore = engine.resends.count
        do {
            let edam = try SyncEngine.edamNote(for: sending, notebookGuid: notebookGuid, resources: resources)
            let client = self.client
            let created = try await cancellation.cancellable { try await client.createNote(edam) }
            guard let guid = created.guid else { throw EvernoteError.missingResult(method: "createNote") }
            if engine.resends.count != resendsBefore {
                return try await settleResent(sending, notebookGuid: notebookGuid, created: created)
            }
            needsLookup.remove(id)
            summary.uploaded += 1
            report(id, .uploaded, guid: guid)
            consecutiveFailures = 0
            return OutboxStore.SyncedNote(id: id, guid: guid, usn: created.updateSequenceNum.map(Int64.init))
        } catch let error as OutboxError {
            throw error
        } catch let stop as Stop {
            throw stop
        } catch {
            var kind = FailureKind.classify(error)
            // An answer to a request that went out twice says nothing about the first copy.
            if engine.resends.count != resendsBefore, kind.leavesNoteBehind { kind = .ambiguous }
            try await handleFailure(id, error: error, kind: kind)
            return nil
        }
    }

    /// What a failed `createNote` does to its note and to the run.
    func handleFailure(_ id: Int64, error: Error, kind: FailureKind) async throws {
        summary.lastError = oneLine(error)
        if kind.leavesNoteBehind { summary.noteFailure(error) }
        switch kind {
        case .cancelled:
            // Left `sending`: the next run looks it up.
            throw Stop(reason: .cancelled)
        case .ambiguous:
            try await outbox.setNeedsLookup(id, true)   // before leaving `sending`
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

    func report(_ id: Int64, _ action: SyncNoteAction, guid: String?) {
        options.observer?(.note(id: id, action: action, guid: guid))
    }
}
