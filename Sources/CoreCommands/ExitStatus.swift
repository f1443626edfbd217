import ArgumentParser
import Support
import Sync

/// Every exit code enlog uses, in one place; docs/exit-status.md's table mirrors this. Beyond 0–2 they
/// follow sysexits.h, so scripts and systemd can tell a retryable failure (75) from a bad input.
package enum ExitStatus: Int32, CaseIterable {
    case success = 0
    /// A note is invalid ENML (`validate`, or a template that renders invalid ENML).
    case invalidNote = 1
    /// Bad command line, or a file named to `validate` cannot be read.
    case usage = 2
    /// Bad location input: coordinates out of range or not numbers, a garbled --at, an NMEA log without a valid fix.
    case badLocation = 65
    /// A named input file is missing or unreadable (NMEA log, template).
    case noInput = 66
    /// The outbox cannot be written: read-only file or directory, disk full, cannot be created.
    case cannotWrite = 73
    /// An I/O error (EX_IOERR): the outbox file is corrupt or not a database, or output cannot be
    /// written (an export file or standard output: full, closed, failing).
    case ioError = 74
    /// The outbox path names another program's SQLite database (EX_OSFILE: a file that is not
    /// what it must be); enlog refuses to add its tables to it. Also used, outside Swift, by
    /// CLazyLibraries when a library loaded on first use is missing.
    case foreignDatabase = 72
    /// Temporary: the outbox is locked by another process beyond the busy timeout, or the network
    /// is unreachable (`reachability`). Try again.
    case temporary = 75
    /// An error enlog has no type for reached the top (EX_SOFTWARE): a bug, reported as
    /// `enlog: error: internal error: …`.
    case internalError = 70
    /// A service enlog needs is unavailable: no usable fix from gpsd (not running, no fix, fixes too
    /// old or inaccurate), or Evernote cannot be reached (no connection, DNS, timeout, TLS).
    case unavailable = 69
    /// The service answered something that is not the protocol (HTML, garbage, an unexpected status).
    case protocolError = 76
    /// Not signed in, access denied, the token expired or was revoked, or the credentials file is unsafe.
    case noPermission = 77
    /// The configuration file or an ENLOG_* variable is wrong.
    case config = 78

    package var exitCode: ExitCode { ExitCode(rawValue) }

    /// One line per code for `enlog --help` (docs/exit-status.md says the same at more length);
    /// short enough that the table fits 80 columns without wrapping.
    package var summary: String {
        switch self {
        case .success: return "success; every note valid"
        case .invalidNote: return "a note is invalid ENML (validate, or the template's output)"
        case .usage: return "usage error: bad flag or argument, unknown note id, unreadable file"
        case .badLocation: return "bad location: out of range, garbled --at, NMEA log without a fix"
        case .noInput: return "an input file is missing or unreadable (NMEA log, template, outbox)"
        case .foreignDatabase: return "the outbox path names another program's database (left untouched)"
        case .unavailable: return "a service is unavailable: no usable gpsd fix, Evernote unreachable"
        case .internalError: return "internal error (a bug in enlog: please report it)"
        case .cannotWrite: return "the outbox cannot be written"
        case .ioError: return "I/O error: output cannot be written, or the outbox is corrupt"
        case .temporary: return "temporary, try again: locked, offline, sync running, rate limited"
        case .protocolError: return "the service answered something that is not the protocol"
        case .noPermission: return "not signed in, access denied, token expired, credentials unusable"
        case .config: return "the configuration file or an ENLOG_* variable is wrong"
        }
    }

    /// The table `enlog --help` ends with.
    package static var helpTable: String {
        allCases.sorted { $0.rawValue < $1.rawValue }
            .map { ($0.rawValue < 10 ? "   " : "  ") + "\($0.rawValue)  \($0.summary)" }.joined(separator: "\n")
    }

    /// A sync's verdict (`SyncSummary.Verdict`) as an exit code.
    package static func of(_ verdict: SyncSummary.Verdict) -> ExitStatus {
        switch verdict {
        case .complete: return .success
        case .tryLater: return .temporary
        case .serviceUnavailable: return .unavailable
        case .protocolError: return .protocolError
        case .notesRejected: return .invalidNote
        }
    }

    /// An error's exit code: its category's, or `internalError` for anything that is not an
    /// `ENLogError` (a bug: every failure a user can meet has a typed error).
    package static func of(_ error: any Error) -> ExitStatus {
        guard let error = error as? any ENLogError else { return .internalError }
        return of(error.category)
    }

    /// The one place error categories become exit codes; exhaustive, so a new category cannot
    /// go unmapped.
    package static func of(_ category: ErrorCategory) -> ExitStatus {
        switch category {
        case .invalidNote: return .invalidNote
        case .usage: return .usage
        case .badLocation: return .badLocation
        case .noInput: return .noInput
        case .unavailable: return .unavailable
        case .foreignDatabase: return .foreignDatabase
        case .cannotWrite: return .cannotWrite
        case .ioError: return .ioError
        case .temporary: return .temporary
        case .protocolError: return .protocolError
        case .noPermission: return .noPermission
        case .config: return .config
        }
    }
}
