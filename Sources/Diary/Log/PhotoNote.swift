import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Capture
import Compose
import Outbox

/// `enlog log --photo`: each photo's EXIF GPS position is the fix of a note that carries the photo
/// (and the `--attach` files), or with `--one-note` a single note at the first photo's place
/// carrying them all. Every photo is read and checked before any note is stored.
package struct PhotoNote: Sendable, LocationSource {
    package var position: PhotoPosition
    /// The photo(s) first, then the other files.
    package var files: [NoteResource]

    package func currentFix() async throws -> Fix { position.fix }

    /// - Parameters:
    ///   - maxAge: the quality filter's age limit, measured at the moment each photo was taken.
    ///   - minAccuracy: applied to a photo that states its accuracy; one that states none is
    ///     taken as it is, like a position given by hand (most cameras write no accuracy).
    package static func plan(photos: [String], attachments: [NoteResource], oneNote: Bool,
                            maxAge: TimeInterval?, minAccuracy: Double?) throws -> [PhotoNote] {
        var notes: [PhotoNote] = []
        for path in photos {
            var photo = try Attachments.load(path)
            let position = try PhotoPosition(photo: [UInt8](photo.body), path: path)
            try position.check(QualityFilter(maxAge: maxAge, minAccuracy: position.fix.horizontalAccuracy == nil ? nil : minAccuracy),
                               path: path)
            photo.latitude = position.fix.latitude
            photo.longitude = position.fix.longitude
            notes.append(PhotoNote(position: position, files: [photo]))
        }
        if oneNote, let first = notes.first {
            notes = [PhotoNote(position: first.position, files: notes.flatMap(\.files))]
        }
        for index in notes.indices {
            notes[index].files = Attachments.unique(notes[index].files + attachments)
            try Attachments.checkNote(content: "", resources: notes[index].files)
        }
        return notes
    }

}
