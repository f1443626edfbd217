import Foundation
import XCTest
@testable import EvernoteAPI
@testable import Compose

/// `--attach`: files typed by libmagic from their content, sized from their headers (checked
/// against Pillow's sizes), refused with one line and their own exit code before anything is stored.
final class AttachmentTests: XCTestCase {
    var home: EnlogHome!

    override func setUp() async throws {
        home = try EnlogHome()
        home.extraEnvironment = ["ENLOG_GEOCODING_ENABLED": "false"]
    }

    func testTheTypeComesFromTheContentNotTheName() throws {
        let directory = home.directory
        let cases: [(file: String, format: String, mime: String, size: [Int]?)] = [
            ("photo.jpg", "JPEG", "image/jpeg", [120, 90]),
            ("shot.png", "PNG", "image/png", [120, 90]),
            ("anim.gif", "GIF", "image/gif", [120, 90]),
            ("ticket.pdf", "PDF", "application/pdf", nil),
            ("receipt.pdf", "PNG", "image/png", [120, 90]),    // a PNG under a PDF's name
            ("notes.txt", "JPEG", "image/jpeg", [120, 90]),    // a JPEG under a text file's name
        ]
        for item in cases {
            let path = try TestFiles.image(directory.path(item.file), format: item.format, width: 120, height: 90)
            let resource = try Attachments.load(path)
            XCTAssertEqual(resource.mime, item.mime, item.file)
            XCTAssertEqual(resource.width.map { [$0, resource.height ?? 0] }, item.size, item.file)
            XCTAssertEqual(resource.fileName, item.file)
            XCTAssertEqual(resource.hash, MapImage.md5Hex(try Data(contentsOf: URL(fileURLWithPath: path))))
            XCTAssertTrue(resource.userFile)
            XCTAssertEqual(resource.isAttachment, !item.mime.hasPrefix("image/"), item.file)
        }
        let text = try directory.file("words.jpg", contents: "plain words, not a picture\n")
        XCTAssertEqual(try Attachments.load(text.path).mime, "text/plain")
        XCTAssertNil(try Attachments.load(text.path).width)
        for (mime, fits) in [("application/vnd.ms-excel", true), ("text/x-c++", true), ("image/svg+xml", true),
                             ("application/x-empty data", false), ("text", false), ("a/b/c", false), ("x/é", false)] {
            XCTAssertEqual(FileType.isEDAMMime(mime), fits, mime)
        }
    }

    func testAttachedFilesAreResourcesOfTheNoteAndQueueShowListsThem() throws {
        let png = try TestFiles.image(home.directory.path("shot.png"), format: "PNG", width: 30, height: 20)
        let pdf = try TestFiles.image(home.directory.path("ticket.pdf"), format: "PDF")
        let result = try home.run("log", "--at", "48.8584,2.2945", "--attach", png, "--attach", pdf, "--attach", png, "--no-sync")
        XCTAssertEqual(result.status, 0, result.standardError)
        let note = try home.show(1)
        let resources = note["resources"] as? [[String: Any]] ?? []
        XCTAssertEqual(resources.compactMap { $0["fileName"] as? String }, ["shot.png", "ticket.pdf"], "the same file once")
        XCTAssertEqual(resources.compactMap { $0["mime"] as? String }, ["image/png", "application/pdf"])
        let content = note["content"] as? String ?? ""
        for resource in resources {
            XCTAssertTrue(content.contains("<en-media type=\"\(resource["mime"]!)\" hash=\"\(resource["hash"]!)\"/>"), content)
        }
        let plain = try home.run("queue", "show", "1")
        XCTAssertEqual(plain.standardErrorLines.filter { $0.hasPrefix("attachment ") }.count, 2, plain.standardError)
        XCTAssertTrue(plain.standardError.contains("\tapplication/pdf\t-\t"), plain.standardError)
        XCTAssertTrue(plain.standardError.contains("\timage/png\t30×20\t"), plain.standardError)
        // The stored ENML is valid, and a resource comes back byte for byte.
        let validate = try Subprocess.run(Subprocess.enlog, ["validate", "-"], standardInput: Data(plain.standardOutput.utf8),
                                          environment: home.environment)
        XCTAssertEqual(validate.status, 0, validate.standardOutput + validate.standardError)
        let hash = try XCTUnwrap(resources.first?["hash"] as? String)
        let out = home.directory.path("out.png")
        let copy = try Subprocess.run(URL(fileURLWithPath: "/bin/sh"), ["-c", "\"$0\" queue show 1 --resource \(hash) > \"$1\"",
                                                                          Subprocess.enlog.path, out], environment: home.environment)
        XCTAssertEqual(copy.status, 0, copy.standardError)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: out)), try Data(contentsOf: URL(fileURLWithPath: png)))
    }

    func testBadFilesAreOneLineErrorsWithTheirCodesAndNothingIsStored() throws {
        let directory = home.directory
        let good = try TestFiles.image(directory.path("good.png"), format: "PNG")
        let empty = try directory.file("empty.pdf", contents: "").path
        let folder = directory.path("folder")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let unreadable = try directory.file("secret.pdf", contents: "%PDF-1.4").path
        chmod(unreadable, 0o000)
        // Sparse: its size is over the limit without writing 25 MB; it is refused before it is read.
        let huge = directory.path("huge.mov")
        XCTAssertTrue(FileManager.default.createFile(atPath: huge, contents: nil))
        XCTAssertEqual(truncate(huge, off_t(ResourceLimits.resourceSizeMax + 1)), 0)

        var cases: [(path: String, status: ExitStatusCode, says: String)] = [
            (directory.path("missing.pdf"), .noInput, "cannot attach \(directory.path("missing.pdf")): no such file"),
            (folder, .noInput, "cannot attach \(folder): it is a directory"),
            (empty, .usage, "cannot attach \(empty): the file is empty"),
            (huge, .usage, "cannot attach \(huge): it is 26214401 bytes, Evernote takes at most 26214400 per file (EDAM_RESOURCE_SIZE_MAX_FREE)"),
        ]
        // A FIFO could block or never end: not a file to attach, for root too.
        let fifo = directory.path("pipe.pdf")
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        cases.append((fifo, .noInput, "cannot attach \(fifo): not a regular file"))
        if getuid() != 0 {   // root reads anything
            cases.append((unreadable, .noInput, "cannot attach \(unreadable): Permission denied"))
        }
        for item in cases {
            let result = try home.run("log", "--at", "1,2", "--attach", good, "--attach", item.path, "-m", "kept?", "--no-sync")
            XCTAssertEqual(result.status, item.status.rawValue, "\(item.path): \(result.standardError)")
            XCTAssertEqual(result.standardErrorLines.count, 1, result.standardError)
            XCTAssertTrue(result.standardError.hasPrefix("enlog: error: \(item.says)"), result.standardError)
            XCTAssertFalse(FileManager.default.fileExists(atPath: home.database), "nothing stored for \(item.path)")
        }
    }

    /// Files each under the per-file limit that together are over the note's.
    func testANoteOverTheSizeLimitIsRefusedNamingTheLimit() throws {
        let halves = try (1...2).map { index -> String in
            let path = home.directory.path("part\(index).bin")
            var bytes = Data(count: ResourceLimits.noteSizeMax / 2 + 10)
            bytes[0] = UInt8(index)
            try bytes.write(to: URL(fileURLWithPath: path))
            return path
        }
        let result = try home.run("log", "--at", "1,2", "--attach", halves[0], "--attach", halves[1], "--no-sync")
        XCTAssertEqual(result.status, ExitStatusCode.usage.rawValue, result.standardError)
        XCTAssertTrue(result.standardError.contains("Evernote takes at most 26214400 (EDAM_NOTE_SIZE_MAX_FREE)"), result.standardError)
        XCTAssertFalse(FileManager.default.fileExists(atPath: home.database))
    }
}
