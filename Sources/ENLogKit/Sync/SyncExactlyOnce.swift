import Foundation

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
/// `created` from the outbox row, so it is the same on every attempt), then
/// `getNoteApplicationDataEntry(guid, "enlog.id") == uid`. Found: marked synced; not found:
/// created. (On the real service the search index may lag a just-created note by seconds; a
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
}
