import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One sync at a time per outbox: an exclusive `flock` on `<db>.sync.lock`.
///
/// The kernel drops the lock when its holder exits or is killed, so a stale lock cannot exist:
/// a lock file left behind by a dead process is simply locked again. The file holds the
/// holder's pid, for the error message only. Released when the owner is deinitialised (or on
/// `release()`); the descriptor is close-on-exec so child processes never inherit it.
public final class SyncLock: Sendable {
    public let path: String
    /// The locked descriptor; -1 once released.
    private let descriptor: Mutex<Int32>

    public static func lockPath(forDatabase databasePath: String) -> String { databasePath + ".sync.lock" }

    /// Takes the lock without waiting; `SyncError.syncInProgress` when another process holds it.
    public init(databasePath: String) throws(SyncError) {
        let path = Self.lockPath(forDatabase: databasePath)
        self.path = path
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw .lockUnavailable(path: path, detail: String(cString: strerror(errno)))
        }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            let holder = Self.readPid(fd)
            close(fd)
            if code == EWOULDBLOCK { throw .syncInProgress(lockPath: path, holderPid: holder) }
            throw .lockUnavailable(path: path, detail: String(cString: strerror(code)))
        }
        let pid = "\(getpid())\n"
        _ = ftruncate(fd, 0)
        _ = pid.withCString { pwrite(fd, $0, strlen($0), 0) }
        descriptor = Mutex(fd)
    }

    private static func readPid(_ fd: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let n = pread(fd, &buffer, 31, 0)
        guard n > 0 else { return nil }
        return Int32(String(decoding: buffer[0..<n], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    public func release() {
        descriptor.withLock { fd in
            guard fd >= 0 else { return }
            _ = flock(fd, LOCK_UN)
            close(fd)
            fd = -1
        }
    }

    deinit { release() }
}
