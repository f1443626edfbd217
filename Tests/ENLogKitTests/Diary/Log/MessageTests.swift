import Foundation
import XCTest
@testable import Compose

/// The words of a note: `-m`, `--message-file` (a file or standard input) and `-e` (the editor,
/// run on a real terminal: util-linux `script` gives enlog a pseudo-terminal).
final class MessageTests: XCTestCase {
    var home: EnlogHome!

    override func setUp() async throws {
        home = try EnlogHome()
        home.extraEnvironment = ["ENLOG_GEOCODING_ENABLED": "false"]
    }

    func content(_ id: Int = 1) throws -> String { try home.show(id)["content"] as? String ?? "" }

    /// The stored ENML passes the validator (and thereby the DTD) as `enlog validate` runs it.
    func assertValid(_ enml: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let result = try Subprocess.run(Subprocess.enlog, ["validate", "-"], standardInput: Data(enml.utf8), environment: home.environment)
        XCTAssertEqual(result.status, 0, result.standardOutput + result.standardError, file: file, line: line)
    }

    func testEachMessageIsAParagraphMadeSafeForENML() throws {
        let result = try home.run("log", "--at", "1,2", "--no-sync",
                                  "-m", "Lunch at <the> market & co\u{7}\u{FFFE}",
                                  "-m", "Second line one\r\nline two  \n\n\nthird paragraph",
                                  "-m", "   ")
        XCTAssertEqual(result.status, 0, result.standardError)
        let enml = try content()
        XCTAssertTrue(enml.contains("<div>Lunch at &lt;the&gt; market &amp; co</div>"), enml)
        XCTAssertTrue(enml.contains("<div>Second line one<br/>line two</div>\n<div>third paragraph</div>"), enml)
        XCTAssertFalse(enml.contains("\u{7}"))
        try assertValid(enml)
        // Under the title: before the place and the rest the default template writes. Geocoding
        // is off: no address will come, so the coordinates stand alone, never "Address pending".
        let words = try XCTUnwrap(enml.range(of: "Lunch at"))
        let address = try XCTUnwrap(enml.range(of: ">1.000000,2.000000</a>"), enml)
        XCTAssertLessThan(words.lowerBound, address.lowerBound)
        XCTAssertFalse(enml.contains("Address pending"), enml)
        XCTAssertEqual(try home.show(1)["title"] as? String, "1.000000,2.000000 — Lunch at <the> market & co Second line one line two third paragraph")

        XCTAssertEqual(try home.run("log", "--at", "1,2", "--no-sync").status, 0)
        XCTAssertFalse(try content(2).contains("<div><br/>Lunch"), "no words, no paragraph")
    }

    /// A `<` or `&` that a combining mark follows is one Character with it; the template still
    /// escapes it (a fuzzer found such a message refused as invalid ENML, so nothing was logged).
    func testMarkupJoinedByCombiningMarksIsEscapedToo() throws {
        let result = try home.run("log", "--at", "1,2", "--no-sync", "-m", "a <\u{301}b> &\u{308} \u{600}<x")
        XCTAssertEqual(result.status, 0, result.standardError)
        let enml = try content()
        XCTAssertTrue(enml.contains("<div>a &lt;\u{301}b&gt; &amp;\u{308} \u{600}&lt;x</div>"), enml)
        try assertValid(enml)
    }

    func testTheMessageComesFromAFileOrStandardInput() throws {
        let file = try home.directory.file("words.txt", contents: "From a file\n\nwith two paragraphs\n")
        XCTAssertEqual(try home.run("log", "--at", "1,2", "--no-sync", "-m", "First", "--message-file", file.path).status, 0)
        XCTAssertTrue(try content(1).contains("<div>First</div>\n<div>From a file</div>\n<div>with two paragraphs</div>"))

        let piped = try home.run(["log", "--at", "1,2", "--no-sync", "--message-file", "-"], standardInput: Data("Piped in é\n".utf8))
        XCTAssertEqual(piped.status, 0, piped.standardError)
        XCTAssertTrue(try content(2).contains("<div>Piped in é</div>"))

        let latin1 = home.directory.path("latin1.txt")
        try Data([0x63, 0x61, 0x66, 0xE9]).write(to: URL(fileURLWithPath: latin1))
        let notText = try home.run("log", "--at", "1,2", "--no-sync", "--message-file", latin1)
        XCTAssertEqual(notText.status, ExitStatusCode.noInput.rawValue, notText.standardError)
        XCTAssertTrue(notText.standardError.contains("latin1.txt: not UTF-8 text (byte 0xE9 at offset 3"), notText.standardError)

        let missing = try home.run("log", "--at", "1,2", "--no-sync", "--message-file", home.directory.path("none.txt"))
        XCTAssertEqual(missing.status, ExitStatusCode.noInput.rawValue, missing.standardError)
        XCTAssertEqual(missing.standardErrorLines.count, 1, missing.standardError)

        // Standard input closed (not just empty): one line, 66, nothing stored.
        let closed = try Subprocess.run(URL(fileURLWithPath: "/bin/sh"),
                                        ["-c", "exec \"$0\" log --at 1,2 --no-sync --message-file - <&-", Subprocess.enlog.path],
                                        environment: home.environment)
        XCTAssertEqual(closed.status, ExitStatusCode.noInput.rawValue, closed.standardError)
        XCTAssertTrue(closed.standardError.contains("cannot read the message from standard input: it is closed"), closed.standardError)
        XCTAssertEqual(try home.counts().notes, 2)

        let twice = try home.run("log", "--nmea", "-", "--message-file", "-", "--no-sync")
        XCTAssertEqual(twice.status, ExitStatusCode.usage.rawValue, twice.standardError)
    }

    /// `enlog ARGS` on a pseudo-terminal (`script`), with this editor command.
    func runOnTerminal(_ arguments: [String], editor: String?) throws -> ProcessResult {
        guard let script = Subprocess.which("script") else { throw XCTSkip("util-linux script is not installed") }
        var environment = home.environment
        environment["SHELL"] = "/bin/sh"
        environment["EDITOR"] = editor
        environment["TMPDIR"] = home.directory.path("")
        let command = ([Subprocess.enlog.path] + arguments).map { "'\($0)'" }.joined(separator: " ")
        return try Subprocess.run(script, ["-qec", command, "/dev/null"], environment: environment)
    }

    func testTheEditorWritesTheWordsAndAFailedEditorStoresNothing() throws {
        let editor = try home.directory.file("editor.sh", contents: """
            #!/bin/sh
            # Keeps what -m gave (the file's first line) and adds a paragraph.
            printf '\\nWritten in the editor\\n' >> "$1"
            exit "${EDITOR_STATUS:-0}"
            """)
        chmod(editor.path, 0o755)
        let written = try runOnTerminal(["log", "--at", "1,2", "--no-sync", "-m", "Given first", "-e"], editor: editor.path)
        XCTAssertEqual(written.status, 0, written.standardOutput)
        XCTAssertTrue(try content(1).contains("<div>Given first</div>\n<div>Written in the editor</div>"))

        let failing = try runOnTerminal(["log", "--at", "1,2", "--no-sync", "-e"], editor: "EDITOR_STATUS=3 " + editor.path)
        XCTAssertEqual(failing.status, ExitStatusCode.usage.rawValue, failing.standardOutput)
        XCTAssertTrue(failing.standardOutput.contains("exited with status 3; nothing was stored (what you typed is in "), failing.standardOutput)
        XCTAssertEqual(try home.counts().notes, 1)
        let kept = try FileManager.default.contentsOfDirectory(atPath: home.directory.path("")).filter { $0.hasPrefix("enlog-message-") }
        XCTAssertEqual(kept.count, 1, "the typed words are kept, the successful run's file is gone")

        let emptied = try runOnTerminal(["log", "--at", "1,2", "--no-sync", "-e"], editor: "truncate -s 0")
        XCTAssertEqual(emptied.status, ExitStatusCode.usage.rawValue, emptied.standardOutput)
        XCTAssertTrue(emptied.standardOutput.contains("the message is empty; nothing was stored"), emptied.standardOutput)
        XCTAssertEqual(try home.counts().notes, 1)
    }

    func testTheEditorNeedsATerminalAndAnEditor() throws {
        var withEditor = home!
        withEditor.extraEnvironment["EDITOR"] = "/bin/true"
        let noTerminal = try withEditor.run(["log", "--at", "1,2", "--no-sync", "-e"], standardInput: Data())
        XCTAssertEqual(noTerminal.status, ExitStatusCode.usage.rawValue, noTerminal.standardError)
        XCTAssertEqual(noTerminal.standardErrorLines.count, 1, noTerminal.standardError)
        XCTAssertTrue(noTerminal.standardError.contains("-e needs a terminal"), noTerminal.standardError)

        let noEditor = try home.run(["log", "--at", "1,2", "--no-sync", "-e"], standardInput: Data())
        XCTAssertEqual(noEditor.status, ExitStatusCode.usage.rawValue, noEditor.standardError)
        XCTAssertTrue(noEditor.standardError.contains("-e needs an editor: set VISUAL or EDITOR"), noEditor.standardError)
        XCTAssertFalse(FileManager.default.fileExists(atPath: home.database))
    }
}
