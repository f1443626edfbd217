import Foundation
import Support

/// Where an export's bytes go, written through a buffer with `write(2)` so that every failure is
/// an `ExportError` (never Foundation's fatal error on a full disk).
///
/// A regular file (or a name not yet taken) is written to a temporary file beside it, flushed to
/// disk and then put in its place: a reader never sees half an export, and an export that fails
/// leaves what was there before. Something else that exists (a FIFO, a device) and standard
/// output are written straight.
///
/// The temporary file (`.NAME.enlog-XXXXXX`) is removed when SIGINT, SIGTERM or SIGHUP ends the
/// export (`SignalCleanup`), and held under an `flock` while it is written: a later export to
/// the same name removes the temporaries no process holds (a `kill -9`, a power cut), and
/// leaves alone those another export is writing.
final class ENEXFile {
    enum Target: Equatable {
        case standardOutput
        case path(String)
    }

    /// How the file is named in messages and recorded in the outbox: the absolute path, or "-".
    let name: String
    private let descriptor: Int32
    private let finalPath: String?
    private let temporaryPath: String?
    private let replaces: Bool
    private var buffer: [UInt8] = []
    private var committed = false
    private var removalOnSignal: SignalCleanup.Registration?
    private(set) var bytesWritten = 0

    private static let bufferSize = 1 << 18

    /// - Parameter replaces: whether an existing regular file may be replaced (a copy may; an
    ///   export that marks notes may not, as the notes in the old file may not be imported yet).
    init(_ target: Target, replaces: Bool) throws(ExportError) {
        self.replaces = replaces
        buffer.reserveCapacity(Self.bufferSize)
        switch target {
        case .standardOutput:
            guard isatty(STDOUT_FILENO) != 1 else { throw .standardOutputIsTerminal }
            name = "-"
            descriptor = STDOUT_FILENO
            finalPath = nil
            temporaryPath = nil
        case .path(let given):
            let path = given.hasPrefix("/") ? given : FileManager.default.currentDirectoryPath + "/" + given
            name = path
            var status = stat()
            let exists = stat(path, &status) == 0
            if exists, (status.st_mode & S_IFMT) == S_IFDIR {
                throw .cannotCreate(path: path, detail: "it is a directory")
            }
            if exists, (status.st_mode & S_IFMT) != S_IFREG {
                // A FIFO or a device: written as it is, like standard output.
                let opened = open(path, O_WRONLY | O_CLOEXEC)
                guard opened >= 0 else { throw .cannotCreate(path: path, detail: Self.systemError()) }
                descriptor = opened
                finalPath = nil
                temporaryPath = nil
                return
            }
            if exists, !replaces { throw .fileExists(path: path) }
            let directory = (path as NSString).deletingLastPathComponent
            let base = (path as NSString).lastPathComponent
            Self.removeAbandonedTemporaries(in: directory, of: base)
            var template = Array((directory + "/." + base + ".enlog-XXXXXX").utf8CString)
            let opened = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
            guard opened >= 0 else { throw .cannotCreate(path: path, detail: Self.systemError()) }
            _ = fcntl(opened, F_SETFD, FD_CLOEXEC)
            // Held until the descriptor is closed (committed, discarded, or the process ended).
            _ = flock(opened, LOCK_EX | LOCK_NB)
            removalOnSignal = SignalCleanup.removeOnSignal(String(nulTerminated: template))
            // mkstemp makes it 0600; a file replaced keeps its permissions.
            if exists { fchmod(opened, status.st_mode & 0o7777) }
            descriptor = opened
            finalPath = path
            temporaryPath = String(nulTerminated: template)
        }
    }

    deinit {
        if !committed { discard() }
    }

    func write(_ text: String) throws(ExportError) {
        let count = text.utf8.count
        if buffer.count + count > Self.bufferSize { try flush() }
        if count >= Self.bufferSize {
            try writeAll(Array(text.utf8))
        } else {
            buffer.append(contentsOf: text.utf8)
        }
    }

    func flush() throws(ExportError) {
        guard !buffer.isEmpty else { return }
        try writeAll(buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    private func writeAll(_ bytes: [UInt8]) throws(ExportError) {
        if name == "-" {
            // Standard output as every command writes it (a closed pipe is an EPIPE there).
            do { try StandardOutput.write(Data(bytes)) } catch { throw .standardOutputFailed(error) }
            bytesWritten += bytes.count
            return
        }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                throw .writeFailed(path: name, detail: Self.systemError())
            }
            offset += written
        }
        bytesWritten += bytes.count
    }

    /// Everything flushed; a file made durable and put in its place. Only after this may notes
    /// be marked as exported to it.
    func commit() throws(ExportError) {
        try flush()
        guard let finalPath, let temporaryPath else {
            if descriptor != STDOUT_FILENO { close(descriptor) }
            committed = true
            return
        }
        guard fsync(descriptor) == 0 else { throw .writeFailed(path: name, detail: "fsync: " + Self.systemError()) }
        guard close(descriptor) == 0 else { throw .writeFailed(path: name, detail: "close: " + Self.systemError()) }
        committed = true
        defer { removalOnSignal.take()?.release() }
        do {
            try place(temporaryPath, at: finalPath)
        } catch {
            unlink(temporaryPath)
            throw error
        }
        let directory = open((finalPath as NSString).deletingLastPathComponent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            fsync(directory)
            close(directory)
        }
    }

    /// Nothing to export after all: the temporary file goes, and nothing takes the name.
    func discard() {
        committed = true
        buffer.removeAll()
        guard let temporaryPath else { return }
        unlink(temporaryPath)
        close(descriptor)
        removalOnSignal.take()?.release()
    }

    /// Removes the temporaries of earlier exports to `base` in `directory` that no process
    /// writes: named as this type names them, regular files of this user, and no `flock` held on
    /// them. One modified in the last minute is left (its export may have created it and not yet
    /// taken the lock). Nothing else is touched, and any failure just leaves the file.
    static func removeAbandonedTemporaries(in directory: String, of base: String) {
        let prefix = "." + base + ".enlog-"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.isEmpty ? "/" : directory) else { return }
        for name in names where name.hasPrefix(prefix) && name.utf8.count == prefix.utf8.count + 6 {
            let path = directory + "/" + name
            let candidate = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
            guard candidate >= 0 else { continue }
            defer { close(candidate) }
            var status = stat()
            guard fstat(candidate, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_uid == geteuid(),
                  Double(status.st_mtim.tv_sec) < Date().timeIntervalSince1970 - 60,
                  flock(candidate, LOCK_EX | LOCK_NB) == 0 else { continue }
            // Still the file locked (not one that took its name meanwhile).
            var now = stat()
            if lstat(path, &now) == 0, now.st_ino == status.st_ino, now.st_dev == status.st_dev { unlink(path) }
        }
    }

    /// Takes back a committed file whose notes could not be marked exported (standard output,
    /// a FIFO or a device cannot be taken back).
    func withdraw() {
        if let finalPath { unlink(finalPath) }
    }

    /// A copy replaces the file by renaming over it. An export that marks notes must not: a hard
    /// link takes the name only if it is free (where the file system has no hard links, a check
    /// just before the rename does, with a small window).
    private func place(_ temporary: String, at path: String) throws(ExportError) {
        if replaces {
            guard rename(temporary, path) == 0 else { throw .writeFailed(path: name, detail: "rename: " + Self.systemError()) }
            return
        }
        if link(temporary, path) == 0 {
            unlink(temporary)
            return
        }
        switch errno {
        case EEXIST:
            throw .fileExists(path: path)
        case EPERM, EOPNOTSUPP, EMLINK:
            var status = stat()
            if lstat(path, &status) == 0 { throw .fileExists(path: path) }
            guard rename(temporary, path) == 0 else { throw .writeFailed(path: name, detail: "rename: " + Self.systemError()) }
        default:
            throw .writeFailed(path: name, detail: "link: " + Self.systemError())
        }
    }

    private static func systemError() -> String { String(cString: strerror(errno)) }
}
