import Foundation
import GRDB
import Support
import EvernoteAPI
import Configuration
import Capture
import Compose

package enum OutboxError: ENLogError, Equatable {
    /// Another connection held the database longer than the busy timeout.
    case locked(path: String, waited: TimeInterval)
    case corrupt(path: String, detail: String)
    case readOnly(path: String, detail: String)
    case cannotOpen(path: String, detail: String)
    case diskFull(path: String)
    /// The file was migrated by a newer enlog whose schema this one does not know.
    case newerSchema(path: String)
    /// Opened read-only before any enlog command created its tables.
    case notInitialized(path: String)
    /// A command that only reads or changes notes was pointed at a path where no file is.
    case missing(path: String)
    /// The file is another program's SQLite database; enlog will not add its tables to it.
    case foreign(path: String, detail: String)
    case noteNotFound(id: Int64)
    case duplicateNote(uid: String)
    case invalidTransition(id: Int64, state: OutboxNote.State, action: OutboxNote.Action)
    case storedFixInvalid(id: Int64, detail: String)
    case database(path: String, detail: String)
    /// The file was deleted or replaced while enlog wrote to it (`OutboxFile`): its notes, the
    /// last one included, were copied out to `keptIn` (the path itself when it was free).
    case vanished(path: String, replaced: Bool, keptIn: String?, detail: String?)
    /// The write-ahead log (or its index) was deleted under this process, which put what the log
    /// held into the outbox (`kept`; `OutboxFile`), `detail` saying why it could not go on.
    case logLost(path: String, kept: Bool, detail: String?)
    /// The write-ahead log was deleted while another process, `holder` when found, has it open:
    /// committed notes are only in that process's open file until it writes them back.
    case logDeletedElsewhere(path: String, holder: String?)

    package var reason: String {
        switch self {
        case let .locked(path, waited):
            return "outbox \(path) is locked by another process (waited \(String(format: "%.1f", waited)) s)"
        case let .corrupt(path, detail):
            return "outbox \(path) is damaged: \(detail)"
        case let .readOnly(path, detail):
            return "outbox \(path) cannot be written: \(detail)"
        case let .cannotOpen(path, detail):
            return "cannot open outbox \(path): \(detail)"
        case let .diskFull(path):
            return "no space left on the disk holding outbox \(path)"
        case let .newerSchema(path):
            return "outbox \(path) was written by a newer version of enlog"
        case let .notInitialized(path):
            return "outbox \(path) has not been set up yet"
        case let .missing(path):
            return "no outbox at \(path)"
        case let .foreign(path, detail):
            return "\(path) is not an enlog outbox: \(detail)"
        case let .noteNotFound(id):
            return "no note \(id) in the outbox"
        case let .duplicateNote(uid):
            return "a note with uid \(uid) is already in the outbox"
        case let .invalidTransition(id, state, action):
            return "cannot \(action.rawValue) note \(id): \(state.explanation)"
        case let .storedFixInvalid(id, detail):
            return "stored fix \(id) is invalid: \(detail)"
        case let .database(path, detail):
            return "outbox \(path): \(detail)"
        case let .vanished(path, replaced, keptIn, detail):
            let what = "outbox \(path) was \(replaced ? "replaced by another file" : "deleted") while enlog was writing to it"
            guard let keptIn else { return what + ", and its notes could not be copied out: \(detail ?? "unknown error")" }
            return keptIn == path ? what + "; it is back there with every note, the last one included"
                                  : what + "; the notes of the one enlog had open, the last one included, are in \(keptIn)"
        case let .logLost(path, kept, detail):
            let what = "the write-ahead log of outbox \(path) (\(path)-wal) was deleted while enlog was writing to it"
            guard kept else { return what + ", and the notes it holds could not be put into the outbox" }
            return what + "; every note in it, the last one included, is now in the outbox"
                + (detail.map { ", which could not be opened again: \($0)" } ?? "")
        case let .logDeletedElsewhere(path, holder):
            return "the write-ahead log of outbox \(path) (\(path)-wal) was deleted while \(holder ?? "another process") "
                + "had it open: the latest notes are only in that process until it writes them back"
        }
    }

    package var recoverySuggestion: String? {
        switch self {
        case .locked:
            return "another enlog command is probably running; try again, or look for a stuck enlog process"
        case let .corrupt(path, _):
            // Reading commands often still read a file with a damaged page: save what they can
            // before anything starts afresh.
            return "first save the notes it still holds with `enlog export --enex FILE` (or `sqlite3 \(path) .recover`), "
                + "then move \(path) aside and run the command again to start a new outbox"
        case .readOnly:
            return "check the permissions of the file and its directory, or choose another outbox path"
        case .cannotOpen:
            return "check that the path is a file in a directory you can write"
        case .diskFull:
            return "free some disk space and try again"
        case .newerSchema:
            return "use the newer enlog, or point this one to another outbox"
        case .notInitialized:
            return "run enlog log once to create the outbox"
        case .missing:
            return "check the path given by --db or ENLOG_DB; enlog log creates an outbox"
        case .foreign:
            return "point --db or ENLOG_DB to an enlog outbox, or to a path where none exists yet; the file was left untouched"
        case .noteNotFound:
            return "list the outbox to see the note ids"
        case .duplicateNote:
            return nil
        case let .invalidTransition(_, state, action):
            return state.suggestion(for: action)
        case .storedFixInvalid, .database:
            return nil
        case let .vanished(path, _, keptIn, _):
            guard let keptIn else { return "notes not yet uploaded from it are lost" }
            return keptIn == path ? "start the command again" : "`enlog --db \(keptIn) sync` uploads them; the next start uses \(path)"
        case let .logLost(_, kept, detail):
            if !kept { return "keep this process running and run `enlog export --enex FILE` to save the notes" }
            return detail == nil ? nil : "run the command again"
        case let .logDeletedElsewhere(_, holder):
            let stop = holder.flatMap { $0.split(separator: " ").dropFirst().first }.map { "`kill \($0)`" } ?? "Ctrl-C"
            return "wait a moment (enlog watch writes them back at its next fix), or stop that process with \(stop) "
                + "(not kill -9: that loses them); then run the command again"
        }
    }

    /// Maps a GRDB or SQLite failure on the database at `path` to what the user can act on.
    static func map(_ error: any Error, path: String, busyTimeout: TimeInterval) -> OutboxError {
        if let outboxError = error as? OutboxError { return outboxError }
        guard let databaseError = error as? DatabaseError else {
            return .database(path: path, detail: String(describing: error))
        }
        let detail = databaseError.message ?? "SQLite error \(databaseError.extendedResultCode.rawValue)"
        if isPossiblyDiskFull(databaseError), DiskSpace.isExhausted(near: path) { return .diskFull(path: path) }
        if [.SQLITE_IOERR, .SQLITE_CORRUPT].contains(databaseError.resultCode), WriteAheadLog.isShort(path) {
            return .logDeletedElsewhere(path: path, holder: WriteAheadLog.holderOfDeleted(path))
        }
        switch databaseError.resultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return .locked(path: path, waited: busyTimeout)
        case .SQLITE_CORRUPT, .SQLITE_NOTADB:
            return .corrupt(path: path, detail: detail)
        case .SQLITE_READONLY:
            return .readOnly(path: path, detail: detail)
        case .SQLITE_CANTOPEN, .SQLITE_PERM:
            let directory = (path as NSString).deletingLastPathComponent
            if access(directory.isEmpty ? "." : directory, W_OK) != 0 {
                let why = String(cString: strerror(errno))
                return .readOnly(path: path, detail: "directory \(directory) is not writable (\(why))")
            }
            return .cannotOpen(path: path, detail: detail)
        case .SQLITE_FULL:
            return .diskFull(path: path)
        default:
            return .database(path: path, detail: detail)
        }
    }

    /// The codes a full disk shows as: SQLITE_FULL where SQLite can tell, and otherwise an I/O
    /// error or a file it could not open (a `-shm` or `-wal` it could not create or grow).
    static func isPossiblyDiskFull(_ error: DatabaseError) -> Bool {
        DiskSpace.mayBeFull(sqliteResultCode: error.resultCode.rawValue)
    }
}

extension OutboxError {
    package var category: ErrorCategory {
        switch self {
        case .locked: return .temporary
        case .corrupt, .newerSchema, .storedFixInvalid: return .ioError
        case .readOnly, .cannotOpen, .diskFull, .database, .vanished, .logLost: return .cannotWrite
        case .logDeletedElsewhere: return .temporary
        case .missing, .notInitialized: return .noInput
        case .foreign: return .foreignDatabase
        case .noteNotFound, .duplicateNote, .invalidTransition: return .usage
        }
    }
}
