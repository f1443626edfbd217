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
///
/// The write-ahead log (`PATH-wal`) and its index (`PATH-shm`) are followed the same way: a
/// committed note may live only in the log until a checkpoint, and SQLite goes on appending to
/// a deleted log through its descriptor, so `rm enlog.sqlite-wal` and then a crash would lose
/// every note since the last checkpoint, and every other process meanwhile reads a log that is
/// not there ("disk I/O error"). After each write, and whenever a long-running process asks
/// (`followChanges`), the log's and index's `st_dev`/`st_ino` are compared with those SQLite
/// opened; when either differs, the open log is checkpointed into the main file (which still
/// holds the path) and the database opened again, with a fresh log at the path (`keepLog`).
final class OutboxFile: Sendable {
    enum Change: Sendable, Equatable { case deleted, replaced, logLost }

    typealias Opener = @Sendable (String) throws(OutboxError) -> any DatabaseWriter

    private struct State {
        var pool: any DatabaseWriter
        var path: String
        /// nil for a reader, which writes nothing and so follows nothing.
        var identity: FileIdentity?
        /// The -wal and -shm SQLite has open (nil for a reader, or until they exist).
        var logIdentity: FileIdentity?
        var indexIdentity: FileIdentity?
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

    /// `tracking` is false for a reader, and for a database the caller opened (in memory, a
    /// test's). `open` opens an outbox file for writing (the copy).
    init(path: String, pool: any DatabaseWriter, tracking: Bool, open: @escaping Opener) {
        self.path = path
        self.open = open
        var initial = State(pool: pool, path: path, identity: tracking ? FileIdentity(path) : nil)
        if tracking { Self.noteLog(&initial) }
        state = Mutex(initial)
    }

    /// Records the identities of the log and index the writer connection has open (a read on it
    /// opens them: the -wal is created on a WAL database's first read).
    private static func noteLog(_ state: inout State) {
        _ = try? state.pool.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") }
        state.logIdentity = FileIdentity(state.path + "-wal")
        state.indexIdentity = FileIdentity(state.path + "-shm")
    }

    var pool: any DatabaseWriter { state.withLock { $0.pool } }
    var stopReason: OutboxError? { state.withLock { $0.stopReason } }

    func onChange(_ notify: @escaping @Sendable (OutboxError) -> Void) {
        state.withLock { $0.notify = notify }
    }

    /// What happened to the file being written since it was opened; nil while its path still names it.
    func change() -> Change? {
        state.withLock { Self.change(of: $0) }
    }

    private static func change(of state: State) -> Change? {
        guard let opened = state.identity else { return nil }
        guard let now = FileIdentity(state.path) else { return .deleted }
        guard now == opened else { return .replaced }
        for (opened, suffix) in [(state.logIdentity, "-wal"), (state.indexIdentity, "-shm")] {
            if let opened, FileIdentity(state.path + suffix) != opened { return .logLost }
        }
        return nil
    }

    /// Follows whatever changed since the last look (see the type's comment); after every write,
    /// and at will from a long-running process between writes.
    func followChanges() {
        let notice: (OutboxError, (@Sendable (OutboxError) -> Void)?)? = state.withLock { state in
            // Another writer of this process may have done it meanwhile.
            guard let change = Self.change(of: state) else {
                if state.identity != nil, state.logIdentity == nil || state.indexIdentity == nil { Self.noteLog(&state) }
                return nil
            }
            let outcome = change == .logLost ? keepLog(&state) : copyOut(&state, change)
            return outcome.map { ($0, state.notify) }
        }
        guard let (outcome, notify) = notice else { return }
        if let notify { notify(outcome) } else { StandardError.line("enlog: warning: " + outcome.reason) }
    }

    /// The -wal or -shm at the path is no longer the one SQLite has open. Everything committed
    /// is readable through the connection still: a checkpoint copies it into the main file (the
    /// path's, unchanged) and empties the log, after which the database is opened afresh at the
    /// path. When the checkpoint cannot finish, the outbox is copied out as for a replaced file.
    ///
    /// Only the -shm gone (the log in place, maybe in use by another process through a new
    /// index): no checkpoint from this process's index, which may not know the others' frames;
    /// the database is just opened again, joining the index the others use.
    private func keepLog(_ state: inout State) -> OutboxError? {
        let logLost = state.logIdentity.map { FileIdentity(state.path + "-wal") != $0 } ?? false
        if logLost {
            let complete: Bool
            do {
                let row = try state.pool.writeWithoutTransaction { db in
                    try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)")
                }
                // (busy, frames in the log, frames checkpointed): busy 0 means every frame is in the main file.
                complete = row.map { ($0[0] as Int?) == 0 && ($0[1] as Int?) == ($0[2] as Int?) } ?? false
            } catch {
                complete = false
            }
            guard complete else { return copyOut(&state, .replaced) }
        }
        _ = try? state.pool.close()
        do {
            state.pool = try open(state.path)
        } catch {
            // The main file is whole (checkpointed): the next command opens it as it is.
            let failure = OutboxError.logLost(path: state.path, kept: logLost, detail: error.reason)
            state.identity = nil
            state.stopReason = failure
            return failure
        }
        Self.noteLog(&state)
        return logLost ? .logLost(path: state.path, kept: true, detail: nil) : nil
    }

    private func copyOut(_ state: inout State, _ change: Change) -> OutboxError {
        let replaced = change == .replaced
        let directory = (path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent
        // `rm -r` may have taken the folder too.
        try? PrivateFiles.makeDirectories(directory)
        let copy = directory + "/.enlog-rescue-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { unlink(copy) }
        do {
            // Made 0600 first: VACUUM INTO writes into an empty file as it is, and the copy is the whole diary.
            PrivateFiles.createEmpty(copy)
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
        Self.noteLog(&state)
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
    package var stopReason: OutboxError? { file.stopReason }

    /// Where a deleted or replaced outbox file is reported; a warning on stderr by default.
    package func onFileChange(_ notify: @escaping @Sendable (OutboxError) -> Void) {
        file.onChange(notify)
    }

    /// Runs a write on the file that is open, then, when the path no longer names it, copies the
    /// outbox out and goes on with the copy (`OutboxFile`).
    func followingTheFile<T>(_ write: () async throws(OutboxError) -> T) async throws(OutboxError) -> T {
        let result = try await write()
        file.followChanges()
        return result
    }

    func followingTheFileNow<T>(_ write: () throws(OutboxError) -> T) throws(OutboxError) -> T {
        let result = try write()
        file.followChanges()
        return result
    }

    /// For a long-running writer between writes (watch, on each event): a deleted -wal is
    /// checkpointed into the outbox before a crash could take what it holds (`OutboxFile`).
    package func followFileChanges() {
        file.followChanges()
    }
}

/// What another process can tell about an outbox's write-ahead log from the outside.
enum WriteAheadLog {
    /// Whether the log index (`PATH-shm`) counts more frames than the file `PATH-wal` holds: the
    /// log was deleted (or cut) under a process that still writes to it through its descriptor.
    /// Reads the index header SQLite keeps at the start of the -shm (native byte order): `isInit`
    /// at byte 12, the page size at 14 (1 meaning 65536), the last valid frame at 16.
    static func isShort(_ path: String) -> Bool {
        guard let index = FileHandle(forReadingAtPath: path + "-shm") else { return false }
        defer { try? index.close() }
        guard let header = try? index.read(upToCount: 48), header.count == 48 else { return false }
        let bytes = [UInt8](header)
        func load<T: FixedWidthInteger>(_ offset: Int, as: T.Type) -> T {
            bytes[offset..<offset + MemoryLayout<T>.size].withUnsafeBytes { $0.loadUnaligned(as: T.self) }
        }
        let pageSize = Int(load(14, as: UInt16.self)) == 1 ? 65536 : Int(load(14, as: UInt16.self))
        let frames = Int(load(16, as: UInt32.self))
        guard bytes[12] != 0, frames > 0, pageSize >= 512 else { return false }
        let logSize = (try? FileManager.default.attributesOfItem(atPath: path + "-wal"))?[.size] as? Int ?? 0
        return logSize < 32 + frames * (24 + pageSize)
    }

    /// "process PID (COMMAND LINE)" of a process that has the deleted `PATH-wal` open, when one
    /// can be found in /proc (one the user may see); nil otherwise.
    static func holderOfDeleted(_ path: String) -> String? {
        let target = URL(fileURLWithPath: path).standardizedFileURL.path + "-wal (deleted)"
        guard let processes = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return nil }
        for pid in processes where pid.allSatisfy(\.isNumber) && pid != String(getpid()) {
            guard let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd") else { continue }
            for descriptor in descriptors.prefix(4096) {
                guard (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(descriptor)")) == target else { continue }
                let arguments = (FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") ?? Data()).prefix(4096)
                    .split(separator: 0).prefix(2).map { String(decoding: $0, as: UTF8.self) }
                let command = arguments.enumerated().map { $0.offset == 0 ? ($0.element as NSString).lastPathComponent : $0.element }
                return "process \(pid)" + (command.isEmpty ? "" : " (\(command.joined(separator: " ")))")
            }
        }
        return nil
    }
}
