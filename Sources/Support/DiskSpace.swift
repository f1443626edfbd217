import Foundation

/// Whether a failed write was the disk being full. SQLite reports a full disk as SQLITE_FULL
/// only where it can tell; growing its `-shm` index or writing the `-wal` on a full file system
/// fails as a plain "disk I/O error" (SQLITE_IOERR), which helps no one: enlog asks the file
/// system instead, and says "no space left" for every store it keeps (outbox, tile cache).
package enum DiskSpace {
    /// Less than this much space left counts as full: SQLite needs 32 KiB for an index, pages
    /// for the log and the database, and journal room beside them.
    package static let margin: UInt64 = 1 << 20

    /// True when the file system holding `path` (or its nearest existing ancestor, when `path`
    /// is not there yet) has less than `margin` left for this user.
    package static func isExhausted(near path: String) -> Bool {
        var candidate = path.isEmpty ? "." : path
        var info = statvfs()
        while statvfs(candidate, &info) != 0 {
            let parent = (candidate as NSString).deletingLastPathComponent
            guard !parent.isEmpty, parent != candidate else { return false }
            candidate = parent
        }
        return UInt64(info.f_bavail) * UInt64(info.f_frsize) < margin
    }

    /// The SQLite primary result codes a full disk shows as: SQLITE_FULL (13) where SQLite can
    /// tell, and otherwise an I/O error (10) or a file it could not open (14), a `-shm` or `-wal`
    /// it could not create or grow. Only `isExhausted(near:)` then says whether it was the disk.
    package static func mayBeFull(sqliteResultCode code: Int32) -> Bool {
        [13, 10, 14].contains(code)
    }
}
