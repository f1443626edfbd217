import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Capture
import Compose
import Outbox

/// `enlog import FILE --notes`: after a track's points are in the history (`HistoryImport`), the
/// notes a watch would have written along it, each on its imported fix, each place once.
package struct TrackImport: Sendable {
    package struct Notes: Sendable, Equatable {
        /// Notes written, and places that had their note from an earlier import.
        package var written = 0
        package var alreadyThere = 0

        package init() {}
    }

    package let outbox: OutboxStore

    package init(outbox: OutboxStore) {
        self.outbox = outbox
    }

    /// Walks `fixes` (a file's, in time order: the same time twice keeps the first) with the watch
    /// thresholds and writes a note (as `watch` writes them: template, address, map) on each fix
    /// a watch would have noted, unless that fix has a note already (so an import repeated after
    /// a failure writes only the notes still missing).
    package func writeNotes(along fixes: [Fix], context: RunContext, accountKey: String?,
                           noted: @Sendable (LocationLogger.Outcome, MovementDecision.Verdict) -> Void = { _, _ in }) async throws -> Notes {
        let sorted = fixes.enumerated().sorted { ($0.element.timestamp, $0.offset) < ($1.element.timestamp, $1.offset) }.map(\.element)
        var track: [Fix] = []
        for fix in sorted where track.last.map({ Self.sameTime($0.timestamp, fix.timestamp) }) != true { track.append(fix) }
        // Already in the history: this finds each fix's row.
        let stored = try await outbox.importFixes(track)
        let logger = try context.logger(outbox: outbox, accountKey: accountKey)
        var notes = Notes()
        let decided = try await MovementReplay.decide(track, config: context.config) { index, fix, verdict in
            let fixId = stored.fixIds[index]
            if try await outbox.hasNote(onFix: fixId) {
                notes.alreadyThere += 1
                return true
            }
            noted(try await logger.log(fix, historyFix: fixId), verdict)
            return true
        }
        notes.written = decided.notes - notes.alreadyThere
        return notes
    }

    /// The history keeps times to the millisecond: two points in the same millisecond are one time.
    static func sameTime(_ a: Date, _ b: Date) -> Bool {
        (a.timeIntervalSince1970 * 1000).rounded() == (b.timeIntervalSince1970 * 1000).rounded()
    }
}
