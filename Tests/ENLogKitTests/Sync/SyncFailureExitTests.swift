import Foundation
import XCTest
@testable import Outbox
@testable import Sync

/// Issue 9 items 2 and 11, issue 8 item 5: a sync that leaves notes because something failed
/// says so and does not exit 0; a hanging NoteStore is bounded and leaves notes the user can act on.
extension SyncCommandTests {
    func signedInHome(_ server: PythonServer, notes: Int = 1) throws -> EnlogHome {
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        try signIn(home, to: server)
        for latitude in 0..<notes { XCTAssertEqual(try home.run("log", "--at", "\(latitude + 1),2", "--no-sync").status, 0) }
        return home
    }

    func testHTTP500PagesExit69AndQuietStillPrintsTheError() async throws {
        let server = try PythonServer(script: "evernote_server.py", arguments: ["--token", Self.token])
        defer { server.stop() }
        let home = try signedInHome(server)
        _ = try await fetchJSON(server.baseURL + "/_test/fail?status=500&count=100")
        let sync = try home.run("sync")
        XCTAssertEqual(sync.status, 69, sync.standardOutput + sync.standardError)
        XCTAssertTrue(sync.standardOutput.hasPrefix("uploaded 0, 1 failed"), sync.standardOutput)
        XCTAssertEqual(sync.standardErrorLines.count, 1, sync.standardError)
        XCTAssertTrue(sync.standardError.hasPrefix("enlog: error: Evernote could not be reached or did not answer"), sync.standardError)
        XCTAssertTrue(sync.standardError.contains("HTTP 500"), sync.standardError)

        // A new note is due at once (the failed one waits for its backoff).
        XCTAssertEqual(try home.run("log", "--at", "5,5", "--no-sync").status, 0)
        let quiet = try home.run("sync", "-q")
        XCTAssertEqual(quiet.status, 69)
        XCTAssertEqual(quiet.standardOutput, "")
        XCTAssertTrue(quiet.standardError.hasPrefix("enlog: error: "), "-q keeps errors: \(quiet.standardError)")

        XCTAssertEqual(try home.run("log", "--at", "6,6", "--no-sync").status, 0)
        let json = try home.run("sync", "--json")
        XCTAssertEqual(json.status, 69)
        let summary = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        XCTAssertEqual(summary["verdict"] as? String, "serviceUnavailable")
        XCTAssertEqual(summary["remaining"] as? Int, 3)

        // Nothing due, notes waiting out their backoff: not a success either.
        let waiting = try home.run("sync")
        XCTAssertEqual(waiting.status, 75, waiting.standardOutput + waiting.standardError)
        XCTAssertTrue(waiting.standardOutput.contains("3 wait to retry after a failure (next at "), waiting.standardOutput)
    }

    func testAnHTMLPageInsteadOfThriftExits76() async throws {
        let server = try PythonServer(script: "evernote_server.py", arguments: ["--token", Self.token])
        defer { server.stop() }
        let home = try signedInHome(server, notes: 2)
        // HTTP 200 with an HTML page: a captive portal or a wrong URL.
        _ = try await fetchJSON(server.baseURL + "/_test/fail?status=200&count=100")
        let sync = try home.run("sync")
        XCTAssertEqual(sync.status, 76, sync.standardOutput + sync.standardError)
        XCTAssertTrue(sync.standardError.contains("not Evernote's protocol"), sync.standardError)
        XCTAssertTrue(sync.standardOutput.contains("2 remaining"), sync.standardOutput)
        _ = try await fetchJSON(server.baseURL + "/_test/clear")
        // Once the service is back, the notes go (after their backoff) and the exit is 0 again.
        let later = try home.run("sync")
        XCTAssertNotEqual(later.status, 76)
    }

    /// Issue 8: `uploaded 0, 1 remaining`, exit 0, and not a word about the address lookup.
    func testNotesWaitingForTheirAddressSaySoAndUntilWhen() async throws {
        let server = try PythonServer(script: "evernote_server.py", arguments: ["--token", Self.token])
        defer { server.stop() }
        var home = try EnlogHome()
        try signIn(home, to: server)
        // Geocoding on, pointed at a loopback port nobody listens on.
        home.extraEnvironment["ENLOG_GEOCODING_URL"] = "http://127.0.0.1:\(try freeLoopbackPort())"
        XCTAssertEqual(try home.run("log", "--at", "1,2", "--no-geocode", "--no-sync").status, 0)
        let sync = try home.run("sync")
        XCTAssertEqual(sync.status, 75, sync.standardOutput + sync.standardError)
        XCTAssertTrue(sync.standardOutput.contains("1 note waits for its address (lookup failed: "), sync.standardOutput)
        XCTAssertTrue(sync.standardOutput.contains("sent without it after 2 more failed lookups"), sync.standardOutput)
        XCTAssertTrue(sync.standardError.hasPrefix("enlog: error: 1 note waits for its address"), sync.standardError)
    }

    /// A NoteStore that does not answer: `log` prints its note at once, gives up on the upload
    /// within its bound and says so; the note stuck `sending` can be put back in line, and the
    /// next sync finds the copy the slow service stored instead of creating a second one.
    func testAHangingNoteStoreIsBoundedAndTheStuckNoteCanBeRetried() async throws {
        let server = try PythonServer(script: "evernote_server.py", arguments: ["--token", Self.token])
        defer { server.stop() }
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        try signIn(home, to: server)
        // Longer than log's 10 s upload budget; the service stores the note when it wakes.
        _ = try await fetchJSON(server.baseURL + "/_test/inject?kind=delay&ms=13000&method=createNote")
        let logged = try home.run("log", "--at", "1,1")
        XCTAssertEqual(logged.status, 0, logged.standardError)
        XCTAssertTrue(logged.standardOutput.hasPrefix("logged note 1:"), logged.standardOutput)
        XCTAssertEqual(logged.standardErrorLines, ["enlog: upload timed out after 10 s; note 1 stays queued, run `enlog sync`"])
        XCTAssertEqual(try home.notes().first?["state"] as? String, "sending")

        let retried = try home.run("queue", "retry", "1")
        XCTAssertEqual(retried.status, 0, retried.standardError)
        XCTAssertTrue(retried.standardOutput.contains("first checks whether Evernote already has it"), retried.standardOutput)
        let sync = try home.run("sync")
        XCTAssertEqual(sync.status, 0, sync.standardOutput + sync.standardError)
        XCTAssertTrue(sync.standardOutput.hasPrefix("uploaded 0, 1 already on Evernote, 0 remaining"), sync.standardOutput)
        let titles = try await serverNoteTitles(server)
        XCTAssertEqual(titles.count, 1, "exactly once")
    }

    /// `sync` waits for a hanging NoteStore no longer than `network.request_timeout` (it waited
    /// 60 s per request), exits 69 and leaves the note flagged for the lookup, not `sending`.
    func testSyncBoundsEachRequestByTheConfiguredTimeout() async throws {
        let server = try PythonServer(script: "evernote_server.py", arguments: ["--token", Self.token])
        defer { server.stop() }
        var home = try signedInHome(server)
        _ = try await fetchJSON(server.baseURL + "/_test/inject?kind=delay&ms=4000&method=createNote")
        home.extraEnvironment["ENLOG_NETWORK_REQUEST_TIMEOUT"] = "1"
        let sync = try home.run("sync")
        XCTAssertEqual(sync.status, 69, sync.standardOutput + sync.standardError)
        XCTAssertTrue(sync.standardError.contains("timed out"), sync.standardError)
        XCTAssertEqual(try home.notes().first?["state"] as? String, "failed")
        let outbox = try OutboxStore(path: home.database)
        let lookups = try await outbox.notesNeedingLookup()
        XCTAssertEqual(lookups, [1], "its outcome is unknown: looked up before it is sent again")
    }

    /// `queue retry`/`drop` of a `sending` note: refused while a sync holds the lock, allowed
    /// once none does (drop then warns that Evernote may have it).
    func testStuckSendingNotesAreReleasedOnlyWhenNoSyncRuns() async throws {
        let home = try EnlogHome()
        for latitude in 1...2 { XCTAssertEqual(try home.run("log", "--at", "\(latitude),2", "--no-geocode", "--no-sync").status, 0) }
        let outbox = try OutboxStore(path: home.database)
        for id: Int64 in [1, 2] { try await outbox.markSending(id) }
        do {
            let running = try SyncLock(databasePath: home.database)   // a sync in progress
            defer { running.release() }
            let refused = try home.run("queue", "retry", "1")
            XCTAssertEqual(refused.status, 75, refused.standardError)
            XCTAssertTrue(refused.standardError.contains("another sync is already running"), refused.standardError)
            XCTAssertEqual(try home.run("queue", "drop", "2", "--yes").status, 75)
        }
        let retried = try home.run("queue", "retry", "1")
        XCTAssertEqual(retried.status, 0, retried.standardError)
        let note = try await outbox.note(id: 1)
        XCTAssertEqual(note.state, .pending)
        XCTAssertGreaterThan(note.attempts, 0, "the engine looks a pending note with attempts up before creating it")
        let lookups = try await outbox.notesNeedingLookup()
        XCTAssertEqual(lookups, [1])
        let dropped = try home.run("queue", "drop", "2", "--yes")
        XCTAssertEqual(dropped.status, 0, dropped.standardError)
        XCTAssertTrue(dropped.standardError.contains("it may already be in Evernote"), dropped.standardError)
        XCTAssertEqual(try home.notes().count, 1)
    }
}
