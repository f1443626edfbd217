import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Capture

/// A file named to `--attach` or `--photo` that cannot go into a note.
package enum AttachmentError: ENLogError, Equatable {
    case missing(path: String)
    /// A directory, a file without read permission, an I/O error: `reason` is the system's.
    case unreadable(path: String, reason: String)
    /// Evernote keeps no empty resources, and an empty file is most likely a mistake.
    case empty(path: String)
    case tooLarge(path: String, size: Int, limit: Int)
    case tooMany(count: Int, limit: Int)
    /// The ENML and every file together exceed the note size limit.
    case noteTooLarge(size: Int, limit: Int, largest: String)

    package var reason: String {
        switch self {
        case .missing(let path):
            return "cannot attach \(path): no such file"
        case .unreadable(let path, let reason):
            return "cannot attach \(path): \(reason)"
        case .empty(let path):
            return "cannot attach \(path): the file is empty"
        case .tooLarge(let path, let size, let limit):
            return "cannot attach \(path): it is \(size) bytes, Evernote takes at most \(limit) per file (EDAM_RESOURCE_SIZE_MAX_FREE)"
        case .tooMany(let count, let limit):
            return "cannot attach \(count) files: a note carries at most \(limit) (EDAM_NOTE_RESOURCES_MAX, its map included)"
        case .noteTooLarge(let size, let limit, let largest):
            return "the note with its files is \(size) bytes, Evernote takes at most \(limit) (EDAM_NOTE_SIZE_MAX_FREE); the largest is \(largest)"
        }
    }

    package var recoverySuggestion: String? {
        switch self {
        case .missing, .unreadable: return "check the path and its permissions; nothing was stored"
        case .empty, .tooLarge, .tooMany, .noteTooLarge: return "attach fewer or smaller files; nothing was stored"
        }
    }

    package var category: ErrorCategory {
        switch self {
        case .missing, .unreadable: return .noInput
        case .empty, .tooLarge, .tooMany, .noteTooLarge: return .usage
        }
    }
}

/// Files the user puts into a note (`--attach`, `--photo`): read whole, typed by their content,
/// checked against Evernote's limits before anything is stored.
package enum Attachments {
    /// One file as a resource of the note: MD5, MIME type from libmagic, the size of an image,
    /// its base name. Refused before it is read when it is already over the size limit.
    package static func load(_ path: String) throws(AttachmentError) -> NoteResource {
        let bytes: [UInt8]
        do {
            // A FIFO or device could be endless: only regular files are files to attach.
            bytes = try FileBytes.read(path, limit: InputLimit(maximumBytes: ResourceLimits.resourceSizeMax), accepting: .regularFilesOnly)
        } catch .tooLarge(let size, let limit) {
            throw .tooLarge(path: path, size: size ?? limit + 1, limit: limit)
        } catch {
            if error == .system(ENOENT) || error == .system(ENOTDIR) { throw .missing(path: path) }
            throw .unreadable(path: path, reason: error.reason)
        }
        guard !bytes.isEmpty else { throw .empty(path: path) }
        let mime = FileType.mimeType(of: bytes)
        let size = ImageSize(bytes, mime: mime)
        let name = URL(fileURLWithPath: path).lastPathComponent
        return NoteResource(hash: MapImage.md5Hex(bytes), body: Data(bytes), mime: mime, width: size?.width, height: size?.height,
                            fileName: ENMLCharacters.cleaned(name), latitude: nil, longitude: nil, userFile: true)
    }

    /// Several files, in order; the same content named twice is carried once (a note holds one
    /// resource per hash).
    package static func load(_ paths: [String]) throws(AttachmentError) -> [NoteResource] {
        var resources: [NoteResource] = []
        for path in paths { resources.append(try load(path)) }
        resources = unique(resources)
        try checkNote(content: "", resources: resources)
        return resources
    }

    /// The first of each content: a note holds one resource per hash.
    package static func unique(_ files: [NoteResource]) -> [NoteResource] {
        var seen = Set<String>()
        return files.filter { seen.insert($0.hash).inserted }
    }

    /// Evernote's per-note limits for the rendered note with all its resources (the map too):
    /// checked before the note is stored, so a note the service would refuse is never queued.
    package static func checkNote(content: String, resources: [NoteResource]) throws(AttachmentError) {
        if resources.count > ResourceLimits.resourcesPerNoteMax {
            throw .tooMany(count: resources.filter(\.userFile).count, limit: ResourceLimits.resourcesPerNoteMax)
        }
        let total = content.utf8.count + resources.reduce(0) { $0 + $1.body.count }
        if total > ResourceLimits.noteSizeMax {
            let largest = resources.max { $0.body.count < $1.body.count }
            throw .noteTooLarge(size: total, limit: ResourceLimits.noteSizeMax,
                                largest: largest.map { "\($0.fileName ?? $0.hash) (\($0.body.count) bytes)" } ?? "-")
        }
    }
}
