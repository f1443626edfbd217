import Foundation
import Testing

/// `enlog validate` as a user runs it: the real binary, its streams and exit status.
@Suite("enlog validate")
struct ValidateCommandTests {
    let valid = Fixtures.enml("valid")
    let invalid = Fixtures.enml("invalid")
    /// `enlog validate`'s own peak (`MeasuredRun`) for a 5 MB note: 47 to 50 MB, of which some
    /// 28 are the program's and its libraries'.
    static let fiveMegabyteNotePeakKilobytesBound = 96 << 10

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
        let result = try RedirectedRun.run(Subprocess.enlog, ["validate", note.path],
                                           environment: ProcessInfo.processInfo.environment)
        #expect(!result.hung && result.status == 0, "\(result.standardError.prefix(300))")
        #expect(result.peakKilobytes < Self.fiveMegabyteNotePeakKilobytesBound, "peak RSS \(result.peakKilobytes) KiB for a 5 MB note")
    }

    /// Zero bytes are a document without a root element, not "out of memory creating the XML parser".
    @Test(arguments: ["empty", "/dev/null"])
    func anEmptyInputIsReportedAsEmpty(_ name: String) throws {
        let directory = try TemporaryDirectory()
        let path = name.hasPrefix("/") ? name : try directory.file("\(name).enml", contents: "").path
        let result = try Subprocess.run(Subprocess.enlog, ["validate", path])
        #expect(result.status == 1, "\(result.standardError)")
        #expect(result.standardError == "\(path):1:0: error: the document is empty; a note is an XML document whose root element is <en-note> [xml-syntax]\n")
        let stdin = try Subprocess.enlog("validate", "-", standardInput: Data())
        #expect(stdin.status == 1)
        #expect(stdin.standardError.hasPrefix("<stdin>:1:0: error: the document is empty"))
    }

    /// Creates a file whose name is raw bytes (FileManager cannot spell a name that is not UTF-8).
    func createFile(in directory: TemporaryDirectory, named name: [UInt8], contents: String) throws {
        let path = Array(directory.url.path.utf8) + [UInt8(ascii: "/")] + name + [0]
        let descriptor = path.withUnsafeBufferPointer { open(UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), O_WRONLY | O_CREAT | O_EXCL, 0o644) }
        try #require(descriptor >= 0, "cannot create the file: \(String(cString: strerror(errno)))")
        defer { close(descriptor) }
        _ = contents.utf8CString.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count - 1) }
    }

    /// A Latin-1 name from an old archive is still a file: found, read, reported by an escaped name.
    @Test func aFileWhoseNameIsNotUTF8IsValidated() throws {
        let directory = try TemporaryDirectory()
        try createFile(in: directory, named: Array("caf".utf8) + [0xE9] + Array(".enml".utf8), contents: "<en-note/>")
        try createFile(in: directory, named: Array("ok-".utf8) + [0xFF, 0xFE] + Array(".enml".utf8),
                       contents: String(decoding: try Data(contentsOf: valid[0]), as: UTF8.self))
        let result = try Subprocess.run(Subprocess.enlog, ["validate", directory.url.path])
        #expect(result.status == 1, "\(result.standardError)")
        #expect(result.standardErrorLines == ["\(directory.url.path)/caf\\xE9.enml:1:0: error: missing DOCTYPE; ENML must declare <!DOCTYPE en-note SYSTEM \"http://xml.evernote.com/pub/enml2.dtd\"> [missing-doctype]"])
        let json = try Subprocess.run(Subprocess.enlog, ["validate", "--json", "--quiet", directory.url.path])
        let files = (try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as! [String: Any])["files"] as! [[String: Any]]
        #expect(files.map { $0["path"] as! String } == ["\(directory.url.path)/caf\\xE9.enml", "\(directory.url.path)/ok-\\xFF\\xFE.enml"])
        #expect(files.map { $0["valid"] as! Bool } == [false, true])
    }

    /// An ESC in a name must not reach the terminal, nor a newline forge a second line of output.
    @Test func controlCharactersInNamesArePrintedEscaped() throws {
        let directory = try TemporaryDirectory()
        let name = "red\u{1B}[31m\nforged:1:1: error: x\u{9B}.enml"
        let note = try directory.file(name, contents: "<en-note/>")
        for arguments in [[note.path], [directory.url.path], [note.path + ".missing"]] {
            let result = try Subprocess.run(Subprocess.enlog, ["validate"] + arguments)
            #expect(result.standardErrorLines.count == 1, "\(result.standardError)")
            #expect(!result.standardError.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x9B }, "\(result.standardError)")
            #expect(result.standardError.contains("red\\x1B[31m\\x0Aforged:1:1: error: x\\x9B.enml"), "\(result.standardError)")
        }
    }

    /// Standard input can be read once; naming it twice is refused rather than reported twice.
    @Test func standardInputCanBeNamedOnlyOnce() throws {
        let result = try Subprocess.enlog("validate", "-", "-", standardInput: try Data(contentsOf: valid[0]))
        #expect(result.status == 2)
        // The first line; how many lines a usage error takes is argument-parser's (issue 9, item 10).
        #expect(result.standardErrorLines.first?.contains("'-' (standard input) can be named only once") == true, "\(result.standardError)")
    }
}
