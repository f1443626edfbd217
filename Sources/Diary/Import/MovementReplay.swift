import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Capture
import Compose
import Outbox

/// Recorded fixes (an NMEA log replayed by `watch`, a track given to `import --notes`) through
/// the same quality filter and `MovementDecision` a live watch uses, at once.
package enum MovementReplay {
    package struct Summary: Sendable, Codable, Equatable {
        package var fixes = 0
        package var accepted = 0
        package var notes = 0
        /// Fixes kept in the history as the track (`watch.track`).
        package var track = 0

        package init() {}
    }

    /// Recorded fixes through the watch's filter and decision, at once: `note` is called for each
    /// fix (with its index in `fixes`) a live watch would have logged, and returns whether the fix
    /// now has its note (later fixes are then measured from it). The decision starts fresh (the
    /// fixes' times may predate the outbox's last note); the age limit is for live fixes, a
    /// recording is old by nature, but accuracy still counts. `accepted` then sees every fix the
    /// filter accepted, with whether it now has its note.
    package static func decide(_ fixes: [Fix], config: Config,
                              note: (Int, Fix, MovementDecision.Verdict) async throws -> Bool,
                              accepted: (Fix, _ noted: Bool) async throws -> Void = { _, _ in }) async throws -> Summary {
        let filter = QualityFilter(maxAge: nil, minAccuracy: config.number(.minAccuracy), futureTolerance: .infinity)
        var decision = MovementDecision(thresholds: WatchThresholds(config: config))
        var summary = Summary()
        for (index, fix) in fixes.enumerated() {
            summary.fixes += 1
            guard filter.accepts(fix) else { continue }
            summary.accepted += 1
            let verdict = decision.verdict(for: fix)
            guard verdict.logs, try await note(index, fix, verdict) else {
                try await accepted(fix, false)
                continue
            }
            decision.logged(fix)
            summary.notes += 1
            try await accepted(fix, true)
        }
        return summary
    }
}
