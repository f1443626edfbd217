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

    /// `path`: the name as the file system spells it; `name` shows it (`HistoryPath.shown`).
    init(path: [UInt8], name: String) throws(HistoryImportError) {
        self.name = name
        do {
            stream = try FileStream(pathBytes: path)
        } catch {
            throw .unreadable(path: name, detail: error.reason)
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

    /// `bytes`: the name as the file system spells it; `path` shows it.
    init(bytes: [UInt8], path: String) throws(HistoryImportError) {
        self.path = path
        guard let archive = archive_read_new() else { throw .badArchive(path: path, detail: "libarchive could not start") }
        self.archive = archive
        archive_read_support_format_zip(archive)
        guard !bytes.contains(0), (bytes + [0]).withUnsafeBufferPointer({
            archive_read_open_filename(archive, UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), 1 << 16)
        }) == ARCHIVE_OK else {
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

/// A path of `enlog import` as the file system spells it, which need not be UTF-8 (a name
/// from an old Latin-1 disk): opened by these bytes, shown with the bad ones as `\xNN`.
package enum HistoryPath {
    package static func shown(_ bytes: [UInt8]) -> String {
        String(validating: bytes, as: UTF8.self) ?? TerminalText.escaped(bytes)
    }

    /// Whether `bytes` names a directory (links followed).
    static func isDirectory(_ bytes: [UInt8]) -> Bool {
        var status = stat()
        return !bytes.contains(0) && (bytes + [0]).withUnsafeBufferPointer {
            stat(UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), &status)
        } == 0 && status.st_mode & S_IFMT == S_IFDIR
    }
}

/// The files a folder given to `enlog import` holds, in every subfolder, in name order (so
/// every run reads them in the same order); hidden files and symbolic links to folders are left
/// out (a link could lead back up and never end); links to files are followed. A walk over
/// bytes (opendir/readdir), not FileManager, whose listing repairs a name that is not UTF-8
/// into one that opens nothing.
///
/// Every entry that cannot be read is kept as an error (a subfolder that cannot be listed, a
/// dangling link, a FIFO or device): the import reports each and fails with its code, rather
/// than importing less than the folder holds in silence.
enum HistoryFolder {
    struct Listing {
        var files: [[UInt8]] = []
        var unreadable: [(path: String, error: HistoryImportError)] = []
    }

    static func files(in folder: [UInt8]) -> Listing {
        var listing = Listing()
        func unreadable(_ path: [UInt8], _ detail: String) {
            let shown = HistoryPath.shown(path)
            listing.unreadable.append((shown, .unreadable(path: shown, detail: detail)))
        }
        func isHidden(_ name: [UInt8]) -> Bool { name.first == UInt8(ascii: ".") }
        FolderWalk.walk(folder, enter: { !isHidden($0) }) { event in
            switch event {
            case .unlistableFolder(let path, let reason):
                unreadable(path, reason)
            case .unreadableEntry(let path, let name, let reason):
                if !isHidden(name) { unreadable(path, reason) }
            case .entry(let path, let name, var status):
                guard !isHidden(name) else { return }
                if status.st_mode & S_IFMT == S_IFLNK {
                    guard FolderWalk.withCPath(path, { stat($0, &status) }) == 0 else {
                        unreadable(path, "a symbolic link to nothing readable (\(String(cString: strerror(errno))))")
                        return
                    }
                    if status.st_mode & S_IFMT == S_IFDIR { return }
                }
                switch status.st_mode & S_IFMT {
                case S_IFDIR: break   // walked after its siblings
                case S_IFREG: listing.files.append(path)
                default: unreadable(path, "not a regular file (\(FileBytes.describe(status.st_mode & S_IFMT))); skipped")
                }
            }
        }
        return listing
    }
}
