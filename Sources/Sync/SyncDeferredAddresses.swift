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

extension SyncRun {
    // MARK: Deferred addresses

    /// Notes queued before their address was known: look it up (bounded), re-render and
    /// re-validate, store (`resolveAddress`). After `addressAttempts` failed lookups (counted
    /// once per run), or with no lookup configured, the note is released without it: rendered
    /// again with its coordinates alone (`AddressRelease`), never uploaded "Address pending".
    func resolveDeferredAddresses() async throws {
        let rows = try await outbox.notesWaitingForAddress(limit: options.maxNotes ?? 1000)
        guard engine.placeLookup != nil, engine.renderer != nil else {
            // No lookup to make: every waiting note goes with its coordinates alone.
            summary.addressesResolved += try await AddressRelease.release(rows, outbox: outbox, renderer: engine.renderer,
                                                                          now: engine.clock())
            return
        }
        var lookups = 0, consecutiveLookupFailures = 0
        // Notes going without their address, released together at the end.
        var release: [(note: OutboxNote, fix: FixRecord?)] = []
        do {
            try await lookUp(rows, release: &release, lookups: &lookups, consecutiveLookupFailures: &consecutiveLookupFailures)
        } catch {
            summary.addressesResolved += try await AddressRelease.release(release, outbox: outbox, renderer: engine.renderer,
                                                                          now: engine.clock())
            throw error
        }
        summary.addressesResolved += try await AddressRelease.release(release, outbox: outbox, renderer: engine.renderer,
                                                                      now: engine.clock())
    }

    private func lookUp(_ rows: [(note: OutboxNote, fix: FixRecord?)], release: inout [(note: OutboxNote, fix: FixRecord?)],
                        lookups: inout Int, consecutiveLookupFailures: inout Int) async throws {
        for (note, record) in rows {
            if cancellation.isCancelled { throw Stop(reason: .cancelled) }
            let id = note.id!
            if let lookup = engine.placeLookup, let renderer = engine.renderer, let record,
               lookups < options.addressLookupsPerRun, consecutiveLookupFailures < 2 {
                lookups += 1
                do {
                    let fix = try record.fix()
                    let place = try await withDeadline(options.addressBudget) { try await lookup.place(for: fix) }
                    let draft = try renderer.render(fix: fix, place: place, uid: note.uid, map: try await outbox.mapReference(of: id),
                                                    entry: try await outbox.diaryEntry(of: id),
                                                    placeName: try await outbox.userPlaceName(latitude: fix.latitude, longitude: fix.longitude))
                    try await outbox.rememberPlace(id, place)
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
                    guard let tries = try await outbox.recordAddressFailure(id) else { continue }   // dropped
                    if tries < options.addressAttempts { continue }
                }
            } else if engine.placeLookup != nil && engine.renderer != nil && record != nil {
                continue   // lookup budget for this run used up: try in a later run
            }
            // Give up on the address: the note goes with its coordinates alone.
            release.append((note, record))
        }
    }
}
