import Foundation
import XCTest
@testable import EvernoteAPI

/// docs/exit-status.md's table, checked over commands × faults: the same failure gives the same
/// exit code whichever command meets it (`sync`'s verdict, `notebooks`, `map`), the one mapping
/// being `ErrorCategory` (and `ExitStatus.of`).
final class ExitCodeTableTests: XCTestCase {
    /// Evernote faults, each set up on a fresh server: (name, endpoint and query, expected exit).
    /// `METHOD` is replaced by the Thrift method the command calls first that the fault is for.
    static let evernoteFaults: [(name: String, query: String, expected: Int32)] = [
        ("HTTP 500", "fail?status=500&count=100", 69),
        ("HTTP 503", "fail?status=503&count=100", 69),
        ("HTTP 429", "fail?status=429&count=100", 75),
        ("HTTP 404", "fail?status=404&count=100", 76),
        ("an HTML page with HTTP 200", "fail?status=200&count=100", 76),
        ("malformed Thrift", "inject?kind=garbage&method=METHOD&count=100", 76),
        ("an EDAM system error", "inject?kind=system&code=INTERNAL_ERROR&method=METHOD&count=100", 69),
    ]

    func testEvernoteFaultsExitAlikeFromSyncAndNotebooks() async throws {
        for fault in Self.evernoteFaults {
            for (command, method) in [(["notebooks"], "listNotebooks"), (["sync"], "createNote")] {
                let server = try PythonServer(script: "evernote_server.py", arguments: ["--token", SyncCommandTests.token])
                defer { server.stop() }
                let home = try signedInHome(server)
                _ = try await fetchJSON(server.baseURL + "/_test/" + fault.query.replacingOccurrences(of: "METHOD", with: method))
                let result = try home.run(command)
                XCTAssertEqual(result.status, fault.expected,
                               "\(command[0]) with \(fault.name): \(result.standardOutput) \(result.standardError)")
            }
        }
    }

    func testTileServerFaultsExitAsTheTableSays() async throws {
        let server = try TileTestServer()
        defer { server.stop() }
        let faults: [(name: String, query: String, expected: Int32)] = [
            ("HTTP 500", "status=500", 69), ("HTTP 503", "status=503", 69), ("HTTP 429", "status=429", 75),
            ("HTTP 404", "status=404", 76), ("an HTML page", "garbage=html", 76),
        ]
        for fault in faults {
            try await server.reset()
            try await server.configure(fault.query)
            let result = try server.map()
            XCTAssertEqual(result.status, fault.expected, "map with \(fault.name): \(result.standardError)")
        }
    }

    /// Credentials enlog cannot use are 77 for every command that needs them, never 73 (which
    /// says the outbox cannot be written).
    func testUnusableCredentialsExit77() async throws {
        let server = try PythonServer(script: "evernote_server.py", arguments: ["--token", SyncCommandTests.token])
        defer { server.stop() }
        let kinds: [(name: String, make: (String) throws -> Void)] = [
            ("a symbolic link", { path in
                try FileManager.default.moveItem(atPath: path, toPath: path + ".real")
                try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: path + ".real")
            }),
            ("a directory", { path in
                try FileManager.default.removeItem(atPath: path)
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            }),
            ("50 MB", { path in
                let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
                try handle.seekToEnd()
                try handle.write(contentsOf: Data(count: 50 << 20))
                try handle.close()
            }),
        ]
        for kind in kinds {
            let home = try signedInHome(server)
            try kind.make(home.directory.path("config/enlog/credentials.json"))
            for command in [["notebooks"], ["sync"], ["auth", "status"]] {
                let result = try home.run(command)
                XCTAssertEqual(result.status, 77, "\(command.joined(separator: " ")) with credentials that are \(kind.name): \(result.standardError)")
                XCTAssertEqual(result.standardErrorLines.count, 1, result.standardError)
            }
        }
    }

    private func signedInHome(_ server: PythonServer) throws -> EnlogHome {
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        home.extraEnvironment["ENLOG_TOKEN"] = SyncCommandTests.token
        let signIn = try home.run("auth", "token", "--service", "custom", "--host", server.baseURL)
        XCTAssertEqual(signIn.status, 0, signIn.standardError)
        home.extraEnvironment["ENLOG_TOKEN"] = nil
        XCTAssertEqual(try home.run("log", "--at", "1,2", "--no-sync").status, 0)
        return home
    }
}
