import Foundation
import Support
#if canImport(Glibc)
import Glibc
#endif

/// `FileLock` on `<outbox>.migrate-lock`, held while a process sets up or migrates the outbox.
///
/// Waiting for another process to create the schema is not contention with a stuck writer: on a
/// loaded machine that can take longer than the busy timeout while the holder works steadily.
/// So the timeout counts only time in which the holder shows no progress: `FileLock` writes the
/// holder's pid into the lock file, and a waiter restarts its clock whenever that process is
/// running or waiting for the CPU or a disk (state R or D) or has used CPU time since the last
/// look. A holder that is stopped or hung fails the waiters after `timeout`; a dead one releases
/// the lock at once (the kernel drops it).
struct MigrationLock {
    private let lock: FileLock

    init(databasePath: String, timeout: TimeInterval) throws(OutboxError) {
        var lastSeen: HolderProgress?
        var lastProgressAt = Date()
        while true {
            do {
                lock = try FileLock(path: databasePath + ".migrate-lock")
                return
            } catch {
                let pid: Int32?
                switch error {
                case .held(let holder): pid = holder
                case .unavailable(let reason): throw .cannotOpen(path: databasePath, detail: "cannot take its migration lock: \(reason)")
                }
                let seen = pid.flatMap(HolderProgress.read)
                if seen != lastSeen || seen?.isWorking == true {
                    lastProgressAt = Date()
                    lastSeen = seen
                } else if Date().timeIntervalSince(lastProgressAt) >= timeout {
                    throw .locked(path: databasePath, waited: timeout)
                }
                usleep(10_000)
            }
        }
    }

    func release() {
        lock.release()
    }
}

/// What a waiter can see of the lock holder's progress, from `/proc/<pid>/stat`.
private struct HolderProgress: Equatable {
    let pid: Int32
    let cpuTicks: UInt64
    /// Running, runnable (waiting for a CPU on a busy machine) or in uninterruptible I/O.
    let isWorking: Bool

    /// nil when the lock file names no process this one can see (exited, or in another pid
    /// namespace): the waiter then counts plain time.
    static func read(pid: Int32) -> HolderProgress? {
        guard pid > 0, pid != getpid(),
              let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let nameEnd = stat.lastIndex(of: ")") else { return nil }
        // After "pid (comm)": state is field 3, utime and stime fields 14 and 15.
        let fields = stat[stat.index(after: nameEnd)...].split(separator: " ")
        guard fields.count > 12, let user = UInt64(fields[11]), let system = UInt64(fields[12]) else { return nil }
        return HolderProgress(pid: pid, cpuTicks: user + system, isWorking: fields[0] == "R" || fields[0] == "D")
    }
}
