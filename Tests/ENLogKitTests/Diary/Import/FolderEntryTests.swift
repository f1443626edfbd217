import Foundation
import GRDB
import XCTest

/// What `enlog import DIR` and `enlog validate DIR` do with entries they cannot read: each is one
/// line and fails the command with its code, never a smaller import or "all valid" in silence.
/// A folder with nothing to import says so, whether empty or holding only other files.
final class FolderEntryTests: XCTestCase {
    static let enml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE en-note SYSTEM \"http://xml.evernote.com/pub/enml2.dtd\">\n"

    /// Root reads through file modes: as root, enlog runs as `nobody` (setpriv), from a copy that
    /// user can reach, in a home it can write.
    private func asUser(_ home: EnlogHome, _ arguments: [String]) throws -> ProcessResult {
        guard getuid() == 0 else { return try home.run(arguments) }
        guard let setpriv = Subprocess.which("setpriv") else { throw XCTSkip("as root, needs setpriv to drop privileges") }
        let binary = home.directory.url.appendingPathComponent("enlog")
        if !FileManager.default.fileExists(atPath: binary.path) {
            try FileManager.default.copyItem(at: Subprocess.enlog, to: binary)
            chmod(binary.path, 0o755)
        }
        chmod(home.directory.url.path, 0o777)
        return try Subprocess.run(setpriv, ["--reuid=nobody", "--regid=nogroup", "--clear-groups", binary.path] + arguments,
                                  environment: home.environment)
    }

    func testAnUnreadableSubfolderFailsImportAndValidateByName() throws {
        let home = try EnlogHome()
        let folder = home.directory.path("in")
        try FileManager.default.createDirectory(atPath: folder + "/locked", withIntermediateDirectories: true)
        try HistoryImportTests.gpx(points: 5).write(toFile: folder + "/good.gpx", atomically: true, encoding: .utf8)
        try HistoryImportTests.gpx(points: 7).write(toFile: folder + "/locked/hidden.gpx", atomically: true, encoding: .utf8)
        try (Self.enml + "<en-note>fine</en-note>").write(toFile: folder + "/good.enml", atomically: true, encoding: .utf8)
        try (Self.enml + "<en-note>unseen</en-note>").write(toFile: folder + "/locked/unseen.enml", atomically: true, encoding: .utf8)
        chmod(folder, 0o755)
        chmod(folder + "/locked", 0)
        defer { chmod(folder + "/locked", 0o755) }

        let imported = try asUser(home, ["import", folder])
        XCTAssertEqual(imported.status, ExitStatusCode.noInput.rawValue, imported.standardError)
        XCTAssertEqual(imported.standardErrorLines, ["enlog: error: cannot read \(folder)/locked: Permission denied"])
        XCTAssertTrue(imported.standardOutput.contains("read 5 points from GPX: 5 added"), imported.standardOutput)

        let validated = try asUser(home, ["validate", folder])
        XCTAssertEqual(validated.status, ExitStatusCode.usage.rawValue, validated.standardError)
        XCTAssertEqual(validated.standardErrorLines, ["\(folder)/locked: error: cannot list the directory: Permission denied"])
    }

    /// Entries no user can read, root included: a dangling link and a FIFO; a link to a file is read.
    func testADanglingLinkOrAFIFOInAFolderIsReportedAndALinkToAFileIsRead() throws {
        let home = try EnlogHome()
        let folder = home.directory.path("in")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let real = home.directory.path("real.gpx")
        try HistoryImportTests.gpx(points: 4).write(toFile: real, atomically: true, encoding: .utf8)
        XCTAssertEqual(symlink(real, folder + "/linked.gpx"), 0)
        XCTAssertEqual(symlink(home.directory.path("gone.gpx"), folder + "/gone.gpx"), 0)
        XCTAssertEqual(mkfifo(folder + "/pipe.gpx", 0o644), 0)
        let result = try home.run("import", folder)
        XCTAssertEqual(result.status, ExitStatusCode.noInput.rawValue, result.standardError)
        XCTAssertEqual(result.standardErrorLines, [
            "enlog: error: cannot read \(folder)/gone.gpx: a symbolic link to nothing readable (No such file or directory)",
            "enlog: error: cannot read \(folder)/pipe.gpx: not a regular file (a FIFO); skipped",
        ])
        XCTAssertTrue(result.standardOutput.contains("read 4 points from GPX: 4 added"), result.standardOutput)

        try "<en-note>x</en-note>".write(toFile: real + ".enml", atomically: true, encoding: .utf8)
        XCTAssertEqual(symlink(home.directory.path("gone.enml"), folder + "/gone.enml"), 0)
        let validated = try home.run("validate", folder)
        XCTAssertEqual(validated.status, ExitStatusCode.usage.rawValue, validated.standardError)
    }

    /// An empty folder and one holding only files of no known format: both say there is nothing
    /// to import, exit 66.
    func testAFolderWithNothingToImportSaysSoWhetherEmptyOrNot() throws {
        let home = try EnlogHome()
        let empty = home.directory.path("empty"), other = home.directory.path("other")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: other + "/sub", withIntermediateDirectories: true)
        try "a shopping list\n".write(toFile: other + "/list.txt", atomically: true, encoding: .utf8)
        try "{\"not\": \"a history\"}\n".write(toFile: other + "/sub/data.json", atomically: true, encoding: .utf8)

        let none = try home.run("import", empty)
        XCTAssertEqual(none.status, ExitStatusCode.noInput.rawValue, none.standardError)
        XCTAssertEqual(none.standardErrorLines, ["enlog: error: the folder \(empty) holds no file: nothing to import"])

        let others = try home.run("import", other)
        XCTAssertEqual(others.status, ExitStatusCode.noInput.rawValue, others.standardError)
        XCTAssertEqual(others.standardErrorLines.count, 1, others.standardError)
        XCTAssertTrue(others.standardError.hasPrefix("enlog: error: the folder \(other) holds no location history: its 2 files are all of no format"),
                      others.standardError)
        XCTAssertTrue(others.standardError.contains("(convert them with gpsbabel to GPX (-o gpx) first)"), others.standardError)

        // Named with a good file: the folder's line is one of several, and the good file is read.
        let good = try home.directory.file("good.gpx", contents: HistoryImportTests.gpx(points: 3))
        let mixed = try home.run("import", other, good.path)
        XCTAssertEqual(mixed.status, ExitStatusCode.noInput.rawValue, mixed.standardError)
        XCTAssertEqual(mixed.standardErrorLines.count, 1, mixed.standardError)
        XCTAssertTrue(mixed.standardOutput.contains("read 3 points"), mixed.standardOutput)
    }
}
