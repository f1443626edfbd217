import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Capture

extension ResourceLimits {
    /// Throws when the note's resources break one of the limits, naming which.
    package static func check(_ resources: [NoteResource], content: String) throws(ResourceLimitError) {
        if resources.count > resourcesPerNoteMax {
            throw ResourceLimitError(detail: "\(counted(resources.count, "resource")), at most \(resourcesPerNoteMax) per note (EDAM_NOTE_RESOURCES_MAX)")
        }
        for resource in resources where resource.body.count > resourceSizeMax {
            throw ResourceLimitError(detail: "\(resource.fileName ?? resource.hash) is \(resource.body.count) bytes, at most \(resourceSizeMax) (EDAM_RESOURCE_SIZE_MAX_FREE)")
        }
        let total = content.utf8.count + resources.reduce(0) { $0 + $1.body.count }
        if total > noteSizeMax {
            throw ResourceLimitError(detail: "the note is \(total) bytes with its resources, at most \(noteSizeMax) (EDAM_NOTE_SIZE_MAX_FREE)")
        }
    }
}
