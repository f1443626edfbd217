import Foundation
import Support
import EvernoteAPI
import Compose
import Outbox
import Diary
import Sync

/// `enlog export --enex FILE`: the outbox's notes as one ENEX 4.0 file, which every Evernote
/// client (and Joplin, Obsidian's importer, Apple Notes, UpNote, Notion) imports without an
/// account, a key or a network.
///
/// Streamed: notes are read a page at a time and each is written as soon as it is read, its
/// resources one at a time and their base64 a slice at a time, so memory does not grow with the
/// size of the outbox. With `markExported` (`--new`) the file is the notes' destination: once it
/// is complete on disk its notes become `exported`, which sync leaves alone, so a note goes
/// either into the file or to the NoteStore, never both. That export holds the sync lock
/// throughout, so no sync takes a note while it is being written.
package struct ENEXExport: Sendable {
    package enum Destination: Sendable, Equatable {
        case standardOutput
        case file(String)
    }

    package enum Event: Sendable, Equatable {
        /// Before the first note: how many notes the selection holds.
        case started(total: Int)
        case written(id: Int64, title: String)
        /// A note that cannot be written as ENEX Evernote imports; it stays as it was.
        case leftOut(id: Int64, reason: String)
    }

    package struct Summary: Sendable {
        /// The file's absolute path, or "-".
        package var file = ""
        package var notes = 0
        package var digests = 0
        package var resources = 0
        package var bytes = 0
        /// The notes marked `exported` (`markExported` only).
        package var marked: [Int64] = []
        /// Notes that went without the address or map they were still waiting for.
        package var withoutPendingAddressOrMap = 0
        package var leftOut: [Int64: String] = [:]
        package var firstLeftOut: (id: Int64, reason: String)? {
            leftOut.min { $0.key < $1.key }.map { ($0.key, $0.value) }
        }
    }

    let outbox: OutboxStore
    let destination: Destination
    let selection: ExportSelection
    let markExported: Bool
    /// Fills the address of a note still waiting for it, or renders it with its coordinates
    /// alone: no note goes into the file "Address pending". Nil: notes go as queued.
    let addresses: ExportAddresses?
    let clock: @Sendable () -> Date

    static let pageSize = 50

    /// - Parameter markExported: take only queued notes (`ExportSelection.queued`, within the
    ///   rest of `selection`) and mark them `exported` once the file is complete.
    package init(outbox: OutboxStore, destination: Destination, selection: ExportSelection, markExported: Bool,
                addresses: ExportAddresses? = nil, clock: @escaping @Sendable () -> Date = { Date() }) {
        self.addresses = addresses
        self.outbox = outbox
        self.destination = destination
        var selection = selection
        if markExported { selection.states = (selection.states ?? ExportSelection.queued).intersection(ExportSelection.queued) }
        self.selection = selection
        self.markExported = markExported
        self.clock = clock
    }

    /// Throws `ExportError`, `OutboxError`, and `SyncError.syncInProgress` when marking while a
    /// sync runs. Notes left out are in the summary, not thrown: the caller decides.
    package func run(observer: @Sendable (Event) -> Void = { _ in }) async throws -> Summary {
        let lock = markExported ? try SyncLock(databasePath: outbox.path) : nil
        defer { lock?.release() }
        let file = try ENEXFile(destination == .standardOutput ? .standardOutput : .path(destination.path), replaces: !markExported)
        var summary = Summary()
        summary.file = file.name
        observer(.started(total: try await outbox.exportCount(selection)))
        let waitingForMaps = try await outbox.noteIdsWithPendingMaps()
        let writer = ENEXNoteWriter()
        var written: [Int64] = []
        var cursor: Int64?
        while true {
            let page = try await outbox.exportPage(selection, afterId: cursor, limit: Self.pageSize)
            guard let last = page.last else { break }
            cursor = last.id
            for queued in page {
                let id = queued.id!
                let note = try await addresses?.complete(queued) ?? queued
                var resources: [NoteResource] = []
                for resourceId in try await outbox.resourceIds(of: id) {
                    if let resource = try await outbox.resource(id: resourceId) { resources.append(resource) }
                }
                if let problem = writer.problem(note, resources: resources) {
                    summary.leftOut[id] = problem
                    observer(.leftOut(id: id, reason: problem))
                    continue
                }
                if written.isEmpty { try file.write(ENEXNoteWriter.header(exportDate: clock())) }
                try writer.write(note, resources: resources, to: file)
                written.append(id)
                summary.notes += 1
                if try await outbox.digestDay(of: id) != nil { summary.digests += 1 }
                summary.resources += resources.count
                if queued.addressPending || waitingForMaps.contains(id) { summary.withoutPendingAddressOrMap += 1 }
                observer(.written(id: id, title: note.title))
            }
        }
        guard !written.isEmpty else {
            // ENEX holds one note at least: no notes, no file.
            file.discard()
            return summary
        }
        try file.write(ENEXNoteWriter.footer)
        try file.commit()
        summary.bytes = file.bytesWritten
        if markExported {
            do {
                summary.marked = try await outbox.markExported(written, file: file.name, now: clock())
            } catch {
                // Unmarked notes in a file would go out again with the next --new: no file then.
                file.withdraw()
                throw error
            }
        }
        return summary
    }
}

extension ENEXExport.Destination {
    var path: String {
        switch self {
        case .standardOutput: return "-"
        case .file(let path): return path
        }
    }
}
