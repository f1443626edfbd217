import Foundation
import XCTest
@testable import Compose

/// No note leaves with "Address pending", the built binary end to end: geocoding off, a note is
/// final with its coordinates alone; a note that waited for an address it cannot get goes into
/// an ENEX file and to Evernote (the test server, `Tests/support/evernote_server.py`) with its
/// coordinates alone. No test reaches a real geocoder: the one "on" points at a closed loopback port.
final class AddressPendingTests: XCTestCase {
    /// A home whose geocoder is on but unreachable (a loopback port nobody listens on): notes wait.
    func waitingHome() throws -> EnlogHome {
        var home = try EnlogHome()
        home.extraEnvironment = ["ENLOG_GEOCODING_URL": "http://127.0.0.1:\(try freeLoopbackPort())", "ENLOG_GEOCODING_TIMEOUT": "2"]
        return home
    }

    func note(_ home: EnlogHome, _ id: Int) throws -> [String: Any] {
        let result = try home.run("queue", "show", "\(id)", "--json")
        XCTAssertEqual(result.status, 0, result.standardError)
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
    }

    func testGeocodingOffANoteIsFinalWithItsCoordinates() throws {
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        let logged = try home.run("log", "--at", "48.8584,2.2945", "-m", "Up the tower")
        XCTAssertEqual(logged.status, 0, logged.standardError)
        let stored = try note(home, 1)
        XCTAssertEqual(stored["addressPending"] as? Bool, false)
        XCTAssertEqual(stored["title"] as? String, "48.858400,2.294500 — Up the tower")
        let content = try XCTUnwrap(stored["content"] as? String)
        XCTAssertFalse(content.contains("Address pending"), content)
        XCTAssertTrue(content.contains(">48.858400,2.294500</a>"), content)

        let file = home.directory.path("diary.enex")
        let export = try home.run("export", "--enex", file)
        XCTAssertEqual(export.status, 0, export.standardError)
        let enex = try String(contentsOfFile: file, encoding: .utf8)
        XCTAssertFalse(enex.contains("Address pending"), enex)
        XCTAssertTrue(enex.contains("<title>48.858400,2.294500 — Up the tower</title>"), enex)
    }

    /// A note still waiting for its address when it is exported: in a copy it goes with its
    /// coordinates alone and the outbox keeps it waiting; exported for good (`--new`), with the
    /// geocoder off by then, the outbox keeps what the file holds.
    func testAnExportedNoteNeverSaysAddressPending() throws {
        var home = try waitingHome()
        XCTAssertEqual(try home.run("log", "--at", "35.681236,139.767125", "-m", "Station").status, 0)
        let waiting = try note(home, 1)
        XCTAssertEqual(waiting["addressPending"] as? Bool, true)
        XCTAssertTrue((waiting["content"] as? String ?? "").contains("Address pending"), "\(waiting)")

        home.extraEnvironment = ["ENLOG_GEOCODING_ENABLED": "false"]
        let copy = home.directory.path("copy.enex")
        let copied = try home.run("export", "--enex", copy)
        XCTAssertEqual(copied.status, 0, copied.standardError)
        let copyText = try String(contentsOfFile: copy, encoding: .utf8)
        XCTAssertFalse(copyText.contains("Address pending"), copyText)
        XCTAssertTrue(copyText.contains(">35.681236,139.767125</a>"), copyText)
        XCTAssertEqual(try note(home, 1)["addressPending"] as? Bool, true, "a copy changes nothing in the outbox")
        try ENEXReaders.validateENML(try ENEXReaders.titlesAndContents(copy).map(\.content), in: home.directory)

        let final = home.directory.path("final.enex")
        let exported = try home.run("export", "--enex", final, "--new")
        XCTAssertEqual(exported.status, 0, exported.standardError)
        let finalText = try String(contentsOfFile: final, encoding: .utf8)
        XCTAssertFalse(finalText.contains("Address pending"), finalText)
        let stored = try note(home, 1)
        XCTAssertEqual(stored["state"] as? String, "exported")
        XCTAssertFalse((stored["content"] as? String ?? "").contains("Address pending"), "\(stored)")
    }

    /// Synced with geocoding off, a note that waited for its address reaches Evernote with its
    /// coordinates alone, its title and its words.
    func testASyncedNoteNeverSaysAddressPending() async throws {
        let server = try PythonServer(script: "evernote_server.py", arguments: ["--token", SyncCommandTests.token])
        defer { server.stop() }
        var home = try waitingHome()
        XCTAssertEqual(try home.run("log", "--at", "35.681236,139.767125", "-m", "Station", "--no-sync").status, 0)
        XCTAssertEqual(try home.run("log", "--at", "35.7,139.8", "--no-geocode", "--no-sync").status, 0)
        XCTAssertEqual(try note(home, 2)["addressPending"] as? Bool, true)
        home.extraEnvironment = ["ENLOG_GEOCODING_ENABLED": "false"]
        var signingIn = home
        signingIn.extraEnvironment["ENLOG_TOKEN"] = SyncCommandTests.token
        let signedIn = try signingIn.run("auth", "token", "--service", "custom", "--host", server.baseURL)
        XCTAssertEqual(signedIn.status, 0, signedIn.standardError)
        let sync = try home.run("sync")
        XCTAssertEqual(sync.status, 0, sync.standardError)
        let notes = try await fetchJSON(server.baseURL + "/_test/notes") as? [[String: Any]] ?? []
        XCTAssertEqual(notes.count, 2)
        for note in notes {
            let content = try XCTUnwrap(note["content"] as? String, "\(note)")
            XCTAssertFalse(content.contains("Address pending"), content)
        }
        XCTAssertEqual(Set(notes.compactMap { $0["title"] as? String }), ["35.681236,139.767125 — Station", "35.700000,139.800000"])
    }
}
