import Foundation
import Support

/// A note's resources break one of Evernote's limits: the note cannot be uploaded as it is.
package struct ResourceLimitError: ENLogError, Equatable {
    package let detail: String
    package init(detail: String) { self.detail = detail }
    package var reason: String { "the note's resources exceed Evernote's limits: \(detail)" }
    package var recoverySuggestion: String? { "lower map.width/map.height, then `enlog queue retry ID`" }
    /// Like a note Evernote refuses: it is parked, and `sync` exits as for a rejected note.
    package var category: ErrorCategory { .invalidNote }
}

/// Evernote's limits for resources (Limits.thrift), checked before upload.
package enum ResourceLimits {
    /// EDAM_RESOURCE_SIZE_MAX_FREE: one resource's body (free accounts; premium allows more,
    /// but the free limit is the one every account accepts).
    package static let resourceSizeMax = 26_214_400
    /// EDAM_NOTE_SIZE_MAX_FREE: the ENML plus every resource's body.
    package static let noteSizeMax = 26_214_400
    /// EDAM_NOTE_RESOURCES_MAX.
    package static let resourcesPerNoteMax = 1000
}
