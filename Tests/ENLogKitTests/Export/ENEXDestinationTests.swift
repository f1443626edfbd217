import Foundation
import GRDB
import XCTest
@testable import Network
@testable import Sync

/// `export --enex FILE --new` as the destination of a user without API access: each note goes
/// out once, the queue empties, and a later sign-in and sync (against the SDK's test server)
/// never sends a note that went out in a file; a note put back with `queue retry` after its
/// file was imported is found in Evernote by its `enlog.id`, not created again.
final class ENEXDestinationTests: XCTestCase {
    var home: EnlogHome!

    override func setUpWithError() throws {
        home = try EnlogHome()
        home.extraEnvironment = ["ENLOG_GEOCODING_ENABLED": "false"]
    }

    func log(_ latitude: Int) throws {
        let result = try home.run("log", "--at", "\(latitude),2", "-m", "note at \(latitude)", "--no-sync")
        XCTAssertEqual(result.status, 0, result.standardError)
    }

    func states() throws -> [Int: String] { try home.notesById().compactMapValues { $0["state"] as? String } }

    func serverNotes(_ server: PythonServer) async throws -> [[String: Any]] {
        try await fetchJSON(server.baseURL + "/_test/notes") as? [[String: Any]] ?? []
    }

    func testNewExportsEachNoteOnceAndALaterSignInNeverUploadsItAgain() async throws {
        for latitude in 1...3 { try log(latitude) }
        let first = try home.export("first.enex", "--new")
        XCTAssertEqual(first.result.status, 0, first.result.standardError)
        XCTAssertTrue(first.result.standardOutput.hasPrefix("exported 3 notes ("), first.result.standardOutput)
        XCTAssertEqual(try states(), [1: "exported", 2: "exported", 3: "exported"])
        let listed = try home.run("queue", "list", "--state", "exported")
        XCTAssertEqual(listed.standardOutput.split(separator: "\n").count, 3)
        XCTAssertTrue(listed.standardOutput.contains("\t(in \(first.path))"), listed.standardOutput)
        let json = try XCTUnwrap(home.notesById()[1])
        XCTAssertEqual(json["exportedTo"] as? String, first.path)
        XCTAssertNotNil(json["exportedAt"] as? String)

        // Nothing new: no file, exit 0. The same name again: refused, the file kept.
        let again = try home.export("second.enex", "--new")
        XCTAssertEqual(again.result.status, 0, again.result.standardError)
        XCTAssertEqual(again.result.standardOutput, "nothing new to export: every note is synced or exported already\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: again.path))
        try log(4)
        let before = try Data(contentsOf: URL(fileURLWithPath: first.path))
        let sameName = try home.export("first.enex", "--new")
        XCTAssertEqual(sameName.result.status, 73, sameName.result.standardError)
        XCTAssertEqual(sameName.result.standardErrorLines.count, 1)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: first.path)), before)
        XCTAssertEqual(try states()[4], "pending", "a refused export marks nothing")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: home.directory.url.path).filter { $0.contains(".enlog-") }, [],
                       "no temporary file is left behind")
        let third = try home.export("third.enex", "--new")
        XCTAssertEqual(third.result.status, 0, third.result.standardError)
        XCTAssertTrue(third.result.standardOutput.hasPrefix("exported 1 note ("), third.result.standardOutput)
        XCTAssertEqual(try ENEXReaders.titlesAndContents(third.path).count, 1)
        try log(5)

        // The user imports the first file into Evernote (as an Evernote client's File > Import
        // does), then signs in and syncs.
        let server = try PythonServer(script: "evernote_server.py", arguments: ["--token", SyncCommandTests.token])
        defer { server.stop() }
        let token = SyncCommandTests.token.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let imported = try await HTTPClient().send(HTTPRequest(
            method: "POST", url: server.baseURL + "/_test/import-enex?token=\(token)&notebook=first",
            headers: [("Content-Type", "application/xml")], body: [UInt8](try Data(contentsOf: URL(fileURLWithPath: first.path)))))
        XCTAssertEqual(imported.status, 200, String(decoding: imported.body, as: UTF8.self))
        let importedNotes = try await serverNotes(server)
        XCTAssertEqual(importedNotes.count, 3)

        var signingIn = home!
        signingIn.extraEnvironment["ENLOG_TOKEN"] = SyncCommandTests.token
        XCTAssertEqual(try signingIn.run("auth", "token", "--service", "custom", "--host", server.baseURL).status, 0)
        // Note 1's file was imported; the user puts it back anyway (say, unsure it was).
        let retried = try home.run("queue", "retry", "1")
        XCTAssertEqual(retried.status, 0, retried.standardError)
        XCTAssertTrue(retried.standardOutput.contains("in case its ENEX file was imported"), retried.standardOutput)
        // Note 4's file (third.enex) was never imported: put back, it is uploaded.
        XCTAssertEqual(try home.run("queue", "retry", "4").status, 0)

        let sync = try home.run("sync")
        XCTAssertEqual(sync.status, 0, sync.standardError)
        XCTAssertTrue(sync.standardOutput.hasPrefix("uploaded 2, 1 already on Evernote, 0 remaining"), sync.standardOutput)
        let notes = try await serverNotes(server)
        let titles = notes.compactMap { $0["title"] as? String }
        XCTAssertEqual(notes.count, 5, "3 imported from the file, note 4 put back, note 5 logged after: \(titles)")
        let uids = notes.compactMap { (($0["attributes"] as? [String: Any])?["applicationData"] as? [String: Any])?["fullMap"] as? [String: String] }
            .compactMap { $0["enlog.id"] }
        XCTAssertEqual(Set(uids).count, 5, "every note once: \(uids)")
        XCTAssertEqual(try states(), [1: "synced", 2: "exported", 3: "exported", 4: "synced", 5: "synced"])
        let again2 = try home.run("sync")
        XCTAssertEqual(again2.status, 0)
        let finally = try await serverNotes(server)
        XCTAssertEqual(finally.count, 5)
    }

    /// While a sync runs (it holds the sync lock), an export that would mark notes waits for
    /// nothing and marks nothing: exit 75, no file.
    func testNewRefusesWhileASyncRuns() throws {
        try log(1)
        let lock = try SyncLock(databasePath: home.database)
        defer { lock.release() }
        let (path, result) = try home.export("during.enex", "--new")
        XCTAssertEqual(result.status, 75, result.standardError)
        XCTAssertEqual(result.standardErrorLines.count, 1, result.standardError)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
        XCTAssertEqual(try states(), [1: "pending"])
        // A copy takes no lock and changes nothing.
        let copy = try home.export("copy.enex")
        XCTAssertEqual(copy.result.status, 0, copy.result.standardError)
        XCTAssertEqual(try states(), [1: "pending"])
    }

    /// On a terminal a progress line is drawn and erased (and not elsewhere: the other tests
    /// see an empty stderr); `-` is refused there, as pages of base64 are no use on a screen.
    func testAProgressLineOnATerminal() throws {
        let script = try XCTUnwrap(Subprocess.which("script"), "script (util-linux) runs a command on a terminal")
        for latitude in 1...3 { try log(latitude) }
        var environment = home.environment
        environment["TERM"] = "xterm"
        let file = home.directory.path("tty.enex")
        let onTerminal = try Subprocess.run(script, ["-qec", "\(Subprocess.enlog.path) export --enex \(file)", "/dev/null"],
                                            environment: environment)
        XCTAssertEqual(onTerminal.status, 0, onTerminal.standardOutput)
        XCTAssertTrue(onTerminal.standardOutput.contains("\r\u{1B}[Kexport: 3/3 notes"), onTerminal.standardOutput.debugDescription)
        XCTAssertTrue(onTerminal.standardOutput.contains("exported 3 notes"), onTerminal.standardOutput)
        let dash = try Subprocess.run(script, ["-qec", "\(Subprocess.enlog.path) export --enex -", "/dev/null"], environment: environment)
        XCTAssertEqual(dash.status, 2, dash.standardOutput)
        XCTAssertTrue(dash.standardOutput.contains("refusing to write ENEX to a terminal"), dash.standardOutput)
    }

    /// The file is complete but its notes cannot be marked (the outbox refuses the write, as a
    /// full disk would; here a trigger refuses it): the file is taken back, so that no file
    /// holds notes a later --new would write again.
    func testAFileWhoseNotesCannotBeMarkedIsTakenBack() throws {
        try log(1)
        let database = try DatabaseQueue(path: home.database)
        try database.write { db in
            try db.execute(sql: """
                CREATE TRIGGER refuseExported BEFORE UPDATE OF state ON note WHEN NEW.state = 'exported'
                BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END
                """)
        }
        try database.close()
        let (path, result) = try home.export("refused.enex", "--new")
        XCTAssertNotEqual(result.status, 0, result.standardError)
        XCTAssertEqual(result.standardErrorLines.count, 1, result.standardError)
        XCTAssertTrue(result.standardError.contains("full"), result.standardError)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
        XCTAssertEqual(try states(), [1: "pending"])
    }

    /// The file is written and its notes marked, but the summary cannot be printed: one line says
    /// what did happen, so that nobody exports (or imports) anything twice.
    func testAnExportWhoseSummaryCannotBePrintedSaysItWentOut() throws {
        try log(1)
        let path = home.directory.path("quiet.enex")
        let result = try RedirectedRun.run(Subprocess.enlog, ["export", "--enex", path, "--new"], environment: home.environment,
                                           standardOutput: .file("/dev/full"))
        XCTAssertEqual(result.status, 74, result.standardError)
        XCTAssertEqual(result.errorLines, ["enlog: error: 1 note went to \(path) and is exported; could not print: No space left on device "
                                           + "(import that file; `enlog queue list --state exported` shows the notes)"])
        XCTAssertTrue(FileManager.default.fileExists(atPath: path))
        XCTAssertEqual(try states(), [1: "exported"])
    }

    /// A full disk: nothing marked, no file, exit 74 with one line.
    func testAWriteThatFailsMarksNothing() throws {
        try XCTSkipUnless(FileManager.default.isWritableFile(atPath: "/dev/full"), "no /dev/full")
        try log(1)
        let result = try home.run("export", "--enex", "/dev/full", "--new")
        XCTAssertEqual(result.status, 74, result.standardError)
        XCTAssertEqual(result.standardErrorLines.count, 1, result.standardError)
        XCTAssertTrue(result.standardError.contains("No space left on device"), result.standardError)
        XCTAssertEqual(try states(), [1: "pending"])
    }
}
