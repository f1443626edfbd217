import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Capture

/// A file carried inside a note (its map image, the files and photos the user attached): a row of
/// `resource` in the outbox, stored in the same transaction as its note and deleted with it (ON DELETE CASCADE).
package struct NoteResource: Codable, Sendable, Equatable {
    package var id: Int64?
    package var noteId: Int64
    /// MD5 of `body`, 32 lowercase hex digits: the `en-media` hash and the resource's bodyHash.
    package var hash: String
    package var body: Data
    package var mime: String
    package var width: Int?
    package var height: Int?
    package var fileName: String?
    package var latitude: Double?
    package var longitude: Double?
    /// A file the user attached (`--attach`, `--photo`), not one enlog made (the map).
    package var userFile: Bool

    package init(noteId: Int64 = 0, hash: String, body: Data, mime: String, width: Int?, height: Int?,
                fileName: String?, latitude: Double?, longitude: Double?, userFile: Bool = false) {
        self.noteId = noteId
        self.hash = hash
        self.body = body
        self.mime = mime
        self.width = width
        self.height = height
        self.fileName = fileName
        self.latitude = latitude
        self.longitude = longitude
        self.userFile = userFile
    }

    /// The resource of a rendered map.
    package init(map: MapImage) {
        self.init(hash: map.md5, body: map.png, mime: MapImage.mimeType, width: map.width, height: map.height,
                  fileName: "map.png", latitude: map.latitude, longitude: map.longitude)
    }

    /// Shown as an attached file rather than inline (EDAM `ResourceAttributes.attachment`):
    /// everything but pictures, e.g. a digest's GPX track or a PDF given to `log --attach`.
    package var isAttachment: Bool { !mime.hasPrefix("image/") }

}
