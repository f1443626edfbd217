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

/// The exactly-once lookup.
///
/// Exactly once: every note carries its outbox uid in `applicationData["enlog.id"]`, is marked
/// `sending` (committed) before `createNote`, and `synced` with the returned guid after. When
/// the outcome of a `createNote` is unknown — a process killed mid-request (the note is still
/// `sending` at the next run, which holds the lock, so nobody else is sending it), a timeout, a
/// lost connection, an unreadable reply, a non-200 HTTP status — the note is flagged
/// (`OutboxStore.setNeedsLookup`, written before it leaves `sending`) and its next attempt first
/// searches Evernote: `findNotesMetadata(words: "applicationData:enlog.id", notebook, order
/// CREATED descending)` narrowed to notes whose `created` equals the note's own (the engine sets
/// `created` from the outbox row, `SyncEngine.created`, so it is the same on every attempt), then
/// `getNoteApplicationDataEntry(guid, "enlog.id") == uid`. Found: marked synced; not found:
/// created. A note that went out in an ENEX file before `queue retry` put it back may have been
/// imported into any notebook, with `created` to the second (ENEX has no milliseconds): its
/// search spans every notebook, and `created` is matched to the second for every note (the
/// `enlog.id` entry is what decides). (On the real service the search index may lag a just-created note by seconds; a
/// killed `enlog sync` restarted at once could then create a duplicate — Evernote documents no
/// consistent lookup by applicationData.)
extension SyncRun {
    // MARK: Ambiguous outcomes

    /// Notes left `sending` by a process that died mid-upload. This run holds the lock, so no
    /// one else is sending them: look each up, then synced or back in the queue.
    func resolveInterrupted() async throws {
        let sending = try await outbox.notes(state: .sending)
        for note in sending {
            if cancellation.isCancelled { throw Stop(reason: .cancelled) }
            let id = note.id!
            try await outbox.setNeedsLookup(id, true)
            needsLookup.insert(id)
            do {
                let guid = try await notebookGuid(for: note.notebookName)
                if let found = try await findUploaded(note, notebookGuid: guid) {
                    try await outbox.markSynced(id, guid: found.guid, usn: found.usn, now: engine.clock())
                    try await outbox.setNeedsLookup(id, false)
                    needsLookup.remove(id)
                    summary.alreadyPresent += 1
                    report(id, .alreadyPresent, guid: found.guid)
                } else {
                    // Not there: the request never arrived. Due again at once, no lookup needed.
                    try await outbox.markFailed(id, reason: "interrupted before Evernote stored it", retryAt: engine.clock(),
                                                now: engine.clock())
                    try await outbox.setNeedsLookup(id, false)
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

    /// The uploaded copy of `note`, if an earlier attempt created it. Should the service hold
    /// more than one (a request that went out twice), the oldest is kept, the others are moved
    /// to the trash, and the run says so as a warning: never a silent duplicate.
    /// Only a note whose request went out twice (`sentTwice`) can have more than one copy: for
    /// the others the search stops at the first.
    func findUploaded(_ note: OutboxNote, notebookGuid: EDAM.Guid?) async throws -> (guid: String, usn: Int64?)? {
        let copies = try await findCopies(note, notebookGuid: exportedBefore.contains(note.id!) ? nil : notebookGuid,
                                          all: sentTwice.contains(note.id!))
        guard let kept = copies.first else { return nil }
        if copies.count > 1 {
            let client = self.client
            for extra in copies.dropFirst() {
                _ = try await cancellation.cancellable { try await client.deleteNote(guid: extra.guid) }
            }
            summary.duplicatesRemoved += copies.count - 1
            options.observer?(.warning("note \(note.id!) was on Evernote \(counted(copies.count, "time")) (a request sent twice): "
                + "kept the oldest, \(kept.guid); moved \(copies.dropFirst().map(\.guid).joined(separator: ", ")) to the trash"))
        }
        return kept
    }

    /// Every active copy of `note` on the service, oldest (lowest update sequence number) first.
    func findCopies(_ note: OutboxNote, notebookGuid: EDAM.Guid?, all: Bool) async throws -> [(guid: String, usn: Int64?)] {
        // The whole second `created` falls in: an ENEX import keeps no milliseconds. Earlier enlog
        // versions sent the time queued as `created`: a note one left `sending` is found by that too.
        let createdSeconds = Set([SyncEngine.created(note), note.createdAt].map { SyncEngine.milliseconds($0) / 1000 })
        let earliestSecond = createdSeconds.min()!
        var filter = EDAM.NoteFilter(order: 1, ascending: false, words: "applicationData:\(SyncEngine.applicationDataKey)",
                                     notebookGuid: notebookGuid)
        filter.inactive = false
        var spec = EDAM.NotesMetadataResultSpec(includeCreated: true)
        spec.includeUpdateSequenceNum = true
        var copies: [(guid: String, usn: Int64?)] = []
        var offset: Int32 = 0
        pages: while true {
            let client = self.client, start = offset, pageFilter = filter, pageSpec = spec
            let page = try await cancellation.cancellable {
                try await client.findNotesMetadata(filter: pageFilter, offset: start, maxNotes: 100, resultSpec: pageSpec)
            }
            for meta in page.notes {
                if let c = meta.created, c < earliestSecond * 1000 { break pages }   // newest first: past it
                if let c = meta.created, !createdSeconds.contains(InstantText.floorDivision(c, 1000)) { continue }
                do {
                    let value = try await client.getNoteApplicationDataEntry(guid: meta.guid, key: SyncEngine.applicationDataKey)
                    if value == note.uid {
                        copies.append((meta.guid, meta.updateSequenceNum.map(Int64.init)))
                        if !all { break pages }
                    }
                } catch EvernoteError.notFound {
                    continue
                }
            }
            offset += Int32(page.notes.count)
            if page.notes.isEmpty || offset >= page.totalNotes { break }
        }
        return copies.sorted { ($0.usn ?? .max) < ($1.usn ?? .max) }
    }

    /// A reply came back to a `createNote` that went out twice (`HTTPResponse.resent`): the
    /// service may hold two copies. Looked up before anything else is sent; the duplicate, if
    /// any, goes (`findUploaded`). When the lookup fails the note is flagged and failed, so the
    /// next run looks it up again.
    func settleResent(_ note: OutboxNote, notebookGuid: EDAM.Guid?, created: EDAM.Note) async throws -> OutboxStore.SyncedNote? {
        let id = note.id!
        options.observer?(.notice("note \(id): the request went out twice (the kept-alive connection died); looking it up"))
        // Durable before the lookup: killed now, the next run still looks for every copy.
        try await outbox.setSentTwice(id)
        sentTwice.insert(id)
        do {
            let found = try await findUploaded(note, notebookGuid: notebookGuid)
            let guid = found?.guid ?? created.guid!
            needsLookup.remove(id)
            sentTwice.remove(id)
            summary.uploaded += 1
            report(id, .uploaded, guid: guid)
            consecutiveFailures = 0
            return OutboxStore.SyncedNote(id: id, guid: guid, usn: found.map { $0.usn } ?? created.updateSequenceNum.map(Int64.init))
        } catch let error as OutboxError {
            throw error
        } catch {
            let kind: FailureKind
            if case .cancelled = FailureKind.classify(error) { kind = .cancelled } else { kind = .ambiguous }
            try await handleFailure(id, error: error, kind: kind)
            return nil
        }
    }
}
