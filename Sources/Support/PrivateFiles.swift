import Foundation

/// Folders and files that hold the diary (the outbox and its -wal and -shm, the tile cache, an
/// export's temporary): readable by their owner alone, whatever the umask (a umask of 022
/// would leave the whole diary readable by every user of the machine; 000 its folder writable
/// by all), as the credentials are. Only what enlog creates is set; a folder or file that is
/// there already keeps the mode its owner gave it.
package enum PrivateFiles {
    package static let folderMode: mode_t = 0o700
    package static let fileMode: mode_t = 0o600

    /// Creates `directory` and the missing folders above it, each 0700 (set after mkdir, which
    /// the umask narrows). Throws with the system's words when one cannot be made.
    package static func makeDirectories(_ directory: String) throws(PrivateFileError) {
        var missing: [String] = []
        var current = directory.isEmpty ? "." : directory
        var status = stat()
        while stat(current, &status) != 0 {
            guard errno == ENOENT else { throw PrivateFileError(path: current, code: errno) }
            missing.append(current)
            let parent = (current as NSString).deletingLastPathComponent
            if parent.isEmpty || parent == current { break }
            current = parent
        }
        for folder in missing.reversed() {
            if mkdir(folder, folderMode) != 0 {
                // Another process may have made it meanwhile.
                guard errno == EEXIST else { throw PrivateFileError(path: folder, code: errno) }
                continue
            }
            chmod(folder, folderMode)
        }
        guard stat(directory.isEmpty ? "." : directory, &status) == 0 else { throw PrivateFileError(path: directory, code: errno) }
        guard status.st_mode & S_IFMT == S_IFDIR else { throw PrivateFileError(path: directory, code: ENOTDIR) }
    }

    /// Creates `path` empty with mode 0600 unless something is there already; true when it made it.
    @discardableResult
    package static func createEmpty(_ path: String) -> Bool {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, fileMode)
        guard descriptor >= 0 else { return false }
        fchmod(descriptor, fileMode)
        close(descriptor)
        return true
    }
}

package struct PrivateFileError: Error, Equatable {
    package let path: String
    package let code: Int32
    package var detail: String { String(cString: strerror(code)) }
}
