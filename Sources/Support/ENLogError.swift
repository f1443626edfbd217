/// What every enlog error tells a user: one line saying what went wrong, and what to do about it.
/// Each concern (ENML, Outbox, Evernote, …) has its own error type conforming to this, and says
/// which `ErrorCategory` each of its cases belongs to; the executable maps categories to exit
/// codes in one place (`ExitStatus`).
package protocol ENLogError: Error, CustomStringConvertible {
    /// One line, no trailing period needed, never containing a secret.
    var reason: String { get }
    /// What the user can do, when there is something to do.
    var recoverySuggestion: String? { get }
    /// What kind of failure this is, for a script or a systemd unit: decides the exit code.
    var category: ErrorCategory { get }
}

extension ENLogError {
    package var recoverySuggestion: String? { nil }
    package var description: String { reason }
}

/// The kinds of failure enlog tells apart, one per row of docs/exit-status.md's table (beyond
/// success and the internal errors that are no `ENLogError`). Closed: a new kind of failure is a
/// new case here, a new exit code, and a new row in docs/exit-status.md; every error type picks one of these.
package enum ErrorCategory: String, Sendable, CaseIterable {
    /// A note is invalid ENML, or Evernote refused one.
    case invalidNote
    /// Bad command line: a flag or argument, an unknown note id, a file named to `validate`.
    case usage
    /// Bad location input: out of range, garbled, an NMEA log without a valid fix.
    case badLocation
    /// A named input file (NMEA log, template, an outbox that must exist) is missing or unreadable.
    case noInput
    /// A service enlog needs is unavailable: gpsd without a usable fix, Evernote unreachable or failing.
    case unavailable
    /// The outbox path names another program's SQLite database.
    case foreignDatabase
    /// The outbox (or a file enlog keeps, like the credentials) cannot be written.
    case cannotWrite
    /// An I/O error (EX_IOERR): the outbox is corrupt, not a database, or from a newer enlog; or
    /// output cannot be written (a full disk, a closed descriptor, an export file's write failing).
    case ioError
    /// Temporary, try again: locked, offline, another sync running, rate limited.
    case temporary
    /// A service answered something that is not its protocol.
    case protocolError
    /// Not signed in, access denied, a token expired or revoked, credentials unusable.
    case noPermission
    /// The configuration file or an `ENLOG_*` variable is wrong.
    case config

    /// What an HTTP status other than the one expected says, the same for every service enlog
    /// talks to (Evernote, OAuth, tile, static-map and geocoding servers): 429 asks to slow down
    /// (try later), 5xx is a service failing (unavailable, README's 69), anything else is not the
    /// protocol (a 404 page, a redirect, a 403 from something in between).
    package static func ofHTTPStatus(_ status: Int) -> ErrorCategory {
        switch status {
        case 429: return .temporary
        case 500...599: return .unavailable
        default: return .protocolError
        }
    }
}
