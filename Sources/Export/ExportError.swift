import Foundation
import Support

/// What can go wrong writing an ENEX export. No case is raised after notes were marked
/// `exported` for a file that is not complete on disk.
package enum ExportError: ENLogError, Equatable {
    /// `--new` never replaces a file: the notes in it may not be imported yet.
    case fileExists(path: String)
    /// The export file (or its temporary file beside it) cannot be created.
    case cannotCreate(path: String, detail: String)
    /// Writing, flushing or renaming the export failed (disk full, I/O error, a closed pipe).
    case writeFailed(path: String, detail: String)
    /// `-` on a terminal: pages of base64 are no use there.
    case standardOutputIsTerminal
    /// `-` and standard output cannot be written: the command hands the `OutputError` on, so
    /// that a closed pipe ends enlog as it ends every command that prints.
    case standardOutputFailed(OutputError)
    /// Notes that could not be written as ENEX were left out (the others were written): which,
    /// and the first one's reason (`-v` gives every reason).
    case notesLeftOut(ids: [Int64], first: String)

    package var reason: String {
        switch self {
        case let .fileExists(path):
            return "\(path) exists; an export with --new never replaces a file whose notes may not be imported yet"
        case let .cannotCreate(path, detail):
            return "cannot create the export \(path): \(detail)"
        case let .writeFailed(path, detail):
            return "cannot write the export \(path): \(detail)"
        case .standardOutputIsTerminal:
            return "refusing to write ENEX to a terminal"
        case let .standardOutputFailed(error):
            return error.reason
        case let .notesLeftOut(ids, first):
            guard ids.count > 1 else { return "note \(ids.first ?? 0) was left out of the export: \(first)" }
            let named = ids.prefix(10).map(String.init).joined(separator: ", ") + (ids.count > 10 ? ", …" : "")
            return "\(ids.count) notes were left out of the export (\(named)); note \(ids[0]): \(first)"
        }
    }

    package var recoverySuggestion: String? {
        switch self {
        case .fileExists: return "give a new file name, e.g. enlog-$(date +%F).enex"
        case .cannotCreate: return "check that the folder exists and that you can write to it"
        case .writeFailed: return "free some space or choose another place; no note was marked exported"
        case .standardOutputIsTerminal: return "redirect the output (> diary.enex) or give a file name"
        case .standardOutputFailed: return "no note was marked exported"
        case .notesLeftOut: return "the notes left out stay as they were; `enlog queue show ID | enlog validate -` checks one, -v lists every reason"
        }
    }

    package var category: ErrorCategory {
        switch self {
        case .fileExists, .cannotCreate: return .cannotWrite
        case .writeFailed, .standardOutputFailed: return .ioError
        case .standardOutputIsTerminal: return .usage
        case .notesLeftOut: return .invalidNote
        }
    }
}
