import Foundation

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
            try await outbox.setRateLimitHold(nil, now: now)
        }
        if options.dryRun {
            summary.due = try await outbox.dueNotes(now: now, limit: options.maxNotes ?? Int.max, account: options.account).count
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
                let due = try await outbox.dueNotes(now: engine.clock(), limit: options.maxNotes ?? Int.max,
                                                    account: options.account).count
                observer(.started(total: sending + due))
            }
            needsLookup = try await outbox.notesNeedingLookup()
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
                    try await outbox.setNeedsLookup(id, false)
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
            let edam = try await SyncEngine.edamNote(for: sending, notebookGuid: notebookGuid,
                                                     resources: try await outbox.resources(of: id))
            let created = try await cancellation.cancellable { try await creator.createNote(edam) }
            guard let guid = created.guid else { throw EvernoteError.missingResult(method: "createNote") }
            try await outbox.markSynced(id, guid: guid, usn: created.updateSequenceNum.map(Int64.init), now: engine.clock())
            if needsLookup.contains(id) {
                try await outbox.setNeedsLookup(id, false)
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
