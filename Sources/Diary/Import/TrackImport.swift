import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Capture
import Compose
import Outbox

/// `enlog import FILE`: a GPX or NMEA track into the history, fixes only, each time once; with
/// notes, the notes a watch would have written along it.
public struct TrackImport: Sendable {
    public struct Summary: Sendable, Equatable {
        public var kind: TrackFile.Kind
        /// Timed points read from the file (after dropping repeated times).
        public var read = 0
        public var added = 0
        /// Points whose time the history already had.
        public var alreadyThere = 0
        /// Route points and waypoints without a time, left out.
        public var untimedSkipped = 0
        /// Points repeating a time earlier in the file, left out.
        public var repeatedTimes = 0
        /// With notes: notes written, and places that had their note from an earlier import.
        public var notes = 0
        public var notesAlreadyThere = 0

        /// "read 120 points from GPX: 118 added, 2 already in the history; 3 notes written"
        public var line: String {
            var text = "read \(counted(read, "point")) from \(kind == .gpx ? "GPX" : "NMEA"): \(added) added, \(alreadyThere) already in the history"
            if untimedSkipped > 0 { text += "; \(counted(untimedSkipped, "route point or waypoint", plural: "route points or waypoints")) without a time left out" }
            if repeatedTimes > 0 { text += "; \(counted(repeatedTimes, "point")) repeating a time left out" }
            return text
        }
    }

    public let outbox: OutboxStore

    public init(outbox: OutboxStore) {
        self.outbox = outbox
    }

    /// Reads the whole file first (a malformed one stores nothing), then adds its fixes in one
    /// transaction. With `notes`, then walks the track with the watch thresholds and writes a
    /// note (as `watch` writes them: template, address, map) on each fix a watch would have
    /// noted, unless that fix has a note already (so an import repeated after a failure writes
    /// only the notes still missing).
    public func run(path: String, context: RunContext, notes: Bool, accountKey: String?,
                    noted: @Sendable (LocationLogger.Outcome, MovementDecision.Verdict) -> Void = { _, _ in }) async throws -> Summary {
        let contents = try await BlockingCall.run("enlog.import", onCancel: .abandon) { _ in try TrackFile(path: path).read() }
        var summary = Summary(kind: contents.kind, read: contents.fixes.count, untimedSkipped: contents.untimedSkipped,
                              repeatedTimes: contents.repeatedTimes)
        let stored = try await outbox.importFixes(contents.fixes)
        summary.added = stored.added
        summary.alreadyThere = stored.alreadyThere
        guard notes else { return summary }
        let logger = try context.logger(outbox: outbox, accountKey: accountKey)
        var alreadyNoted = 0
        let decided = try await MovementReplay.decide(contents.fixes, config: context.config) { index, fix, verdict in
            let fixId = stored.fixIds[index]
            if try await outbox.hasNote(onFix: fixId) {
                alreadyNoted += 1
                return true
            }
            noted(try await logger.log(fix, historyFix: fixId), verdict)
            return true
        }
        summary.notesAlreadyThere = alreadyNoted
        summary.notes = decided.notes - alreadyNoted
        return summary
    }
}
