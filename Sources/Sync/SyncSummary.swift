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

/// What a run reports while it works.
package enum SyncEvent: Sendable, Equatable {
    /// Before the first note: how many notes this run expects to handle.
    case started(total: Int)
    /// One note handled (`guid` when it is on Evernote).
    case note(id: Int64, action: SyncNoteAction, guid: String?)
    /// Something worth a line in verbose output (e.g. which address was used).
    case notice(String)
    /// Something the user must hear of even without `-v` (a duplicate found and removed).
    case warning(String)
}

package enum SyncNoteAction: String, Sendable, Codable {
    case uploaded
    case alreadyPresent = "already-present"
    case failed
    case parked
}

package struct SyncSummary: Sendable, Codable, Equatable {
    package enum StopReason: String, Sendable, Codable {
        /// Nothing due is left.
        case completed
        case maxNotes
        case dryRun
        /// RATE_LIMIT_REACHED now or earlier: see `notBefore`.
        case rateLimited
        /// The service could not be reached at all.
        case networkDown
        /// Several transient failures in a row (HTTP 5xx, timeouts, unreadable replies).
        case serviceFailing
        case cancelled
        /// Reachability said so before any call: nothing was sent (`SyncSession`).
        case offline
        case noUplink

        /// Why the run stopped, in the words a person reads (`rawValue` is for `--json` and
        /// scripts): the same words `enlog reachability` uses for the same state.
        package var explanation: String {
            switch self {
            case .completed: return "nothing left to send"
            case .maxNotes: return "--max notes sent"
            case .dryRun: return "dry run, nothing sent"
            case .rateLimited: return "Evernote asked to slow down"
            case .networkDown: return "Evernote's server could not be reached"
            case .serviceFailing: return "Evernote's server failed several times in a row"
            case .cancelled: return "interrupted"
            case .offline: return "offline: no route to the network"
            case .noUplink: return "no uplink: a route exists, but nothing answered"
            }
        }
    }

    /// Created by this run.
    package var uploaded = 0
    /// Found already in Evernote by the lookup (an earlier attempt's reply was lost) and marked synced.
    package var alreadyPresent = 0
    /// Attempts that failed this run (the note stays queued with a retry time, or is parked).
    package var failed = 0
    /// Of those, notes set aside (rejected by Evernote, or `maxAttempts` reached).
    package var parked = 0
    /// Extra copies of a note found on Evernote (a request that went out twice), moved to the trash.
    package var duplicatesRemoved = 0
    /// Deferred addresses filled in (or given up on) before upload.
    package var addressesResolved = 0
    /// Dry run: notes that would be sent.
    package var due = 0
    /// Notes neither synced nor parked after the run (pending, failed, sending, address pending).
    package var remaining = 0
    package var stoppedBecause: StopReason = .completed
    /// Rate limit in force: no Evernote call before this time.
    package var notBefore: Date?
    /// The last error seen, one line.
    package var lastError: String?
    /// The kind of the last failure that left a note queued or parked (see `verdict(for:)`).
    package var failure: FailureClass?
    /// Notes that failed (this run or an earlier one) and wait for their retry time; the earliest.
    package var waitingForRetry = 0
    package var nextRetryAt: Date?
    /// Notes still waiting for their address after the run (not due until it is filled in or
    /// given up on).
    package var waitingForAddress = 0
    /// Address lookups that failed this run, and the last one's error.
    package var addressLookupsFailed = 0
    package var lastAddressError: String?
    /// Failed lookups (one per sync) a waiting note may still have before it is uploaded
    /// without its address; nil when none waits.
    package var addressTriesLeft: Int?
    /// Maps made this run for notes logged without one; notes that go without their map
    /// (attempts used up, maps off); notes still waiting for theirs; the last map problem.
    package var mapsMade = 0
    package var mapsGivenUp = 0
    package var waitingForMap = 0
    /// Maps that could not be made this run (tile server down, offline): the notes wait.
    package var mapsFailed = 0
    package var lastMapError: String?
    /// How the run ended, once everything above is final: what `enlog sync` exits with.
    package var verdict: Verdict = .complete

    package init() {}
}
