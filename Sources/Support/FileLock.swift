import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// An exclusive `flock` on a file, taken without waiting, holding the holder's pid for messages.
///
/// The kernel drops the lock when its holder exits or is killed, so a stale lock cannot exist.
/// Released on `release()` or when the value goes away; close-on-exec, so children never inherit it.
package final class FileLock: Sendable {
    package enum Failure: Error, Equatable {
        /// Another process holds it; its pid when the file names one.
        case held(pid: Int32?)
        case unavailable(String)
    }

    let path: String
    private let descriptor: Mutex<Int32>

    package init(path: String) throws(Failure) {
        self.path = path
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .unavailable(String(cString: strerror(errno))) }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            let holder = Self.readPid(fd)
            close(fd)
            if code == EWOULDBLOCK { throw .held(pid: holder) }
            throw .unavailable(String(cString: strerror(code)))
        }
        let pid = "\(getpid())\n"
        _ = ftruncate(fd, 0)
        _ = pid.withCString { pwrite(fd, $0, strlen($0), 0) }
        descriptor = Mutex(fd)
    }

    /// Takes the lock, a failure said in the caller's own error (`SyncError`, `WatchError`): `held`
    /// with the holder's pid, `unavailable` with the system's reason.
    package static func take<E: Error>(_ path: String, held: (Int32?) -> E, unavailable: (String) -> E) throws(E) -> FileLock {
        do {
            return try FileLock(path: path)
        } catch {
            switch error {
            case .held(let pid): throw held(pid)
            case .unavailable(let detail): throw unavailable(detail)
            }
        }
    }

    private static func readPid(_ fd: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let n = pread(fd, &buffer, 31, 0)
        guard n > 0 else { return nil }
        return Int32(String(decoding: buffer[0..<n], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    package func release() {
        descriptor.withLock { fd in
            guard fd >= 0 else { return }
            _ = flock(fd, LOCK_UN)
            close(fd)
            fd = -1
        }
    }

    deinit { release() }
}
