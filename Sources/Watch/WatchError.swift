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

package enum WatchError: ENLogError, Equatable {
    /// Another `enlog watch` follows this outbox.
    case alreadyRunning(lockPath: String, holderPid: Int32?)
    case lockUnavailable(path: String, detail: String)
    /// The kernel refused the network-change subscription or a signal source.
    case setupFailed(String)

    package var reason: String {
        switch self {
        case let .alreadyRunning(path, pid):
            let holder = pid.map { "process \($0)" } ?? "another process"
            return "another enlog watch (\(holder)) already follows this outbox (lock \(path))"
        case let .lockUnavailable(path, detail):
            return "cannot take the watch lock \(path): \(detail)"
        case let .setupFailed(detail):
            return detail
        }
    }

    package var recoverySuggestion: String? {
        switch self {
        case .alreadyRunning: return "stop it first, or give this one another outbox with --db"
        default: return nil
        }
    }

    package var category: ErrorCategory {
        switch self {
        case .alreadyRunning: return .temporary
        case .lockUnavailable: return .cannotWrite
        case .setupFailed: return .unavailable
        }
    }
}

/// One `enlog watch` per outbox: an exclusive `flock` on `<outbox>.watch.lock`.
package struct WatchLock: Sendable {
    private let lock: FileLock

    package static func lockPath(forDatabase path: String) -> String { path + ".watch.lock" }

    package init(databasePath: String) throws(WatchError) {
        let path = Self.lockPath(forDatabase: databasePath)
        lock = try FileLock.take(path, held: { WatchError.alreadyRunning(lockPath: path, holderPid: $0) },
                                 unavailable: { WatchError.lockUnavailable(path: path, detail: $0) })
    }

    package func release() { lock.release() }
}
