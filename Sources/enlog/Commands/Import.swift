import ArgumentParser
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
import Sync
import Watch

struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Bring a GPX or NMEA track into the location history.",
        discussion: """
            Every timed point of a GPX 1.0/1.1 file (tracks, all their segments, and route points \
            or waypoints that carry a time) or every valid fix of an NMEA 0183 log becomes a fix in \
            the history; a time the history already has is skipped, so importing twice adds nothing. \
            The file is read whole first: a malformed one imports nothing.

            With --notes, notes are also written where `enlog watch` would have written them \
            (watch.min_distance, watch.min_interval, watch.max_interval, location.min_accuracy).

            Examples:
              enlog import walk.gpx
              enlog import drive.nmea --notes
              gpsbabel -i garmin_fit -f ride.fit -o gpx -F - > ride.gpx && enlog import ride.gpx
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: ArgumentHelp("The GPX or NMEA file.", valueName: "file")) var file: String
    @Flag(help: "Also write notes with the watch thresholds.") var notes = false
    @Flag(help: "Print the summary as JSON.") var json = false

    func run() async throws {
        let context = try global.context()
        let outbox = try context.outbox()
        let account = notes ? (try? Account.credentialStore().loadIfPresent()).flatMap { $0 }.map { EvernoteAccount(credentials: $0) } : nil
        let json = self.json
        let summary = try await TrackImport(outbox: outbox).run(path: file, context: context, notes: notes, accountKey: account?.accountKey) { outcome, _ in
            if !json { Terminal.standardError("enlog: logged note \(outcome.note.id ?? 0): \(outcome.note.title)") }
        }
        if json {
            let object: [String: Any] = ["format": summary.kind.rawValue, "read": summary.read, "added": summary.added,
                                         "alreadyThere": summary.alreadyThere, "untimedSkipped": summary.untimedSkipped,
                                         "repeatedTimes": summary.repeatedTimes, "notes": summary.notes,
                                         "notesAlreadyThere": summary.notesAlreadyThere]
            let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
            try Terminal.standardOutput(String(decoding: data, as: UTF8.self))
        } else {
            try Terminal.standardOutput(summary.line + (notes ? "; \(summary.notes) notes written"
                + (summary.notesAlreadyThere > 0 ? " (\(summary.notesAlreadyThere) places had theirs)" : "") : ""))
        }
    }
}
