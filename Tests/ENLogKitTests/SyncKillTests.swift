import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif
@testable import ENLogKit

/// SplitMix64: a fixed-seed schedule that is the same on every machine.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E3779B97F4A7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58476D1CE4E5B9
        z = (z ^ (z >> 27)) &* 0x94D049BB133111EB
        return z ^ (z >> 31)
    }
}

final class SyncKillTests: XCTestCase {
    /// `enlog` signed in to the fixture's server, writing to the fixture's outbox.
    static func signedIn(_ f: SyncFixture) throws -> [String: String] {
        let environment = ["PATH": "/usr/bin:/bin", "HOME": f.directory.url.path, "TZ": "UTC",
                           "XDG_CONFIG_HOME": f.directory.path("config"), "ENLOG_DB": f.outbox.path,
                           "ENLOG_GEOCODING_ENABLED": "false"]
        let login = try Subprocess.run(Subprocess.enlog, ["auth", "token", "--service", "custom", "--host", f.server.baseURL],
                                       environment: environment.merging(["ENLOG_TOKEN": SyncFixture.token]) { $1 })
        XCTAssertEqual(login.status, 0, login.standardError)
        return environment
    }

    /// 200 notes; `enlog sync` is SIGKILLed at seeded random moments and restarted until it
    /// reports nothing remaining: exactly 200 notes on the server, no duplicate enlog.id, all synced.
    func testKilledSyncsStillUploadEachNoteExactlyOnce() async throws {
        let f = try SyncFixture()
        let queued = try await f.enqueue(200)
        let environment = try Self.signedIn(f)
        var rng = SeededGenerator(state: 0x5EED_2026)
        var kills = 0, killedWhileSending = 0, storedButNotSynced = 0, runs = 0
        var final: [String: Any]?
        let out = f.directory.path("runner.out")
        while final == nil {
            runs += 1
            XCTAssertLessThan(runs, 80, "too many restarts")
            if runs >= 80 { break }
            // stdout to the file read below; stderr to the test's log.
            let child = try ChildProcess(Subprocess.enlog, ["sync", "--json"],
                                         environment: environment.map { "\($0)=\($1)" }, captureOutput: false,
                                         errorsToTest: true, standardOutputFile: out)
            // Kill at a random moment for the first runs; then let the last one finish.
            let killAfter = runs <= 60 ? Int.random(in: 40...260, using: &rng) : nil
            if let killAfter {
                let deadline = ContinuousClock.now + .milliseconds(killAfter)
                while child.isRunning && ContinuousClock.now < deadline { usleep(2_000) }
                if child.isRunning {
                    child.kill()
                    kills += 1
                }
            }
            let status = child.wait()
            if child.terminatingSignal != nil {
                let counts = try await f.outbox.counts()
                if (counts[.sending] ?? 0) > 0 { killedWhileSending += 1 }
                // Killed inside the exactly-once window: Evernote has the note, the outbox does not know.
                if try await f.serverNotes().count > (counts[.synced] ?? 0) { storedButNotSynced += 1 }
                continue
            }
            XCTAssertEqual(status, 0, "enlog sync failed; see its stderr above")
            let data = try Data(contentsOf: URL(fileURLWithPath: out))
            let summary = try JSONSerialization.jsonObject(with: data) as? [String: Any]
            if (summary?["remaining"] as? Int) == 0 { final = summary }
        }
        let uids = try await f.serverUIDs()
        print("kill test: \(kills) kills over \(runs) runs; \(killedWhileSending) left a note sending, "
              + "\(storedButNotSynced) after Evernote stored it but before it was marked synced; final run: \(final ?? [:])")
        XCTAssertEqual(uids.count, 200)
        XCTAssertEqual(Set(uids).count, 200, "no duplicate enlog.id")
        XCTAssertEqual(Set(uids), Set(queued.map(\.uid)))
        let value1 = try await f.outbox.counts()[.synced]
        XCTAssertEqual(value1, 200)
        XCTAssertGreaterThan(kills, 0)
    }

    func testThroughputThousandNotes() async throws {
        let f = try SyncFixture()
        try await f.enqueue(1000)
        let start = ContinuousClock.now
        let summary = try await f.engine().run()
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        XCTAssertEqual(summary.uploaded, 1000)
        let value2 = try await f.serverNotes().count
        XCTAssertEqual(value2, 1000)
        print(String(format: "sync throughput: 1000 notes in %.2f s = %.1f notes/s", seconds, 1000 / seconds))
    }
}
