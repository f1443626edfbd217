import Support

/// Evernote's rules for a note's title and the notebook and tag names it carries
/// (EDAM_NOTE_TITLE_REGEX, EDAM_TAG_NAME_REGEX, EDAM_NOTEBOOK_NAME_REGEX and their lengths), in
/// words and as a check, so the configuration refuses a bad name when it is read, long before a
/// note is rendered.
package enum NoteNames {
    package static let titleLength = 255, tagLength = 100, notebookLength = 100
    /// EDAM_NOTE_TAGS_MAX (Limits.thrift): the tags one note may have.
    package static let tagsPerNote = 100
    package static let tagRule = "must be 1 to \(tagLength) characters, without commas, control characters or leading/trailing spaces"
    package static let notebookRule = "must be 1 to \(notebookLength) characters, without control characters or leading/trailing spaces"

    package static func isValidTag(_ name: String) -> Bool {
        isEdgeTrimmedName(name, maxLength: tagLength) && !name.contains(",")
    }

    package static func isValidNotebook(_ name: String) -> Bool {
        isEdgeTrimmedName(name, maxLength: notebookLength)
    }

    /// EDAM_TAG_NAME_REGEX and EDAM_NOTEBOOK_NAME_REGEX: the title's rule with a shorter length.
    package static func isEdgeTrimmedName(_ name: String, maxLength: Int) -> Bool {
        !name.isEmpty && name.utf16.count <= maxLength && name == trimmingSeparators(name)
            && !name.unicodeScalars.contains(where: breaksLine)
    }

    /// Cc, Zl and Zp: what the EDAM name and title rules forbid anywhere.
    package static func breaksLine(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator: return true
        default: return false
        }
    }

    /// Drops what the EDAM rules forbid at either end: controls and every separator (Z), which
    /// includes no-break and ideographic spaces.
    package static func trimmingSeparators(_ text: String) -> String {
        func isEdgeForbidden(_ scalar: Unicode.Scalar) -> Bool {
            switch scalar.properties.generalCategory {
            case .control, .spaceSeparator, .lineSeparator, .paragraphSeparator: return true
            default: return false
            }
        }
        var scalars = Substring(text).unicodeScalars
        while let first = scalars.first, isEdgeForbidden(first) { scalars.removeFirst() }
        while let last = scalars.last, isEdgeForbidden(last) { scalars.removeLast() }
        return String(scalars)
    }
}
