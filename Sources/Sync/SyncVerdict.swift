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

extension SyncSummary {
    /// How a run ended, for a script or a systemd unit: the one thing the command turns into an
    /// exit status. A run that leaves notes queued because something failed is never `complete`.
    package enum Verdict: String, Sendable, Codable, CaseIterable {
        /// Everything due went, or nothing was due, or a dry run; also a run stopped by `--max`.
        case complete
        /// Nothing is wrong but notes wait: offline or no uplink, Evernote asked to slow down or
        /// the account's upload quota is used up, address lookups to retry. Run again later.
        case tryLater
        /// Evernote could not be reached or failed to answer (connection refused, DNS, TLS,
        /// timeout, a lost connection, HTTP 5xx, an EDAM system error).
        case serviceUnavailable
        /// Evernote (or something in between) answered something that is not the protocol: an
        /// HTML page with HTTP 200, an unexpected status, unreadable Thrift.
        case protocolError
        /// Evernote refused a note (invalid ENML, bad data, permission): it is parked.
        case notesRejected
    }

    /// What kind of failure left notes queued, as seen by the run (the last one wins, like
    /// `lastError`). Set with `noteFailure(_:)`.
    package enum FailureClass: String, Sendable, Codable {
        case temporary, unavailable, protocolError, rejected

        /// The class of an error a NoteStore call ended with: a note Evernote refused (which the
        /// run parks), else the error's own category, so that `sync` exits as every other
        /// command does for the same failure. (A refused token never gets here: it ends the run
        /// with `SyncError.reauthenticationRequired`.)
        package static func of(_ error: any Error) -> FailureClass {
            if case .rejected = FailureKind.classify(error) { return .rejected }
            switch (error as? any ENLogError)?.category {
            case .temporary: return .temporary
            case .protocolError: return .protocolError
            case .invalidNote: return .rejected
            default: return .unavailable
            }
        }
    }

    /// Records a failure of this run: the last error line and its class.
    mutating func noteFailure(_ error: any Error) {
        lastError = oneLine(error)
        failure = FailureClass.of(error)
    }

    /// The verdict for this summary once `remaining` and the address counts are final.
    package static func verdict(for summary: SyncSummary) -> Verdict {
        switch summary.stoppedBecause {
        case .dryRun: return .complete
        case .offline, .noUplink, .rateLimited, .cancelled:
            return summary.remaining > 0 ? .tryLater : .complete
        case .completed, .maxNotes, .networkDown, .serviceFailing:
            break
        }
        if let failure = summary.failure {
            switch failure {
            case .temporary: return summary.remaining > 0 ? .tryLater : .complete
            case .unavailable: return .serviceUnavailable
            case .protocolError: return .protocolError
            case .rejected: return .notesRejected
            }
        }
        if summary.stoppedBecause == .networkDown || summary.stoppedBecause == .serviceFailing {
            return .serviceUnavailable
        }
        if summary.waitingForAddress > 0 && summary.addressLookupsFailed > 0 { return .tryLater }
        if summary.waitingForMap > 0 && summary.mapsFailed > 0 { return .tryLater }
        // Earlier failures still waiting out their backoff: the queue is not drained.
        if summary.waitingForRetry > 0 { return .tryLater }
        return .complete
    }
}
