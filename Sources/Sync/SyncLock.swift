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

/// One sync at a time per outbox: an exclusive `flock` on `<db>.sync.lock` (a `FileLock`).
///
/// The kernel drops the lock when its holder exits or is killed, so a stale lock cannot exist:
/// a lock file left behind by a dead process is simply locked again. The file holds the
/// holder's pid, for the error message only. Released when the owner is deinitialised (or on
/// `release()`); the descriptor is close-on-exec so child processes never inherit it.
package final class SyncLock: Sendable {
    package let path: String
    private let lock: FileLock

    package static func lockPath(forDatabase databasePath: String) -> String { databasePath + ".sync.lock" }

    /// Takes the lock without waiting; `SyncError.syncInProgress` when another process holds it.
    package init(databasePath: String) throws(SyncError) {
        let path = Self.lockPath(forDatabase: databasePath)
        self.path = path
        lock = try FileLock.take(path, held: { SyncError.syncInProgress(lockPath: path, holderPid: $0) },
                                 unavailable: { SyncError.lockUnavailable(path: path, detail: $0) })
    }

    package func release() { lock.release() }
}
