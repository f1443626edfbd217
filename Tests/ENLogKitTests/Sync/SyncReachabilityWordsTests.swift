import Foundation
import XCTest

/// Issue 34 item 5: after the server went away, `sync` said "stopped: networkDown" (the name of a
/// case in the code) while `reachability` right after said "reachable … 0.6 ms". Both now say
/// the same thing of the same state, in words: Evernote's server could not be reached.
extension SyncCommandTests {
    func testSyncAndReachabilityAgreeWhenTheServerWentAway() async throws {
        let server = try PythonServer(script: "evernote_server.py", arguments: ["--token", Self.token])
        let home = try signedInHome(server)
        let first = try home.run("sync")
        XCTAssertEqual(first.status, 0, first.standardOutput + first.standardError)
        XCTAssertEqual(try home.run("log", "--at", "5,5", "--no-sync").status, 0)
        server.stop()

        let sync = try home.run("sync")
        XCTAssertEqual(sync.status, 69, sync.standardOutput + sync.standardError)
        let said = sync.standardOutput + sync.standardError
        XCTAssertTrue(sync.standardOutput.contains("; stopped: Evernote's server could not be reached"), sync.standardOutput)
        XCTAssertTrue(sync.standardError.hasPrefix("enlog: error: Evernote's server could not be reached: "), sync.standardError)
        XCTAssertEqual(ErrorWordsTests.codeWords(in: said), [], said)

        let reachability = try home.run("reachability")
        XCTAssertEqual(reachability.status, 69, reachability.standardOutput + reachability.standardError)
        XCTAssertTrue(reachability.standardOutput.contains("Evernote's server could not be reached: nothing listens at 127.0.0.1:\(server.port)"),
                      reachability.standardOutput)
        XCTAssertFalse(reachability.standardOutput.contains("reachable:"), reachability.standardOutput)
    }
}
