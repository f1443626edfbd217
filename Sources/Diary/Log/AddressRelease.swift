import Foundation
import Support
import Configuration
import Capture
import Compose
import Outbox

/// A queued note that waited for its address and goes without it (no geocoder, the lookups
/// failed for good, an export): rendered again with its coordinates alone, so no note reaches
/// Evernote or an ENEX file saying "Address pending". Sync and export both go through here.
package enum AddressRelease {
    /// The note as it goes: title and content rendered again from its fix, map, words and files,
    /// with `place` when one was found, else with `addressPending` false. Nil when it cannot be
    /// rendered again (its fix is gone, the template now fails): it then goes as it was queued.
    package static func draft(of note: OutboxNote, fix record: FixRecord?, place: Place? = nil, outbox: OutboxStore,
                             renderer: NoteRenderer) async throws(OutboxError) -> NoteDraft? {
        guard let id = note.id, let record, let fix = try? record.fix() else { return nil }
        let map = try await outbox.mapReference(of: id)
        let entry = try await outbox.diaryEntry(of: id)
        let named = try await outbox.userPlaceName(latitude: fix.latitude, longitude: fix.longitude)
        return try? renderer.render(fix: fix, place: place, uid: note.uid, map: map, entry: entry, addressPending: false,
                                    placeName: named)
    }

    /// Releases the notes without their address, each rendered again with its coordinates alone
    /// (those that cannot be go as queued). Returns how many were released; a note dropped or
    /// sent meanwhile is left out.
    package static func release(_ rows: [(note: OutboxNote, fix: FixRecord?)], outbox: OutboxStore, renderer: NoteRenderer?,
                               now: Date) async throws(OutboxError) -> Int {
        var asQueued: [Int64] = []
        var released = 0
        for (note, record) in rows {
            guard let id = note.id else { continue }
            guard let renderer, let draft = try await draft(of: note, fix: record, outbox: outbox, renderer: renderer) else {
                asQueued.append(id)
                continue
            }
            do {
                try await outbox.resolveAddress(id, placeName: nil, title: draft.title, content: draft.content, now: now)
                released += 1
            } catch {
                switch error {
                case .noteNotFound, .invalidTransition: continue   // dropped or sent meanwhile
                default: throw error
                }
            }
        }
        return released + (try await outbox.releaseWithoutAddress(asQueued, now: now)).count
    }
}

/// Notes an ENEX export writes while they still wait for their address. Exported for good
/// (`export --new`), a note first has its address looked up (at most `lookups` an export, each
/// within the geocoder's budget) and stored; a copy (no `--new`) changes nothing in the outbox
/// and asks no geocoder. Either way a note without its address goes with its coordinates alone.
package actor ExportAddresses {
    let outbox: OutboxStore
    let renderer: NoteRenderer
    let lookup: (any PlaceLookup)?
    let budget: Duration
    var lookupsLeft: Int
    let keeps: Bool

    package init(outbox: OutboxStore, renderer: NoteRenderer, lookup: (any PlaceLookup)?, budget: Duration,
                lookups: Int = 20, keeps: Bool) {
        self.outbox = outbox
        self.renderer = renderer
        self.lookup = keeps ? lookup : nil
        self.budget = budget
        self.lookupsLeft = lookups
        self.keeps = keeps
    }

    /// `note` as it goes into the file: unchanged unless it waits for its address.
    package func complete(_ note: OutboxNote) async throws -> OutboxNote {
        guard note.addressPending, let id = note.id else { return note }
        let record = try await outbox.fixRecord(id: note.fixId)
        var place: Place?
        if let lookup, lookupsLeft > 0, let fix = try? record?.fix() {
            lookupsLeft -= 1
            place = try? await withDeadline(budget) { try await lookup.place(for: fix) }
        }
        var draft = try await AddressRelease.draft(of: note, fix: record, place: place, outbox: outbox, renderer: renderer)
        if draft == nil, place != nil {
            place = nil
            draft = try await AddressRelease.draft(of: note, fix: record, outbox: outbox, renderer: renderer)
        }
        guard let draft else { return note }
        var completed = note
        completed.title = draft.title
        completed.content = draft.content
        completed.addressPending = false
        if place != nil, completed.placeName == nil { completed.placeName = draft.placeName }
        if keeps {
            if let place { try await outbox.rememberPlace(id, place) }
            completed = try await outbox.resolveAddress(id, placeName: place == nil ? nil : draft.placeName, title: draft.title,
                                                        content: draft.content)
        }
        return completed
    }
}
