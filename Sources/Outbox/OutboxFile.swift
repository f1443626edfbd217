import Foundation
import GRDB
import Synchronization
import Support

/// The outbox file a process has open, told apart from whatever its path names now.
///
/// SQLite writes on through its open descriptor after the file is deleted (`rm enlog.sqlite`
/// under a running `watch`): notes would go into a file no one can open again and be lost at
/// exit. So before each write the path's `st_dev`/`st_ino` are compared with the file's as it
/// was opened. When they differ, the write still goes into the open file (the note in hand),
/// then the whole outbox is copied out (`VACUUM INTO`) and opened in its place:
/// - deleted: the copy goes back to the path, and writing goes on there;
/// - replaced by another file: the copy goes beside it (`PATH.rescued-TIME`), writing goes on
///   there to the end of what is in hand, and `stopReason` asks a long-running process to stop
///   (a new start follows the path).
/// Either is said once, through `notify` (a warning on stderr unless the command routes it).
final class OutboxFile: Sendable {
    enum Change: Sendable, Equatable { case deleted, replaced }

    typealias Opener = @Sendable (String) throws(OutboxError) -> DatabasePool

    private struct State {
        var pool: DatabasePool
        var path: String
        /// nil for a reader, which writes nothing and so follows nothing.
        var identity: FileIdentity?
        var stopReason: OutboxError?
        var notify: (@Sendable (OutboxError) -> Void)?
    }

    private struct FileIdentity: Equatable {
        var device: UInt64
        var inode: UInt64

        init?(_ path: String) {
            var status = stat()
            guard stat(path, &status) == 0 else { return nil }
            (device, inode) = (UInt64(status.st_dev), UInt64(status.st_ino))
        }
    }

    let path: String
    private let state: Mutex<State>
    private let open: Opener

    /// `tracking` is false for a reader. `open` opens an outbox file for writing (the copy).
    init(path: String, pool: DatabasePool, tracking: Bool, open: @escaping Opener) {
        self.path = path
        self.open = open
        state = Mutex(State(pool: pool, path: path, identity: tracking ? FileIdentity(path) : nil))
    }

    var pool: DatabasePool { state.withLock { $0.pool } }
    var stopReason: OutboxError? { state.withLock { $0.stopReason } }

    func onChange(_ notify: @escaping @Sendable (OutboxError) -> Void) {
        state.withLock { $0.notify = notify }
    }

    /// What happened to the file being written since it was opened; nil while its path still names it.
    func change() -> Change? {
        state.withLock { state in
            guard let opened = state.identity else { return nil }
            guard let now = FileIdentity(state.path) else { return .deleted }
            return now == opened ? nil : .replaced
        }
    }

    /// Copies the open outbox out and opens the copy in its place (see the type's comment).
    func rescue(after change: Change) {
        let notice: (OutboxError, (@Sendable (OutboxError) -> Void)?)? = state.withLock { state in
            // Another writer of this process may have done it meanwhile.
            guard let opened = state.identity, FileIdentity(state.path) != opened else { return nil }
            let outcome = copyOut(&state, change)
            return (outcome, state.notify)
        }
        guard let (outcome, notify) = notice else { return }
        if let notify { notify(outcome) } else { StandardError.line("enlog: warning: " + outcome.reason) }
    }

    private func copyOut(_ state: inout State, _ change: Change) -> OutboxError {
        let replaced = change == .replaced
        let directory = (path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent
        // `rm -r` may have taken the folder too.
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let copy = directory + "/.enlog-rescue-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { unlink(copy) }
        do {
            try state.pool.writeWithoutTransaction { db in try db.execute(sql: "VACUUM INTO ?", arguments: [copy]) }
        } catch {
            let failure = OutboxError.vanished(path: path, replaced: replaced, keptIn: nil,
                                               detail: OutboxError.map(error, path: path, busyTimeout: 0).reason)
            state.identity = nil   // said once; the open file is all there is
            state.stopReason = failure
            return failure
        }
        // The deleted file's -wal and -shm keep the path's names: the copy may take the path only
        // once no connection uses them any more and the log is empty, or it would meet the old
        // file's log. (Emptied first: the last connection to close may be a reader, which cannot.)
        _ = try? state.pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        let closed = (try? state.pool.close()) != nil
        let stamp = ISO8601DateFormatter().string(from: Date()).replacingOccurrences(of: ":", with: "")
        var targets = !replaced && closed && Self.logIsFree(of: path) ? [path] : []
        targets += [path + ".rescued-" + stamp] + (1...9).map { path + ".rescued-\(stamp)-\($0)" }
        // link(2) never replaces a file that appeared at the target meanwhile.
        guard let target = targets.first(where: { link(copy, $0) == 0 }),
              let reopened = try? open(target) else {
            let failure = OutboxError.vanished(path: path, replaced: replaced, keptIn: nil, detail: String(cString: strerror(errno)))
            state.identity = nil
            state.stopReason = failure
            return failure
        }
        state.pool = reopened
        state.path = target
        state.identity = FileIdentity(target)
        let outcome = OutboxError.vanished(path: path, replaced: replaced, keptIn: target, detail: nil)
        if target != path { state.stopReason = outcome }
        return outcome
    }
}

extension OutboxFile {
    /// Whether a new database at `path` can start afresh beside the -wal and -shm a deleted one
    /// left: the -wal holds no frame SQLite would replay, and no process holds the -shm (SQLite's
    /// "DMS" lock, byte 128, is held by every connection; the first new one then resets the index).
    /// Only to be asked once this process has no connection to it: closing any descriptor of a
    /// file drops the process's POSIX locks on it.
    static func logIsFree(of path: String) -> Bool {
        guard ((try? FileManager.default.attributesOfItem(atPath: path + "-wal"))?[.size] as? Int ?? 0) == 0 else { return false }
        let descriptor = Glibc.open(path + "-shm", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return errno == ENOENT }
        defer { close(descriptor) }
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = 128
        lock.l_len = 1
        return fcntl(descriptor, F_GETLK, &lock) == 0 && lock.l_type == Int16(F_UNLCK)
    }
}

extension OutboxStore {
    /// Set when the outbox file was replaced under this process (or could not be copied out):
    /// a long-running command stops with it once the work in hand is stored (`OutboxFile`).
    public var stopReason: OutboxError? { file.stopReason }

    /// Where a deleted or replaced outbox file is reported; a warning on stderr by default.
    public func onFileChange(_ notify: @escaping @Sendable (OutboxError) -> Void) {
        file.onChange(notify)
    }

    /// Runs a write on the file that is open, then, when the path no longer names it, copies the
    /// outbox out and goes on with the copy (`OutboxFile`).
    func followingTheFile<T>(_ write: () async throws(OutboxError) -> T) async throws(OutboxError) -> T {
        let change = file.change()
        let result = try await write()
        if let change { file.rescue(after: change) }
        return result
    }

    func followingTheFileNow<T>(_ write: () throws(OutboxError) -> T) throws(OutboxError) -> T {
        let change = file.change()
        let result = try write()
        if let change { file.rescue(after: change) }
        return result
    }
}
