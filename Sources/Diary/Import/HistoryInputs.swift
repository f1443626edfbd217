import CArchive
import Foundation
import Support
import Capture

/// Bytes of one input of `enlog import`, read in chunks: a file, a FIFO, a member of an archive.
protocol HistoryByteSource: AnyObject {
    /// Up to `count` next bytes; empty at the end.
    func read(upTo count: Int) throws(HistoryImportError) -> [UInt8]
    /// The first bytes have been read and the format told.
    func knowsWhatItReads()
}

/// A file given to `enlog import`, or found in a folder given to it.
final class HistoryFileSource: HistoryByteSource {
    let name: String
    let stream: FileStream

    init(path: String) throws(HistoryImportError) {
        name = path
        do {
            stream = try FileStream(pathBytes: Array(path.utf8))
        } catch {
            throw .unreadable(path: path, detail: error.reason)
        }
    }

    func knowsWhatItReads() {
        stream.knowsWhatItReads()
    }

    func read(upTo count: Int) throws(HistoryImportError) -> [UInt8] {
        do {
            return try stream.read(upTo: count)
        } catch {
            throw .unreadable(path: name, detail: error.reason)
        }
    }
}

/// A zip archive (a Google Takeout download, a KMZ) read with libarchive, member after member,
/// each as a stream: nothing is unpacked to the disk or held whole.
final class HistoryArchive {
    let path: String
    private let archive: OpaquePointer

    /// Whether `prefix` starts a zip archive (a local file header, or the end record of an empty one).
    static func recognizes(_ prefix: ArraySlice<UInt8>) -> Bool {
        prefix.starts(with: [0x50, 0x4B, 0x03, 0x04]) || prefix.starts(with: [0x50, 0x4B, 0x05, 0x06])
    }

    init(path: String) throws(HistoryImportError) {
        self.path = path
        guard let archive = archive_read_new() else { throw .badArchive(path: path, detail: "libarchive could not start") }
        self.archive = archive
        archive_read_support_format_zip(archive)
        guard archive_read_open_filename(archive, path, 1 << 16) == ARCHIVE_OK else {
            throw .badArchive(path: path, detail: message())
        }
    }

    deinit { archive_read_free(archive) }

    /// The next regular member's name, or nil after the last.
    func nextMember() throws(HistoryImportError) -> String? {
        while true {
            var entry: OpaquePointer?
            let status = archive_read_next_header(archive, &entry)
            if status == ARCHIVE_EOF { return nil }
            guard status == ARCHIVE_OK || status == ARCHIVE_WARN, let entry else { throw .badArchive(path: path, detail: message()) }
            guard archive_entry_filetype(entry) == S_IFREG else { continue }
            return archive_entry_pathname_utf8(entry).map { String(cString: $0) } ?? archive_entry_pathname(entry).map { String(cString: $0) } ?? "?"
        }
    }

    /// Compressed bytes read so far (for progress).
    var bytesRead: Int { Int(archive_filter_bytes(archive, -1)) }

    func readMember(upTo count: Int, member: String) throws(HistoryImportError) -> [UInt8] {
        var chunk = [UInt8](repeating: 0, count: count)
        let read = chunk.withUnsafeMutableBytes { archive_read_data(archive, $0.baseAddress, count) }
        guard read >= 0 else { throw .badArchive(path: path, detail: "\(member): \(message())") }
        chunk.removeSubrange(read...)
        return chunk
    }

    private func message() -> String {
        archive_error_string(archive).map { String(cString: $0) } ?? "not a zip archive enlog can read"
    }
}

/// The member of `HistoryArchive` being read.
final class HistoryArchiveMember: HistoryByteSource {
    let archive: HistoryArchive
    let member: String

    init(archive: HistoryArchive, member: String) {
        self.archive = archive
        self.member = member
    }

    func knowsWhatItReads() {}

    func read(upTo count: Int) throws(HistoryImportError) -> [UInt8] {
        try archive.readMember(upTo: count, member: member)
    }
}

/// The files a folder given to `enlog import` holds, in every subfolder, in name order (so
/// every run reads them in the same order); hidden files and symbolic links to folders are left
/// out (a link could lead back up and never end); links to files are followed.
///
/// Every entry that cannot be read is kept as an error (a subfolder that cannot be listed, a
/// dangling link, a FIFO or device): the import reports each and fails with its code, rather
/// than importing less than the folder holds in silence.
enum HistoryFolder {
    struct Listing {
        var files: [String] = []
        var unreadable: [(path: String, error: HistoryImportError)] = []
    }

    static func files(in folder: String) -> Listing {
        var listing = Listing()
        var pending = [folder]
        while let current = pending.popLast() {
            let names: [String]
            do {
                names = try FileManager.default.contentsOfDirectory(atPath: current)
            } catch {
                // Foundation's error keeps no errno: opendir(3) tells why in the system's words.
                var detail = "the folder cannot be listed"
                if let stream = opendir(current) { closedir(stream) } else { detail = String(cString: strerror(errno)) }
                listing.unreadable.append((current, .unreadable(path: current, detail: detail)))
                continue
            }
            var folders: [String] = []
            for name in names.sorted() where !name.hasPrefix(".") {
                let path = current.hasSuffix("/") ? current + name : current + "/" + name
                var status = stat()
                guard lstat(path, &status) == 0 else {
                    listing.unreadable.append((path, .unreadable(path: path, detail: String(cString: strerror(errno)))))
                    continue
                }
                if status.st_mode & S_IFMT == S_IFLNK {
                    guard stat(path, &status) == 0 else {
                        let why = String(cString: strerror(errno))
                        listing.unreadable.append((path, .unreadable(path: path, detail: "a symbolic link to nothing readable (\(why))")))
                        continue
                    }
                    if status.st_mode & S_IFMT == S_IFDIR { continue }
                }
                switch status.st_mode & S_IFMT {
                case S_IFDIR: folders.append(path)
                case S_IFREG: listing.files.append(path)
                default:
                    let kind = FileBytes.describe(status.st_mode & S_IFMT)
                    listing.unreadable.append((path, .unreadable(path: path, detail: "not a regular file (\(kind)); skipped")))
                }
            }
            pending.append(contentsOf: folders.reversed())
        }
        return listing
    }
}
