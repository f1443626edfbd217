import Foundation
import Testing
@testable import Support

/// FolderWalk, the one walk `import DIR` and `validate DIR` take: each folder's entries in byte
/// order, then its subfolders; links given as links and never walked into; a folder that cannot
/// be listed is an event of its own, and the walk goes on.
@Suite("FolderWalk")
struct FolderWalkTests {
    func events(_ root: String, enter: ([UInt8]) -> Bool = { _ in true }) -> [String] {
        var seen: [String] = []
        FolderWalk.walk(Array(root.utf8), enter: enter) { event in
            switch event {
            case .entry(let path, _, let status):
                let kind = status.st_mode & S_IFMT == S_IFDIR ? "dir" : status.st_mode & S_IFMT == S_IFLNK ? "link" : "file"
                seen.append("\(kind) \(String(decoding: path, as: UTF8.self).dropFirst(root.count))")
            case .unreadableEntry(let path, _, let reason):
                seen.append("unreadable \(String(decoding: path, as: UTF8.self).dropFirst(root.count)): \(reason)")
            case .unlistableFolder(let path, let reason):
                seen.append("unlistable \(String(decoding: path, as: UTF8.self).dropFirst(root.count)): \(reason)")
            }
        }
        return seen
    }

    @Test func entriesInNameOrderThenSubfoldersAndLinksNotFollowed() throws {
        let directory = try TemporaryDirectory()
        for name in ["b.txt", "a/z.txt", "a/y/x.txt", "c/w.txt", ".hidden/v.txt", "a.txt"] {
            _ = try directory.file(name, contents: "")
        }
        try FileManager.default.createSymbolicLink(atPath: directory.path("loop"), withDestinationPath: directory.url.path)
        let root = directory.url.path
        #expect(events(root) == [
            "dir /.hidden", "dir /a", "file /a.txt", "file /b.txt", "dir /c", "link /loop",
            "file /.hidden/v.txt",
            "dir /a/y", "file /a/z.txt", "file /a/y/x.txt",
            "file /c/w.txt",
        ])
        #expect(events(root + "/", enter: { $0.first != UInt8(ascii: ".") }).prefix(6)
                == ["dir .hidden", "dir a", "file a.txt", "file b.txt", "dir c", "link loop"])
        #expect(!events(root, enter: { $0.first != UInt8(ascii: ".") }).contains("file /.hidden/v.txt"))
    }

    @Test func aFolderThatCannotBeListedIsAnEventAndTheWalkGoesOn() throws {
        let directory = try TemporaryDirectory()
        _ = try directory.file("closed/secret.txt", contents: "")
        _ = try directory.file("open/note.txt", contents: "")
        #expect(chmod(directory.path("closed"), 0) == 0)
        defer { _ = chmod(directory.path("closed"), 0o755) }
        let seen = events(directory.url.path)
        // root reads every folder: the test then proves nothing, but the walk must still go on.
        if getuid() != 0 {
            #expect(seen.contains("unlistable /closed: \(String(cString: strerror(EACCES)))"), "\(seen)")
        }
        #expect(seen.last == "file /open/note.txt", "\(seen)")
        #expect(events(directory.path("missing")) == ["unlistable : \(String(cString: strerror(ENOENT)))"])
    }
}
