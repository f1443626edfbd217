/// What every enlog error tells a user: one line saying what went wrong, and what to do about it.
/// Each concern (ENML, Outbox, Evernote, …) has its own error type conforming to this; the
/// executable maps them to exit codes in one place.
public protocol ENLogError: Error, CustomStringConvertible {
    /// One line, no trailing period needed, never containing a secret.
    var reason: String { get }
    /// What the user can do, when there is something to do.
    var recoverySuggestion: String? { get }
}

extension ENLogError {
    public var recoverySuggestion: String? { nil }
    public var description: String { reason }
}
