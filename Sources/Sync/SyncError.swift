import Support
import EvernoteAPI
import Configuration
import Network
import Auth
import Capture
import Compose
import Outbox
import Diary
/// Why a sync could not run (or had to stop without a summary).
package enum SyncError: ENLogError, Equatable {
    /// Another `enlog sync` holds `<db>.sync.lock`.
    case syncInProgress(lockPath: String, holderPid: Int32?)
    case lockUnavailable(path: String, detail: String)
    /// Evernote refused the token; the queue is intact. `detail` is the Evernote error's reason.
    case reauthenticationRequired(detail: String)

    package var reason: String {
        switch self {
        case .syncInProgress(_, let pid):
            return "another sync is already running" + (pid.map { " (process \($0))" } ?? "")
        case .lockUnavailable(let path, let detail):
            return "cannot take the sync lock \(path): \(detail)"
        case .reauthenticationRequired(let detail):
            return detail + "; queued notes are kept"
        }
    }

    package var recoverySuggestion: String? {
        switch self {
        case .syncInProgress: return "wait for it to finish; notes it does not reach stay queued for the next sync"
        case .lockUnavailable: return "check that the outbox directory is writable"
        case .reauthenticationRequired: return "run `enlog auth login` to sign in again, then `enlog sync`"
        }
    }
}

extension SyncError {
    package var category: ErrorCategory {
        switch self {
        case .syncInProgress: return .temporary
        case .lockUnavailable: return .cannotWrite
        case .reauthenticationRequired: return .noPermission
        }
    }
}
