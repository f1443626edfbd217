import Foundation
import XCTest
import Glibc
@testable import Capture
@testable import Compose
@testable import Outbox
@testable import Watch

/// Debian's gpsd, fed a generated drive by gpsfake: watch logs where it should, survives gpsd
/// going away, and stops cleanly on SIGTERM.
final class WatchGPSDTests: XCTestCase {
    private var fakes: [ChildProcess] = []

    override func tearDown() {
        for fake in fakes { stop(fake) }
        fakes = []
    }

    private func stop(_ fake: ChildProcess) {
        let daemons = childProcesses(of: fake.pid)
        fake.stop()
        for pid in daemons where kill(pid, 0) == 0 { kill(pid, SIGKILL) }
    }

    /// gpsfake replaying `track` on `port`, 0.05 s per sentence (three per fix).
    func gpsfake(_ track: GeneratedTrack, port: UInt16, in directory: TemporaryDirectory, name: String) throws -> ChildProcess {
        guard let executable = TestPaths.executableInPath("gpsfake") else {
            throw XCTSkip("gpsfake is not installed (apt-get install -y gpsd gpsd-clients)")
        }
        let log = try directory.file(name, contents: track.nmea).path
        let fake = try ChildProcess(executable.path, ["-P", String(port), "-n", "-c", "0.05", "-q", log], captureOutput: false)
        fakes.append(fake)
        return fake
    }

    /// Fixes stamped in the past (so none is "from the future" however fast gpsfake plays them),
    /// accepted through a generous age limit.
    func environment(port: UInt16) -> [String: String] {
        ["ENLOG_LOCATION_GPSD": "127.0.0.1:\(port)", "ENLOG_LOCATION_MAX_AGE": "86400",
         "ENLOG_GEOCODING_ENABLED": "false", "ENLOG_WATCH_MIN_INTERVAL": "30"]
    }

    func testDriveThroughRealGPSDLogsAtTheStopsAndDeparturesThenStopsOnSIGTERM() throws {
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        // Stop A 150 s, 2 km at 80 m/s, stop B 60 s, 3 km at 120 m/s, stop C 60 s; min_interval 30 s.
        let legs: [GeneratedTrack.Leg] = [.stop(seconds: 150), .drive(metres: 2000, speed: 80), .stop(seconds: 60),
                                          .drive(metres: 3000, speed: 120), .stop(seconds: 60)]
        let duration = 150 + 25 + 60 + 25 + 60
        let track = GeneratedTrack(start: Date().addingTimeInterval(-Double(duration) - 60), legs: legs)
        let port = try freeLoopbackPort()
        _ = try gpsfake(track, port: port, in: home.directory, name: "drive.nmea")
        let watch = try WatchProcess(home: home, environment: environment(port: port))
        XCTAssertTrue(watch.waitFor("gpsd-connected"), "watch never reached gpsd")
        // The last note comes 30 s (of fix time) after the second departure, at stop C.
        watch.waitFor(5, "noted", seconds: 120)
        let end = watch.terminate()
        XCTAssertEqual(end.status, 0, end.output)
        XCTAssertTrue(end.events.contains { $0["event"] as? String == "stopped" })
        let notes = try home.notes()
        let easts = notes.compactMap { $0["longitude"] as? Double }.map(GeneratedTrack.east(ofLongitude:))
        XCTAssertEqual(easts.count, 5, "notes at \(easts) m east; \(end.output.suffix(3000))")
        guard easts.count == 5 else { return }
        XCTAssertLessThan(abs(easts[0]), 1, "the first place, stop A")
        XCTAssertTrue((219...300).contains(easts[1]), "leaving A: \(easts[1])")
        XCTAssertLessThan(abs(easts[2] - 2000), 1, "stop B: \(easts[2])")
        XCTAssertTrue((2219...2400).contains(easts[3]), "leaving B: \(easts[3])")
        XCTAssertLessThan(abs(easts[4] - 5000), 1, "stop C: \(easts[4])")
        let counts = try home.counts()
        XCTAssertEqual(counts.notes, notes.count, "every note is whole: its fix with it")
        XCTAssertEqual(counts.notesWithoutFix, 0)
        XCTAssertGreaterThan(counts.fixes, counts.notes, "the track between the notes")
        XCTAssertEqual(counts.integrity, "ok")
    }

    /// A start `seconds` long before now whose drive stays within one UTC day (the most recent
    /// 10:00 or 22:00 UTC far enough back), so that one digest holds it; within the 1-day age limit.
    private static func pastStart(lasting seconds: Int) -> Date {
        let halfDay = 43_200.0, now = Date().timeIntervalSince1970
        var start = ((now - 36_000) / halfDay).rounded(.down) * halfDay + 36_000
        if start > now - Double(seconds) - 60 { start -= halfDay }
        return Date(timeIntervalSince1970: start)
    }

    /// The fixes of the whole history (`history --format csv`), as Python's csv reads them.
    private func historyPoints(_ home: EnlogHome) throws -> [PeerPoint] {
        let csv = try home.run("history", "--format", "csv")
        XCTAssertEqual(csv.status, 0, csv.standardError)
        return try TrackPeer.read("csv", csv.standardOutput).points
    }

    func testDriveThroughRealGPSDKeepsTheTrackTheDigestCarriesAndAReplayKeepsTheSame() async throws {
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        home.extraEnvironment["ENLOG_NOTE_TIME_ZONE"] = "UTC"
        // Stop 40 s, 2 km at 20 m/s, stop 40 s, 1.5 km at 15 m/s, stop 60 s: 3.5 km, with receiver noise.
        let legs: [GeneratedTrack.Leg] = [.stop(seconds: 40), .drive(metres: 2000, speed: 20), .stop(seconds: 40),
                                          .drive(metres: 1500, speed: 15), .stop(seconds: 60)]
        let track = GeneratedTrack(start: Self.pastStart(lasting: 340), legs: legs, noise: 2026)
        let port = try freeLoopbackPort()
        _ = try gpsfake(track, port: port, in: home.directory, name: "drive.nmea")
        let watch = try WatchProcess(home: home, environment: environment(port: port).merging(["ENLOG_NOTE_TIME_ZONE": "UTC"]) { $1 })
        XCTAssertTrue(watch.waitFor("gpsd-connected"), "watch never reached gpsd")
        // gpsfake plays its log again from the start: a fix older than the last note means the
        // whole drive has been through.
        XCTAssertTrue(watch.waitFor("fix", "older", seconds: 240), watch.child.output.suffix(3000).description)
        let end = watch.terminate()
        XCTAssertEqual(end.status, 0, end.output)

        let kept = end.events.filter { $0["event"] as? String == "track" }.count
        let saves = end.events.filter { $0["event"] as? String == "track-saved" }
        let notes = try home.notes().count
        let counts = try home.counts()
        XCTAssertEqual(counts.notesWithoutFix, 0)
        XCTAssertEqual(counts.fixes, notes + kept, "every fix kept is in the history, and nothing else")
        XCTAssertEqual(saves.compactMap { $0["added"] as? Int }.reduce(0, +), kept)
        XCTAssertLessThanOrEqual(saves.count, kept / TrackRecorder.batchSize + notes + 1, "written in batches: \(saves.count) writes")
        XCTAssertLessThan(counts.fixes, track.points.count / 3, "thinned: \(counts.fixes) of \(track.points.count) fixes")
        let history = try historyPoints(home)
        XCTAssertEqual(history.count, counts.fixes)

        // The day's digest carries the whole track, as gpxpy reads it, and its length.
        let day = TrackDay(containing: track.points[0].time, timeZone: TimeZone(identifier: "UTC")!).name
        let digest = try home.run("digest", "--date", day, "--no-sync", "--json")
        XCTAssertEqual(digest.status, 0, digest.standardError)
        let note = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(digest.standardOutput.utf8)) as? [String: Any])
        let resources = try await OutboxStore(path: home.database, access: .read).resources(of: Int64(try XCTUnwrap(note["id"] as? Int)))
        let gpx = try XCTUnwrap(resources.first { $0.mime == "application/gpx+xml" })
        let points = try TrackPeer.read("gpx", String(decoding: gpx.body, as: UTF8.self)).points
        XCTAssertEqual(points.map(\.time), history.map(\.time), "the digest's GPX is the day's history, track and notes")
        let fixes = try points.map {
            try Fix(latitude: $0.lat, longitude: $0.lon, horizontalAccuracy: $0.hdop.map { $0 * NMEALogLocation.metresPerHDOP },
                    timestamp: Date(timeIntervalSince1970: $0.time ?? 0), source: .gpx)
        }
        let statistics = TrackStatistics(fixes)
        XCTAssertEqual(statistics.distance, 3500, accuracy: 3500 * 0.03, "the route is 3.5 km")
        XCTAssertTrue((note["title"] as? String ?? "").contains(statistics.distanceText), "\(note["title"] ?? "")")

        // The same fixes replayed at once keep the same track: from the first fix watch saw
        // (gpsd may have played a few before watch connected).
        var replayHome = try EnlogHome()
        replayHome.extraEnvironment = home.extraEnvironment.merging(["ENLOG_WATCH_MIN_INTERVAL": "30"]) { $1 }
        let firstSeen = Date(timeIntervalSince1970: try XCTUnwrap(history.first?.time) - 0.001)
        let log = try home.directory.file("seen.nmea", contents: track.starting(at: firstSeen).nmea).path
        let replay = try replayHome.run("watch", "--replay", log, "--json")
        XCTAssertEqual(replay.status, 0, replay.standardError)
        XCTAssertEqual(WatchProcess.events(replay.standardError).last?["track"] as? Int, kept, replay.standardError)
        let replayed = try historyPoints(replayHome)
        XCTAssertEqual(replayed.map(\.time), history.map(\.time), "the same fixes kept")
        for (a, b) in zip(replayed, history) {
            XCTAssertEqual(a.lat, b.lat, accuracy: 1e-7)
            XCTAssertEqual(a.lon, b.lon, accuracy: 1e-7)
        }
    }

    /// SIGTERM with kept fixes not yet written (fewer than a batch, younger than its age limit):
    /// they are written before watch exits.
    func testSIGTERMWritesTheTrackKeptSinceTheLastBatch() throws {
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        let legs: [GeneratedTrack.Leg] = [.stop(seconds: 10), .drive(metres: 900, speed: 20), .stop(seconds: 300)]
        let track = GeneratedTrack(start: Date().addingTimeInterval(-400), legs: legs, noise: 77)
        let port = try freeLoopbackPort()
        _ = try gpsfake(track, port: port, in: home.directory, name: "short.nmea")
        // One note (the first place); then only the track.
        let watch = try WatchProcess(home: home, environment: environment(port: port).merging(["ENLOG_WATCH_MIN_DISTANCE": "100000"]) { $1 })
        // 900 m, a point every 60 m or so (3 s at 20 m/s): about 15 kept.
        XCTAssertTrue(watch.waitFor(10, "track", seconds: 120), watch.child.output.suffix(3000).description)
        let end = watch.terminate()
        XCTAssertEqual(end.status, 0, end.output)
        let kept = end.events.filter { $0["event"] as? String == "track" }.count
        let saves = end.events.filter { $0["event"] as? String == "track-saved" }
        XCTAssertLessThan(kept, TrackRecorder.batchSize, "fewer than a batch: only the stop writes them")
        XCTAssertEqual(saves.map { $0["reason"] as? String }, ["stopping"], end.output)
        XCTAssertEqual(saves.first?["added"] as? Int, kept)
        let counts = try home.counts()
        XCTAssertEqual(counts.notes, 1)
        XCTAssertEqual(counts.fixes, 1 + kept, "the note's fix and every kept fix")
        XCTAssertEqual(counts.integrity, "ok")
    }

    func testGPSDKilledAndRestartedWatchResumesAndLogsTheNextMovement() throws {
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        let port = try freeLoopbackPort()
        let now = Date()
        let here = GeneratedTrack(start: now.addingTimeInterval(-3000), legs: [.stop(seconds: 400)])
        let first = try gpsfake(here, port: port, in: home.directory, name: "here.nmea")
        let watch = try WatchProcess(home: home, environment: environment(port: port))
        XCTAssertTrue(watch.waitFor("noted"), "no first note")
        // Watch may have started before gpsd listened (a first outage, reported as such).
        let lossesBefore = WatchProcess.events(watch.child.output).filter { $0["event"] as? String == "gpsd-lost" }.count
        stop(first)
        XCTAssertTrue(watch.waitFor("gpsd-lost"), "the loss is reported")

        // Later and 2 km east: a new gpsd on the same port.
        let there = GeneratedTrack(start: now.addingTimeInterval(-1000), legs: [.drive(metres: 2000, speed: 1000), .stop(seconds: 400)])
        _ = try gpsfake(there, port: port, in: home.directory, name: "there.nmea")
        watch.waitFor(2, "noted", seconds: 90)
        let end = watch.terminate()
        let notes = try home.notes()
        XCTAssertEqual(end.status, 0, end.output)
        XCTAssertEqual(notes.count, 2, end.output.suffix(3000).description)
        XCTAssertGreaterThan(end.events.filter { $0["event"] as? String == "gpsd-connected" }.count, 1, "reconnected")
        XCTAssertEqual(end.events.filter { $0["event"] as? String == "gpsd-lost" }.count, lossesBefore + 1,
                       "the outage is said once, however many attempts it took")
        if let longitude = notes.last?["longitude"] as? Double {
            XCTAssertGreaterThan(GeneratedTrack.east(ofLongitude: longitude), 900, "the movement after the restart")
        }
    }
}
