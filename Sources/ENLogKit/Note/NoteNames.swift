/// Evernote's rules for the notebook and tag names a note carries, in words and as a check, so
/// the configuration refuses a bad name when it is read, long before a note is rendered.
enum NoteNames {
    static let tagLength = NoteRenderer.tagLength
    static let notebookLength = NoteRenderer.notebookLength
    static let tagRule = "must be 1 to \(NoteRenderer.tagLength) characters, without commas, control characters or leading/trailing spaces"
    static let notebookRule = "must be 1 to \(NoteRenderer.notebookLength) characters, without control characters or leading/trailing spaces"

    static func isValidTag(_ name: String) -> Bool {
        NoteRenderer.isEdgeTrimmedName(name, maxLength: tagLength) && !name.contains(",")
    }

    static func isValidNotebook(_ name: String) -> Bool {
        NoteRenderer.isEdgeTrimmedName(name, maxLength: notebookLength)
    }
}
