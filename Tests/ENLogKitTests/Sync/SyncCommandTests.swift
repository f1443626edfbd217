import Foundation
import XCTest
@testable import Auth
@testable import Outbox

/// `enlog sync` as a user runs it, against the SDK-based server or inside a network namespace.
final class SyncCommandTests: XCTestCase {
    static let token = "S=s1:U=1:E=sync:C=test:P=1:A=enlog:V=2:H=cmd"

    func signIn(_ home: EnlogHome, to server: PythonServer) throws {
        var home = home
        home.extraEnvironment["ENLOG_TOKEN"] = Self.token
        let result = try home.run("auth", "token", "--service", "custom", "--host", server.baseURL)
        XCTAssertEqual(result.status, 0, result.standardError)
    }

    func serverNoteTitles(_ server: PythonServer) async throws -> [String] {
        let notes = try await fetchJSON(server.baseURL + "/_test/notes") as? [[String: Any]] ?? []
        return notes.compactMap { $0["title"] as? String }
    }

    /// Signing in and listing notebooks go through the same network settings as sync: an HTTPS
    /// service whose certificate only `network.ca_file` vouches for is refused without it and
    /// trusted with it (verification stays on).
    func testSignInAndNotebooksTrustTheConfiguredCAFile() async throws {
        let directory = try TemporaryDirectory()
        let tls = try SelfSignedCertificate(in: directory, for: "IP:127.0.0.1")
        let server = try PythonServer(script: "evernote_server.py",
                                      arguments: ["--token", Self.token, "--tls-cert", tls.certificate, "--tls-key", tls.key])
        defer { server.stop() }
        let service = "https://127.0.0.1:\(server.port)"
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_TOKEN"] = Self.token

        let untrusted = try home.run("auth", "token", "--service", "custom", "--host", service)
        XCTAssertNotEqual(untrusted.status, 0, "a certificate nobody vouches for is refused")
        XCTAssertFalse(FileManager.default.fileExists(atPath: home.directory.path("config/enlog/credentials.json")))

        home.extraEnvironment["ENLOG_NETWORK_CA_FILE"] = tls.certificate
        let signedIn = try home.run("auth", "token", "--service", "custom", "--host", service)
        XCTAssertEqual(signedIn.status, 0, signedIn.standardError)
        let notebooks = try home.run("notebooks")
        XCTAssertEqual(notebooks.status, 0, notebooks.standardError)
        XCTAssertFalse(notebooks.standardOutput.isEmpty)
    }

    func testSyncUploadsTheQueueAndReportsIt() async throws {
        let server = try PythonServer(script: "evernote_server.py", arguments: ["--token", Self.token])
        defer { server.stop() }
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        try signIn(home, to: server)
        for latitude in 1...3 { XCTAssertEqual(try home.run("log", "--at", "\(latitude),2", "--no-sync").status, 0) }
        let sync = try home.run("sync")
        XCTAssertEqual(sync.status, 0, sync.standardError)
        XCTAssertTrue(sync.standardOutput.hasPrefix("uploaded 3, 0 remaining"), sync.standardOutput)
        let titles = try await serverNoteTitles(server)
        XCTAssertEqual(titles.count, 3)
        XCTAssertEqual(try home.run("queue", "list", "--state", "synced").standardOutput.split(separator: "\n").count, 3)
        let again = try home.run("sync", "--json")
        XCTAssertEqual(again.status, 0)
        XCTAssertTrue(again.standardOutput.contains("\"uploaded\" : 0"), again.standardOutput)
        let stillThree = try await serverNoteTitles(server)
        XCTAssertEqual(stillThree.count, 3)
    }

    func testNotesGoOnlyToTheAccountTheyWereQueuedFor() async throws {
        let first = try PythonServer(script: "evernote_server.py", arguments: ["--token", Self.token])
        let second = try PythonServer(script: "evernote_server.py", arguments: ["--token", Self.token])
        defer { first.stop(); second.stop() }
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        try signIn(home, to: first)
        XCTAssertEqual(try home.run("log", "--at", "1,1", "--no-sync").status, 0)
        try signIn(home, to: second)
        XCTAssertEqual(try home.run("log", "--at", "2,2", "--no-sync").status, 0)
        XCTAssertEqual(try home.run("sync").status, 0)
        let onSecond = try await serverNoteTitles(second)
        XCTAssertEqual(onSecond.count, 1)
        XCTAssertTrue(onSecond[0].hasSuffix("2.000000,2.000000"), "\(onSecond)")
        try signIn(home, to: first)
        XCTAssertEqual(try home.run("sync").status, 0)
        let onFirst = try await serverNoteTitles(first)
        XCTAssertEqual(onFirst.count, 1)
        XCTAssertTrue(onFirst[0].hasSuffix("1.000000,1.000000"), "\(onFirst)")
    }

    /// A namespace with no route anywhere: sync answers from the route check, exits 75, and the
    /// queue is untouched.
    func testOfflineSyncReturnsAtOnceAndKeepsTheQueue() throws {
        try requireNamespaces()
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        try CredentialStore(path: home.directory.path("config/enlog/credentials.json")).save(Credentials(
            service: .custom, host: "https://192.0.2.10", authProtocol: .token, userId: 1,
            noteStoreUrl: "https://192.0.2.10/shard/s1/notestore", token: Self.token))
        for latitude in 1...2 { XCTAssertEqual(try home.run("log", "--at", "\(latitude),2", "--no-sync").status, 0) }
        let namespace = enlogtName("sync")
        try ip("netns", "add", namespace)
        defer { _ = try? runCommand("/usr/sbin/ip", ["netns", "del", namespace]) }
        let environment = home.environment.map { "\($0.key)=\($0.value)" }
        let result = try runCommand("/usr/sbin/ip", ["netns", "exec", namespace, "/usr/bin/env", "-i"] + environment
                                        + [Subprocess.enlog.path, "sync"])
        print("offline sync in a namespace: exit \(result.status) after \(Int(result.milliseconds)) ms: \(result.output)")
        XCTAssertEqual(result.status, 75, result.output)
        XCTAssertTrue(result.output.contains("offline"), result.output)
        // `--json` has the shape it has online: the summary, saying why nothing went.
        let json = try runCommand("/usr/sbin/ip", ["netns", "exec", namespace, "/usr/bin/env", "-i"] + environment
                                      + [Subprocess.enlog.path, "sync", "--json"])
        XCTAssertEqual(json.status, 75, json.output)
        let start = try XCTUnwrap(json.output.firstIndex(of: "{"))
        let end = try XCTUnwrap(json.output.lastIndex(of: "}"))
        let summary = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.output[start...end].utf8)) as? [String: Any])
        XCTAssertEqual(summary["stoppedBecause"] as? String, "offline")
        XCTAssertEqual(summary["verdict"] as? String, "tryLater")
        XCTAssertEqual(summary["remaining"] as? Int, 2)
        XCTAssertEqual(summary["uploaded"] as? Int, 0)
        XCTAssertEqual(try home.run("queue", "list", "--state", "pending").standardOutput.split(separator: "\n").count, 2)
    }
}

extension SyncCommandTests {
    func testLogUploadsOpportunisticallyUnlessToldNotTo() async throws {
        let server = try PythonServer(script: "evernote_server.py", arguments: ["--token", Self.token])
        defer { server.stop() }
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        try signIn(home, to: server)
        let quiet = try home.run("log", "--at", "1,1", "--no-sync")
        XCTAssertEqual(quiet.status, 0, quiet.standardError)
        let none = try await serverNoteTitles(server)
        XCTAssertEqual(none.count, 0)
        let logged = try home.run("log", "--at", "2,2")
        XCTAssertEqual(logged.status, 0, logged.standardError)
        XCTAssertTrue(logged.standardOutput.hasPrefix("logged note 2:"), logged.standardOutput)
        XCTAssertTrue(logged.standardError.contains("uploaded 2 queued notes;"), logged.standardError)
        let both = try await serverNoteTitles(server)
        XCTAssertEqual(both.count, 2)
    }

    func testLogStillSucceedsWhenTheOpportunisticSyncCannotReachEvernote() throws {
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        // Signed in to a server that is gone: the note is logged, the upload waits.
        try CredentialStore(path: home.directory.path("config/enlog/credentials.json")).save(Credentials(
            service: .custom, host: "http://127.0.0.1:\(try freeLoopbackPort())", authProtocol: .token, userId: 1,
            noteStoreUrl: "http://127.0.0.1:\(try freeLoopbackPort())/shard/s1/notestore", token: Self.token))
        let logged = try home.run("log", "--at", "3,3")
        XCTAssertEqual(logged.status, 0, logged.standardError)
        let notes = try home.notes()
        XCTAssertEqual(notes.count, 1)
        XCTAssertTrue(["pending", "failed"].contains(notes[0]["state"] as? String), "\(notes)")
    }
}

extension SyncCommandTests {
    /// On a pipe: no progress line (nothing on stderr); `-v` one line per note; and the address the
    /// sync reached is remembered for the NoteStore host.
    func testNoProgressOnAPipeAndOneLinePerNoteWhenVerbose() async throws {
        let server = try PythonServer(script: "evernote_server.py", arguments: ["--token", Self.token])
        defer { server.stop() }
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        try signIn(home, to: server)
        for latitude in 1...2 { XCTAssertEqual(try home.run("log", "--at", "\(latitude),2", "--no-sync").status, 0) }
        let plain = try home.run("sync")
        XCTAssertEqual(plain.status, 0, plain.standardError)
        XCTAssertEqual(plain.standardError, "", "progress output on a pipe")
        XCTAssertTrue(plain.standardOutput.hasPrefix("uploaded 2, 0 remaining"), plain.standardOutput)

        for latitude in 3...4 { XCTAssertEqual(try home.run("log", "--at", "\(latitude),2", "--no-sync").status, 0) }
        let verbose = try home.run("sync", "-v")
        XCTAssertEqual(verbose.status, 0, verbose.standardError)
        let lines = verbose.standardErrorLines
        XCTAssertEqual(lines.count, 2, verbose.standardError)
        XCTAssertFalse(verbose.standardError.contains("\r"), verbose.standardError)
        for (line, id) in zip(lines, [3, 4]) {
            let fields = line.split(separator: " ")
            XCTAssertEqual(fields.count, 4, line)
            XCTAssertEqual(fields.prefix(3).joined(separator: " "), "note \(id) uploaded", line)
        }
        let guids = try await fetchJSON(server.baseURL + "/_test/notes") as? [[String: Any]] ?? []
        XCTAssertEqual(Set(lines.compactMap { $0.split(separator: " ").last.map(String.init) }).subtracting(guids.compactMap { $0["guid"] as? String }), [])

        for latitude in 5...5 { XCTAssertEqual(try home.run("log", "--at", "\(latitude),2", "--no-sync").status, 0) }
        let quiet = try home.run("sync", "-q", "-v")
        XCTAssertEqual(quiet.status, 0)
        XCTAssertEqual(quiet.standardError + quiet.standardOutput, "")

        let outbox = try OutboxStore(path: home.database)
        let remembered = try await outbox.noteStoreAddress(host: "127.0.0.1")
        XCTAssertEqual(remembered, "127.0.0.1:\(server.port)")
    }
}
