import Foundation
import Testing

/// `enlog validate` as a user runs it: the real binary, its streams and exit status.
@Suite("enlog validate")
struct ValidateCommandTests {
    let valid = Fixtures.enml("valid")
    let invalid = Fixtures.enml("invalid")

    @Test func allValidFilesExitZeroSilently() throws {
        let result = try Subprocess.run(Subprocess.enlog, ["validate"] + valid.map(\.path))
        #expect(result.status == 0)
        #expect(result.standardError.isEmpty)
        #expect(result.standardOutput.isEmpty)
    }

    @Test func errorsArePrintedLikeACompiler() throws {
        let fixture = invalid.first { $0.lastPathComponent == "attr-id.enml" }!
        let result = try Subprocess.run(Subprocess.enlog, ["validate", fixture.path])
        #expect(result.status == 1)
        let line = try #require(result.standardErrorLines.first)
        #expect(line.hasPrefix("\(fixture.path):4:"))
        let parts = line.split(separator: ":", maxSplits: 4).map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(Int(parts[2]) ?? 0 > 0, "column: \(line)")
        #expect(parts[3] == "error")
        #expect(parts[4].contains("No declaration for attribute id of element p"))
    }

    @Test func aMissingFileDoesNotStopTheOthers() throws {
        let bad = invalid.first { $0.lastPathComponent == "url-javascript-href.enml" }!
        let result = try Subprocess.run(Subprocess.enlog, ["validate", "/nonexistent/note.enml", bad.path, valid[0].path])
        #expect(result.status == 2)
        #expect(result.standardErrorLines.first == "/nonexistent/note.enml: error: No such file or directory")
        #expect(result.standardError.contains("\(bad.path):4:"))
    }

    @Test func unreadableFilesExitTwo() throws {
        let directory = try TemporaryDirectory()
        let note = try directory.file("sub/dir.enml/inner.enml", contents: "")
        // A directory whose name ends in .enml, named directly, is walked; an empty file is invalid XML.
        let result = try Subprocess.run(Subprocess.enlog, ["validate", note.deletingLastPathComponent().path])
        #expect(result.status == 1)
        #expect(result.standardError.contains("inner.enml:"))
        let empty = try Subprocess.run(Subprocess.enlog, ["validate", directory.url.appendingPathComponent("nothing-here").path])
        #expect(empty.status == 2)
    }

    @Test func usageErrorsExitTwo() throws {
        #expect(try Subprocess.enlog("validate").status == 2)
        #expect(try Subprocess.enlog("validate", "--no-such-flag", valid[0].path).status == 2)
    }

    @Test func standardInputIsReadForADash() throws {
        let good = try Data(contentsOf: valid[0])
        let ok = try Subprocess.enlog("validate", "-", standardInput: good)
        #expect(ok.status == 0)
        let bad = try Subprocess.enlog("validate", "-", standardInput: Data("<en-note/>".utf8))
        #expect(bad.status == 1)
        #expect(bad.standardError.hasPrefix("<stdin>:1:0: error: missing DOCTYPE"))
    }

    @Test func directoriesAreSearchedForNotes() throws {
        let directory = Fixtures.root.appendingPathComponent("enml")
        let result = try Subprocess.run(Subprocess.enlog, ["validate", "--json", directory.path])
        #expect(result.status == 1)
        let document = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as! [String: Any]
        let files = document["files"] as! [[String: Any]]
        #expect(files.count == valid.count + invalid.count)
        #expect(files.filter { $0["valid"] as! Bool }.count == valid.count)
    }

    @Test func jsonListsEveryFileWithItsErrors() throws {
        let bad = invalid.first { $0.lastPathComponent == "many-errors.enml" }!
        let result = try Subprocess.run(Subprocess.enlog, ["validate", "--json", "--quiet", valid[0].path, bad.path, "/nonexistent.enml"])
        #expect(result.status == 2)
        #expect(result.standardError.isEmpty, "--quiet")
        let document = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as! [String: Any]
        #expect(document["valid"] as? Bool == false)
        let files = document["files"] as! [[String: Any]]
        #expect(files.map { $0["path"] as! String } == [valid[0].path, bad.path, "/nonexistent.enml"])
        #expect(files[0]["valid"] as? Bool == true)
        let errors = files[1]["errors"] as! [[String: Any]]
        #expect(errors.map { $0["code"] as! String } == ["dtd-validity", "unsafe-url", "media-hash", "prohibited-attribute"])
        #expect(errors.map { $0["line"] as! Int } == [4, 5, 6, 7])
        #expect(errors.allSatisfy { ($0["column"] as! Int) > 0 && !($0["message"] as! String).isEmpty })
        #expect(files[2]["ioError"] as? String == "No such file or directory")
    }

    @Test func manyFilesGiveTheSameVerdictsAsOneByOne() throws {
        // 20 copies of the corpus in one run: parallel workers must not mix up documents or errors.
        let directory = try TemporaryDirectory()
        var expected: [String: Int32] = [:]
        for copy in 0..<20 {
            for fixture in valid + invalid {
                let target = directory.url.appendingPathComponent("\(copy)/\(fixture.lastPathComponent)")
                try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
                try FileManager.default.copyItem(at: fixture, to: target)
                expected[target.path] = valid.contains(fixture) ? 0 : 1
            }
        }
        let result = try Subprocess.run(Subprocess.enlog, ["validate", "--json", "--quiet", directory.url.path])
        let files = (try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as! [String: Any])["files"] as! [[String: Any]]
        #expect(files.count == expected.count)
        for file in files {
            #expect((file["valid"] as! Bool) == (expected[file["path"] as! String] == 0), "\(file["path"]!)")
        }
    }

    @Test func aFiveMegabyteNoteIsValidatedWithoutMemoryBlowUp() throws {
        let directory = try TemporaryDirectory()
        let paragraph = "<p>Caf&eacute; 日本語 <b>bold</b> <a href=\"https://example.com/?q=1&amp;r=2\">link</a> filler text to make it longer</p>\n"
        let body = String(repeating: paragraph, count: 5_100_000 / paragraph.utf8.count)
        let note = try directory.file("big.enml", contents: """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE en-note SYSTEM "http://xml.evernote.com/pub/enml2.dtd">
            <en-note>\(body)</en-note>
            """)
        let result = try Subprocess.run(Subprocess.enlog, ["validate", note.path])
        #expect(result.status == 0, "\(result.standardError.prefix(300))")
        var after = rusage()
        getrusage(RUSAGE_CHILDREN.rawValue, &after)
        // ru_maxrss (KiB) of the largest child so far: every enlog run in this process stays below it.
        #expect(after.ru_maxrss < 400 * 1024, "peak RSS \(after.ru_maxrss / 1024) MiB for a 5 MB note")
    }
}
