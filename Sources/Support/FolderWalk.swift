import Foundation

/// A walk of a folder and of every folder below it, over bytes (opendir/readdir/lstat), not
/// FileManager, whose listing repairs a name that is not UTF-8 into one that opens nothing: the
/// paths it gives open again. `enlog import DIR` and `enlog validate DIR` walk with it.
///
/// Each folder's entries come in the byte order of their names, then its subfolders are walked
/// in that order, so that every run sees the same order. Symbolic links are given as links and
/// never followed into (a link to a folder could lead back up and never end).
package enum FolderWalk {
    package enum Event {
        /// An entry of a folder (`.` and `..` aside), with lstat's answer; a folder among them is
        /// walked after its siblings when `enter` takes its name.
        case entry(path: [UInt8], name: [UInt8], status: stat)
        /// An entry lstat could not look at, with errno's words.
        case unreadableEntry(path: [UInt8], name: [UInt8], reason: String)
        /// A folder that could not be listed (the one given among them), with errno's words.
        case unlistableFolder(path: [UInt8], reason: String)
    }

    package static func walk(_ folder: [UInt8], enter: ([UInt8]) -> Bool = { _ in true }, _ visit: (Event) -> Void) {
        var pending = [folder]
        while let current = pending.popLast() {
            guard let names = names(in: current) else {
                visit(.unlistableFolder(path: current, reason: String(cString: strerror(errno))))
                continue
            }
            var folders: [[UInt8]] = []
            for name in names.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
                let path = current.last == UInt8(ascii: "/") ? current + name : current + [UInt8(ascii: "/")] + name
                var status = stat()
                guard withCPath(path, { lstat($0, &status) }) == 0 else {
                    visit(.unreadableEntry(path: path, name: name, reason: String(cString: strerror(errno))))
                    continue
                }
                visit(.entry(path: path, name: name, status: status))
                if status.st_mode & S_IFMT == S_IFDIR, enter(name) { folders.append(path) }
            }
            pending.append(contentsOf: folders.reversed())
        }
    }

    /// Calls `body` with `path` as a C string (which holds no NUL: the walk's paths are made of
    /// readdir's names and a folder `names(in:)` refused for one).
    package static func withCPath(_ path: [UInt8], _ body: (UnsafePointer<CChar>) -> Int32) -> Int32 {
        (path + [0]).withUnsafeBufferPointer { body(UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self)) }
    }

    /// The names in `folder` but `.` and `..`, as bytes; nil (errno set) when it cannot be opened.
    private static func names(in folder: [UInt8]) -> [[UInt8]]? {
        guard !folder.contains(0) else {
            errno = EINVAL
            return nil
        }
        guard let stream = (folder + [0]).withUnsafeBufferPointer({ opendir(UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self)) })
        else { return nil }
        defer { closedir(stream) }
        var names: [[UInt8]] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in Array(raw.prefix { $0 != 0 }) }
            if name == [UInt8(ascii: ".")] || name == [UInt8(ascii: "."), UInt8(ascii: ".")] { continue }
            names.append(name)
        }
        return names
    }
}
