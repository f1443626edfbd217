import Foundation
import Support
import EvernoteAPI
import Configuration
import Capture
import Compose

/// How outbox notes and logged fixes are shown: one line each for people, JSON for scripts.
package enum OutboxJSON {
    /// A note without its ENML body (`enlog queue show ID` prints that).
    struct NoteSummary: Encodable {
        var id: Int64?
        var uid: String
        var state: OutboxNote.State
        var title: String
        var notebook: String?
        var tags: [String]
        var latitude: Double?
        var longitude: Double?
        var addressPending: Bool
        var mapPending: Bool
        var attempts: Int
        var guid: String?
        var lastError: String?
        var nextAttemptAt: Date?
        /// When it was queued.
        var createdAt: Date
        /// The moment it is about (its fix's time, a digest's day): its `created` in Evernote and ENEX.
        var subjectDate: Date?
        /// Where and when an exported note went (`export --enex --new`).
        var exportedTo: String?
        var exportedAt: Date?

        init(_ note: OutboxNote, mapPending: Bool, export: ENEXExportRecord? = nil) {
            id = note.id; uid = note.uid; state = note.state; title = note.title; notebook = note.notebookName
            tags = note.tags; latitude = note.latitude; longitude = note.longitude; addressPending = note.addressPending
            self.mapPending = mapPending
            attempts = note.attempts; guid = note.guid; lastError = note.lastError; nextAttemptAt = note.nextAttemptAt
            createdAt = note.createdAt
            subjectDate = note.subjectDate
            if note.state == .exported, let export {
                exportedTo = export.file
                exportedAt = export.exportedAt
            }
        }
    }

    /// - Parameters:
    ///   - mapsPending: the ids of the notes waiting for their map (`noteIdsWithPendingMaps`).
    ///   - exports: where the exported notes went (`exportRecords`).
    package static func encode(_ notes: [OutboxNote], mapsPending: Set<Int64> = [],
                              exports: [Int64: ENEXExportRecord] = [:]) throws -> String {
        try JSONOutput.encode(notes.map {
            NoteSummary($0, mapPending: $0.id.map(mapsPending.contains) ?? false, export: $0.id.flatMap { exports[$0] })
        })
    }
    package static func encode(_ note: OutboxNote, mapPending: Bool = false) throws -> String {
        try JSONOutput.encode(NoteSummary(note, mapPending: mapPending))
    }
    package static func encode(_ fixes: [FixRecord]) throws -> String { try JSONOutput.encode(fixes) }

    /// `queue show --json`: the summary `queue list --json` gives, plus the ENML body.
    /// With its resources (without their bytes) and whether its map is still to be made.
    package static func encodeWithContent(_ note: OutboxNote, resources: [NoteResource] = [], mapPending: Bool = false,
                                         export: ENEXExportRecord? = nil) throws -> String {
        struct Full: Encodable {
            var summary: NoteSummary
            var content: String
            var resources: [ResourceSummary]
            func encode(to encoder: any Encoder) throws {
                try summary.encode(to: encoder)
                var container = encoder.container(keyedBy: Key.self)
                try container.encode(content, forKey: .content)
                try container.encode(resources, forKey: .resources)
            }
            enum Key: String, CodingKey { case content, resources }
        }
        return try JSONOutput.encode(Full(summary: NoteSummary(note, mapPending: mapPending, export: export), content: note.content,
                                          resources: resources.map(ResourceSummary.init)))
    }

    /// A resource as `queue show --json` lists it: everything but the bytes.
    struct ResourceSummary: Encodable {
        /// "attachment" (a file the user attached, photos included) or "enlog" (made by enlog: the
        /// map, a digest's track).
        var kind: String
        var hash: String
        var mime: String
        var size: Int
        var width: Int?
        var height: Int?
        var fileName: String?
        var latitude: Double?
        var longitude: Double?

        init(_ resource: NoteResource) {
            kind = resource.userFile ? "attachment" : "enlog"
            hash = resource.hash
            mime = resource.mime
            size = resource.body.count
            width = resource.width
            height = resource.height
            fileName = resource.fileName
            latitude = resource.latitude
            longitude = resource.longitude
        }
    }

    /// `queue show`'s line per resource (on stderr, so the ENML on stdout still pipes to `validate`).
    package static func line(_ resource: NoteResource) -> String {
        let size = [resource.width, resource.height].compactMap { $0 }.map(String.init).joined(separator: "×")
        return "\(resource.userFile ? "attachment" : "resource") \(resource.hash)\t\(resource.mime)\t\(size.isEmpty ? "-" : size)\t\(resource.body.count) bytes\t\(resource.fileName ?? "-")"
    }


    /// - Parameter time: how the time queued is printed (default: UTC, `2026-11-22T08:00:05Z`).
    package static func line(_ note: OutboxNote, mapPending: Bool = false, export: ENEXExportRecord? = nil,
                            time: (Date) -> String = OutboxJSON.timestamp) -> String {
        var line = "\(note.id ?? 0)\t\(note.state.rawValue)\t\(time(note.createdAt))\t\(note.title)"
        if note.addressPending { line += "\t(address pending)" }
        if mapPending { line += "\t(map pending)" }
        if note.state == .exported, let export { line += "\t(in \(export.file))" }
        if let error = note.lastError, note.state == .failed || note.state == .parked { line += "\t\(error)" }
        return line
    }

    /// Always five tab-separated columns (time, position, altitude, accuracy, source), with
    /// "-" for what is unknown, so `cut -f` and `awk` see the same column everywhere.
    /// - Parameter time: how the fix's time is printed (default: UTC, `2026-11-22T08:00:05Z`).
    package static func line(_ fix: FixRecord, time: (FixRecord) -> String = { OutboxJSON.timestamp($0.timestamp) }) -> String {
        [time(fix),
         NoteRenderer.coordinate(fix.latitude) + "," + NoteRenderer.coordinate(fix.longitude),
         fix.altitude.map { "alt \(NoteRenderer.decimal($0)) m" } ?? "-",
         fix.horizontalAccuracy.map { "±\(NoteRenderer.decimal($0)) m" } ?? "-",
         fix.source.rawValue].joined(separator: "\t")
    }

    package static func timestamp(_ date: Date) -> String { InstantText.string(date) }

}
