import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif
@testable import Capture
@testable import Compose

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

    struct KillRuns {
        var kills = 0, killedWhileSending = 0, storedButNotSynced = 0, runs = 0
        var final: [String: Any]?
    }

    /// Runs `enlog sync`, SIGKILLed at seeded points for the first 60 runs, until one
    /// reports nothing remaining.
    static func syncUntilDone(_ f: SyncFixture, environment: [String: String], seed: UInt64) async throws -> KillRuns {
        var rng = SeededGenerator(state: seed)
        var result = KillRuns()
        let out = f.directory.path("runner.out")
        while result.final == nil {
            result.runs += 1
            XCTAssertLessThan(result.runs, 80, "too many restarts")
            if result.runs >= 80 { break }
            // stdout to the file read below; stderr to the test's log.
            let child = try ChildProcess(Subprocess.enlog, ["sync", "--json"],
                                         environment: environment.map { "\($0)=\($1)" }, captureOutput: false,
                                         errorsToTest: true, standardOutputFile: out)
            // Kill at a seeded point for the first runs; then let the last one finish. The point
            // is counted in the server's createNote calls, not in milliseconds, so a faster sync
            // (or a slower, loaded machine) still gets killed mid-run: one run in four dies
            // before its first createNote (start-up, lookups), the others after a seeded number
            // of this run's createNote calls plus a few milliseconds, anywhere in the exchange.
            if result.runs <= 60 {
                let createsBefore = try await SyncKeepAliveTests.createNoteCount(f)
                let target = Int.random(in: 0...12, using: &rng)
                let extra = Int.random(in: 0...4_000, using: &rng)
                if target < 3 {
                    let deadline = ContinuousClock.now + .microseconds(extra * 5)
                    while child.isRunning && ContinuousClock.now < deadline { usleep(500) }
                } else {
                    while child.isRunning, try await SyncKeepAliveTests.createNoteCount(f) - createsBefore < target - 2 {
                        usleep(500)
                    }
                    usleep(useconds_t(extra))
                }
                if child.isRunning {
                    child.kill()
                    result.kills += 1
                }
            }
            let status = child.wait()
            if child.terminatingSignal != nil {
                let counts = try await f.outbox.counts()
                if (counts[.sending] ?? 0) > 0 { result.killedWhileSending += 1 }
                // Killed inside the exactly-once window: Evernote has the note, the outbox does not know.
                if try await f.serverNotes().count > (counts[.synced] ?? 0) { result.storedButNotSynced += 1 }
                continue
            }
            XCTAssertEqual(status, 0, "enlog sync failed; see its stderr above")
            let data = try Data(contentsOf: URL(fileURLWithPath: out))
            let summary = try JSONSerialization.jsonObject(with: data) as? [String: Any]
            if (summary?["remaining"] as? Int) == 0 { result.final = summary }
        }
        print("kill test: \(result.kills) kills over \(result.runs) runs; \(result.killedWhileSending) left a note sending, "
              + "\(result.storedButNotSynced) after Evernote stored it but before it was marked synced; final run: \(result.final ?? [:])")
        return result
    }

    /// 200 notes; `enlog sync` is SIGKILLed at seeded random moments and restarted until it
    /// reports nothing remaining: exactly 200 notes on the server, no duplicate enlog.id, all synced.
    func testKilledSyncsStillUploadEachNoteExactlyOnce() async throws {
        let f = try SyncFixture()
        let queued = try await f.enqueue(200)
        let environment = try Self.signedIn(f)
        let runs = try await Self.syncUntilDone(f, environment: environment, seed: 0x5EED_2026)
        let uids = try await f.serverUIDs()
        XCTAssertEqual(uids.count, 200)
        XCTAssertEqual(Set(uids).count, 200, "no duplicate enlog.id")
        XCTAssertEqual(Set(uids), Set(queued.map(\.uid)))
        let value1 = try await f.outbox.counts()[.synced]
        XCTAssertEqual(value1, 200)
        XCTAssertGreaterThan(runs.kills, 0)
    }

    /// The same with a map in every note: each note on the server exactly once, with exactly one
    /// copy of its image.
    func testKilledSyncsUploadEachNoteWithExactlyOneImage() async throws {
        let tiles = try TileTestServer()
        defer { tiles.stop() }
        let image = try await MapRenderer(settings: .local(tiles, cache: nil)).render(latitude: 48.85, longitude: 2.35)
        let f = try SyncFixture()
        for i in 0..<60 {
            let fix = try Fix(latitude: 48.85 + Double(i) * 0.001, longitude: 2.35, timestamp: Date(), source: .manual)
            var draft = try NoteRenderer().render(fix: fix, place: nil, map: MapReference(image))
            draft.resources = [NoteResource(map: image)]
            try await f.outbox.enqueue(fix: fix, note: draft)
        }
        let environment = try Self.signedIn(f).merging(["ENLOG_MAP_STYLE": "none"]) { $1 }
        let runs = try await Self.syncUntilDone(f, environment: environment, seed: 0x3A95_2026)
        let notes = try await f.serverNotes()
        XCTAssertEqual(notes.count, 60)
        let uids = try await f.serverUIDs()
        XCTAssertEqual(Set(uids).count, 60, "no duplicate enlog.id")
        for note in notes {
            let resources = note["resources"] as? [[String: Any]] ?? []
            XCTAssertEqual(resources.count, 1, "one copy of the image")
            XCTAssertEqual(resources.first?["md5"] as? String, image.md5)
            XCTAssertEqual(resources.first?["bodyHash"] as? String, image.md5)
        }
        let synced = try await f.outbox.counts()[.synced]
        XCTAssertEqual(synced, 60)
        XCTAssertGreaterThan(runs.kills, 0)
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
