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

// Maps made at sync time, and the note's resources on their way to Evernote. Kept apart from
// the engine's upload loop: the engine calls `makePendingMaps()` after deferred addresses and
// `edamResources` when it builds the note.

extension SyncRun {
    /// Notes logged while their map could not be made (offline, tile server down): make it now
    /// (bounded by the map settings' budget), re-render and re-validate the note with it, and
    /// store both in one transaction (`attachMap`). After `mapAttempts` failed runs, or with
    /// maps off or the settings unusable, the note goes without its map, and the summary says so.
    /// A note still waiting for its address waits for that first (its map is rendered with it).
    func makePendingMaps() async throws {
        let rows = try await outbox.notesWithPendingMaps(limit: options.maxNotes ?? 1000)
        var consecutiveFailures = 0
        for (note, pending, record) in rows where !note.addressPending {
            if cancellation.isCancelled { throw Stop(reason: .cancelled) }
            let id = note.id!
            guard let maps = options.maps, let renderer = engine.renderer, let record else {
                try await giveUpMap(id, reason: "maps are off")
                continue
            }
            // The tile server failed twice in a row: the others wait for the next run, uncounted.
            if consecutiveFailures >= 2 { continue }
            do {
                if let (name, device) = try await outbox.digestKey(of: id) {
                    // A day's digest (a device's, or the whole history's): made again with its
                    // route, in the time zone of its notes.
                    guard let day = TrackDay(name, timeZone: renderer.style.timeZone) else {
                        throw DigestError(day: name, device: device)
                    }
                    try await DayDigest(outbox: outbox, style: renderer.style, maps: maps, account: note.account,
                                        stays: options.stays, device: device).remade(id, day: day, now: engine.clock())
                } else {
                    let fix = try record.fix()
                    let image = try await maps.render(fix)
                    let draft = try renderer.render(fix: fix, place: pending.place, uid: note.uid, map: MapReference(image),
                                                    entry: try await outbox.diaryEntry(of: id))
                    try await outbox.attachMap(id, resource: NoteResource(map: image), title: draft.title,
                                               content: draft.content, now: engine.clock())
                }
                summary.mapsMade += 1
                consecutiveFailures = 0
            } catch let error as MapError where error.isRetryable {
                consecutiveFailures += 1
                summary.mapsFailed += 1
                summary.lastMapError = error.reason
                guard let tries = try await outbox.recordMapFailure(id, reason: error.reason) else { continue }
                if tries >= options.mapAttempts {
                    try await giveUpMap(id, reason: "\(tries) failed attempts, the last: \(error.reason)")
                }
            } catch let error as OutboxError {
                if case .noteNotFound = error { continue }   // dropped meanwhile
                throw error
            } catch {
                // Settings that cannot work, a stored fix that is not one, a template the map
                // breaks: trying again does not help.
                try await giveUpMap(id, reason: oneLine(error))
            }
        }
        await options.maps?.finishCaching()
        summary.waitingForMap = try await outbox.pendingMapCount()
    }

    private func giveUpMap(_ id: Int64, reason: String) async throws {
        try await outbox.releaseWithoutMap(id)
        summary.mapsGivenUp += 1
        summary.lastMapError = reason
    }
}

extension SyncEngine {
    /// `edamNote(for:notebookGuid:)` with the note's resources, checked against Evernote's limits.
    static func edamNote(for note: OutboxNote, notebookGuid: EDAM.Guid?, resources: [NoteResource]) throws(ResourceLimitError) -> EDAM.Note {
        var edam = edamNote(for: note, notebookGuid: notebookGuid)
        if !resources.isEmpty { edam.resources = try edamResources(resources, content: note.content) }
        return edam
    }

    /// The EDAM resources of a note, after checking Evernote's limits: body, size, MD5 (raw
    /// bytes, the same digest as the `en-media` hash), mime, size in pixels, file name and the
    /// map's position.
    package static func edamResources(_ resources: [NoteResource], content: String) throws(ResourceLimitError) -> [EDAM.Resource] {
        try ResourceLimits.check(resources, content: content)
        return resources.map { resource in
            let body = [UInt8](resource.body)
            var edam = EDAM.Resource(data: EDAM.Data(bodyHash: MapImage.md5Bytes(body), size: Int32(body.count), body: body),
                                     mime: resource.mime, attributes: edamAttributes(of: resource))
            edam.width = resource.width.flatMap { Int16(exactly: $0) }
            edam.height = resource.height.flatMap { Int16(exactly: $0) }
            return edam
        }
    }

    /// A resource's attributes as uploaded (and as an ENEX export writes them): its file name,
    /// whether it shows as an attachment, and where it was made.
    package static func edamAttributes(of resource: NoteResource) -> EDAM.ResourceAttributes {
        var attributes = EDAM.ResourceAttributes()
        attributes.fileName = resource.fileName
        if resource.isAttachment { attributes.attachment = true }
        attributes.latitude = resource.latitude
        attributes.longitude = resource.longitude
        return attributes
    }
}
