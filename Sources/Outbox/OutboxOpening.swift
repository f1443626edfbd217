import Foundation
import GRDB
import Support
import EvernoteAPI
import Configuration
import Capture
import Compose

/// Opening the outbox file, apart from using it: what opening may do to the disk for each
/// `OutboxStore.Access` (create the folders, or never create anything), refusing a file that is
/// not an outbox before writing to it, switching a new file to WAL and setting up or migrating
/// its schema under a lock beside it (one process migrates while the others wait), and reading
/// an outbox the user cannot write.
struct OutboxOpening {
    let path: String
    let busyTimeout: TimeInterval

    /// The database, its schema up to date unless reading.
    func open(for mode: OutboxStore.Access) throws(OutboxError) -> DatabasePool {
        let readOnly = mode == .read
        var status = stat()
        let exists = stat(path, &status) == 0
        // SQLite would wait on a FIFO's open for ever and call a device "disk I/O error".
        switch status.st_mode & S_IFMT {
        case _ where !exists, S_IFREG: break
        case S_IFDIR: throw .cannotOpen(path: path, detail: "it is a directory")
        default: throw .cannotOpen(path: path, detail: "it is not a regular file")
        }
        if mode != .create {
            guard exists else { throw .missing(path: path) }
        } else {
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
            do {
                // The diary's folder is its owner's alone (0700), whatever the umask.
                try PrivateFiles.makeDirectories(directory)
            } catch {
                throw access(Self.existingAncestor(of: directory), W_OK) != 0
                    ? .readOnly(path: path, detail: "cannot create directory \(directory)")
                    : .cannotOpen(path: path, detail: "cannot create directory \(directory): \(error.detail)")
            }
            // Created 0600 before SQLite opens it: SQLite gives the -wal and -shm the main file's
            // mode, and would make the file itself 0644 less the umask (the whole diary readable
            // by every user under the usual 022).
            if !exists { PrivateFiles.createEmpty(path) }
        }
        if !readOnly { try Self.refuseForeignFile(path: path, busyTimeout: busyTimeout) }
        // A new outbox is set up by one process while the others wait: its first opener switches
        // the file to WAL, which SQLite refuses with an immediate SQLITE_BUSY (no busy handler)
        // to a second connection trying the same switch, and then creates the schema.
        let setUpLock = try readOnly || Self.isInWALMode(path)
            ? nil : MigrationLock(databasePath: path, timeout: busyTimeout)
        defer { setUpLock?.release() }
        let pool = try Self.openPool(path: path, busyTimeout: busyTimeout, readOnly: readOnly)
        try prepareSchema(pool, readOnly: readOnly, holding: setUpLock)
        return pool
    }


    /// Whether the file at `path` is an SQLite database already switched to WAL (header bytes
    /// 18 and 19 are 2): a missing, empty or rollback-journal file still needs its set-up.
    private static func isInWALMode(_ path: String) -> Bool {
        guard let file = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? file.close() }
        guard let header = try? file.read(upToCount: 20), header.count == 20 else { return false }
        return header[header.startIndex + 18] == 2 && header[header.startIndex + 19] == 2
    }

    /// Opening for writing switches the file to WAL, which rewrites its header: a file that is
    /// there already is looked at through a read-only connection first.
    private static func refuseForeignFile(path: String, busyTimeout: TimeInterval) throws(OutboxError) {
        guard let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int, size > 0 else { return }
        do {
            let identity = try DatabaseQueue(path: path, configuration: configuration(busyTimeout: busyTimeout, readOnly: true))
                .read(OutboxIdentity.of)
            if case let .foreign(detail) = identity { throw OutboxError.foreign(path: path, detail: detail) }
        } catch {
            throw OutboxError.map(error, path: path, busyTimeout: busyTimeout)
        }
    }

    private static func configuration(busyTimeout: TimeInterval, readOnly: Bool) -> Configuration {
        var configuration = Configuration()
        configuration.readonly = readOnly
        configuration.busyMode = .timeout(busyTimeout)
        configuration.foreignKeysEnabled = true
        configuration.label = "enlog.outbox"
        configuration.prepareDatabase { db in
            // A queued note is the only copy of the user's entry until upload: pay one fsync
            // per commit so that a power cut cannot lose a note `log` reported as saved.
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        return configuration
    }

    static func openPool(path: String, busyTimeout: TimeInterval, readOnly: Bool) throws(OutboxError) -> DatabasePool {
        let configuration = configuration(busyTimeout: busyTimeout, readOnly: readOnly)
        do {
            let pool = try DatabasePool(path: path, configuration: configuration)
            // A WAL database is read through its -shm index; opening does not touch it, the first read does.
            if readOnly { try pool.read { db in _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") } }
            return pool
        } catch {
            let mapped = OutboxError.map(error, path: path, busyTimeout: busyTimeout)
            guard readOnly, let reader = Self.immutableReader(path: path, configuration: configuration, after: error) else { throw mapped }
            return reader
        }
    }

    /// A WAL database can be read only through its -wal and -shm files, which a reader who cannot
    /// write the folder cannot create (SQLite answers "readonly" or "unable to open"), nor anyone
    /// on a full disk (a 32 KiB index that cannot grow: "disk I/O error"). When the -wal file is
    /// missing or empty, every committed note is in the main file, and no one who lacks write
    /// access to the folder (or space on the disk) can add one: SQLite's `immutable` mode then
    /// reads the file as it is, without the index and without locks. (Root, the folder's owner
    /// after a chmod, or a writer after space was freed could still write meanwhile; a listing
    /// read across that write may be stale, never the outbox damaged.)
    private static func immutableReader(path: String, configuration: Configuration, after error: any Error) -> DatabasePool? {
        guard let databaseError = error as? DatabaseError,
              ((try? FileManager.default.attributesOfItem(atPath: path + "-wal"))?[.size] as? Int ?? 0) == 0 else { return nil }
        let directory = (path as NSString).deletingLastPathComponent
        let folderReadOnly = [.SQLITE_READONLY, .SQLITE_CANTOPEN].contains(databaseError.resultCode)
            && access(directory.isEmpty ? "." : directory, W_OK) != 0
        let diskFull = OutboxError.isPossiblyDiskFull(databaseError) && DiskSpace.isExhausted(near: path)
        guard folderReadOnly || diskFull else { return nil }
        // A URI filename (Debian's SQLite accepts them everywhere): `?`, `#` and `%` must be escaped in its path.
        let absolute = URL(fileURLWithPath: path).path
        guard let escaped = absolute.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "?#%"))) else { return nil }
        let uri = "file:" + escaped + "?immutable=1"
        do {
            let pool = try DatabasePool(path: uri, configuration: configuration)
            try pool.read { db in _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") }
            return pool
        } catch {
            return nil
        }
    }

    private func prepareSchema(_ pool: DatabasePool, readOnly: Bool, holding setUpLock: MigrationLock?) throws(OutboxError) {
        let migrator = OutboxSchema.migrator
        do {
            let (identity, complete, superseded) = try pool.read { db in
                let identity = try OutboxIdentity.of(db)
                guard case .outbox = identity else { return (identity, false, false) }
                return (identity, try migrator.hasCompletedMigrations(db), try migrator.hasBeenSuperseded(db))
            }
            if case let .foreign(detail) = identity { throw OutboxError.foreign(path: path, detail: detail) }
            if superseded { throw OutboxError.newerSchema(path: path) }
            if complete && identity == .outbox(stamped: true) { return }
            if readOnly {
                // An outbox from an earlier enlog, not yet stamped, reads as it is.
                if complete { return }
                throw OutboxError.notInitialized(path: path)
            }
            // Processes opening a new outbox together would each see migrations missing and race
            // through them; a kernel lock beside the file lets one migrate while the others wait.
            // The kernel releases it if its holder dies, so it cannot go stale.
            let lock = try setUpLock ?? MigrationLock(databasePath: path, timeout: busyTimeout)
            defer { if setUpLock == nil { lock.release() } }
            // Checked again under the lock: another process may have set the file up meanwhile.
            let recheck = try pool.read { db in (try OutboxIdentity.of(db), try migrator.hasCompletedMigrations(db)) }
            if case let .foreign(detail) = recheck.0 { throw OutboxError.foreign(path: path, detail: detail) }
            if recheck == (.outbox(stamped: true), true) { return }
            try migrator.migrate(pool)
            try pool.write { db in try OutboxIdentity.stamp(db) }
        } catch {
            throw OutboxError.map(error, path: path, busyTimeout: busyTimeout)
        }
    }

    /// The schema of a database the caller opened (`OutboxStore.init(_:)`) brought up to date:
    /// refused when it is another program's or a newer enlog's, else migrated and stamped. No
    /// lock beside a file: the caller owns the database.
    static func prepareSchema(of writer: any DatabaseWriter, path: String, busyTimeout: TimeInterval) throws(OutboxError) {
        let migrator = OutboxSchema.migrator
        do {
            let (identity, superseded) = try writer.read { db in (try OutboxIdentity.of(db), try migrator.hasBeenSuperseded(db)) }
            if case let .foreign(detail) = identity { throw OutboxError.foreign(path: path, detail: detail) }
            if superseded { throw OutboxError.newerSchema(path: path) }
            try migrator.migrate(writer)
            try writer.write { db in try OutboxIdentity.stamp(db) }
        } catch {
            throw OutboxError.map(error, path: path, busyTimeout: busyTimeout)
        }
    }

    private static func existingAncestor(of directory: String) -> String {
        var url = URL(fileURLWithPath: directory)
        while !FileManager.default.fileExists(atPath: url.path), url.path != "/" {
            url.deleteLastPathComponent()
        }
        return url.path
    }
}
