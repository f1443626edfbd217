import Foundation
import GRDB
import XCTest

/// Issue 20, defect 5: a `rateLimitDuration` of 2147483647 s held every later sync until 2094,
/// and nothing cleared it. A wait is now an hour at most (Evernote's window), said so, and
/// `queue retry` or signing in again lifts it.
extension SyncCommandTests {
    /// The moment in "Evernote asked to slow down until 2026-…Z" of a sync's error line.
    func waitsUntil(_ result: ProcessResult) throws -> Date {
        let text = result.standardError
        let start = try XCTUnwrap(text.range(of: "slow down until ")?.upperBound, text)
        let stamp = String(text[start...].prefix(20))
        return try XCTUnwrap(ISO8601DateFormatter().date(from: stamp), stamp)
    }

    func testAnEndlessRateLimitWaitsAnHourAtMostAndRetryOrSigningInLiftsIt() async throws {
        let server = try PythonServer(script: "evernote_server.py", arguments: ["--token", Self.token])
        defer { server.stop() }
        let home = try signedInHome(server)
        let limit = "/_test/inject?kind=system&code=RATE_LIMIT_REACHED&duration=2147483647&method=createNote"
        _ = try await fetchJSON(server.baseURL + limit)
        let limited = try home.run("sync")
        XCTAssertEqual(limited.status, 75, limited.standardError)
        XCTAssertLessThanOrEqual(try waitsUntil(limited).timeIntervalSinceNow, 3600 + 5, limited.standardError)
        XCTAssertTrue(limited.standardError.contains("enlog waits 3600 s at most"), limited.standardError)
        let held = try home.run("sync")
        XCTAssertEqual(held.status, 75, "still within the hour: \(held.standardError)")

        let retry = try home.run("queue", "retry", "1")
        XCTAssertEqual(retry.status, 0, retry.standardError)
        XCTAssertTrue(retry.standardOutput.contains("the wait for Evernote's rate limit"), retry.standardOutput)
        let after = try home.run("sync")
        XCTAssertEqual(after.status, 0, "queue retry lifted the wait: \(after.standardError)")
        let titles = try await serverNoteTitles(server)
        XCTAssertEqual(titles.count, 1)

        // Held again; signing in again lifts it too.
        XCTAssertEqual(try home.run("log", "--at", "3,4", "--no-sync").status, 0)
        _ = try await fetchJSON(server.baseURL + limit)
        XCTAssertEqual(try home.run("sync").status, 75)
        XCTAssertEqual(try home.run("sync").status, 75)
        var again = home
        again.extraEnvironment["ENLOG_TOKEN"] = Self.token
        let signIn = try again.run("auth", "token", "--service", "custom", "--host", server.baseURL)
        XCTAssertEqual(signIn.status, 0, signIn.standardError)
        XCTAssertTrue(signIn.standardOutput.contains("the wait for Evernote's rate limit"), signIn.standardOutput)
        let signedIn = try home.run("sync")
        XCTAssertEqual(signedIn.status, 0, "signing in lifted the wait: \(signedIn.standardError)")
    }

    /// A hold an older enlog stored for decades ends an hour after it was set.
    func testAHoldStoredForDecadesEndsAnHourAfterItWasSet() async throws {
        let server = try PythonServer(script: "evernote_server.py", arguments: ["--token", Self.token])
        defer { server.stop() }
        let home = try signedInHome(server)
        let queue = try DatabaseQueue(path: home.database)
        try await queue.write { db in
            try db.execute(sql: """
                INSERT INTO syncState (key, value, date, updatedAt) VALUES ('notBefore', 'old limit', ?, ?)
                ON CONFLICT(key) DO UPDATE SET value = excluded.value, date = excluded.date, updatedAt = excluded.updatedAt
                """, arguments: [Date(timeIntervalSince1970: 3_942_000_000), Date().addingTimeInterval(-7200)])
        }
        let sync = try home.run("sync")
        XCTAssertEqual(sync.status, 0, sync.standardError)
    }
}
