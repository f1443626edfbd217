import Foundation
import Testing
@testable import Configuration
@testable import Capture
@testable import Diary

/// `watch`'s decision, on generated tracks: where notes fall on a drive with stops, and that a
/// receiver that does not move logs nothing however much its fixes wander.
@Suite("watch: when to log a note")
struct WatchDecisionTests {
    static let start = Date(timeIntervalSince1970: 1_795_000_000)
    /// Stop A 10 min, 2 km at 10 m/s, stop B 10 min, 3 km at 10 m/s, stop C 10 min: 5 km in all.
    static let drive: [GeneratedTrack.Leg] = [
        .stop(seconds: 600), .drive(metres: 2000, speed: 10), .stop(seconds: 600),
        .drive(metres: 3000, speed: 10), .stop(seconds: 600),
    ]

    /// Runs the decision over `fixes` as watch does; the indices of the fixes logged.
    static func loggedIndices(_ fixes: [Fix], _ thresholds: WatchThresholds = WatchThresholds(), anchor: Fix? = nil) -> [Int] {
        var decision = MovementDecision(thresholds: thresholds, anchor: anchor)
        var logged: [Int] = []
        for (index, fix) in fixes.enumerated() where decision.verdict(for: fix).logs {
            decision.logged(fix)
            logged.append(index)
        }
        return logged
    }

    @Test func aDriveWithStopsLogsAtTheExpectedSecondsWithoutNoise() {
        let track = GeneratedTrack(start: Self.start, legs: Self.drive)
        // Accuracy 9.5 m per fix: 19 m of the distance is uncertainty, so a departure is logged
        // once 219 m from the stop (22 s at 10 m/s), and the next note 300 s later, at the next stop.
        #expect(Self.loggedIndices(track.fixes) == [0, 622, 922, 1422, 1722])
    }

    @Test(arguments: [1, 2, 3, 42, 2026] as [UInt64])
    func aDriveWithStopsAndReceiverNoiseLogsAtTheStopsAndDepartures(seed: UInt64) throws {
        let track = GeneratedTrack(start: Self.start, legs: Self.drive, noise: seed)
        let fixes = track.fixes
        let logged = Self.loggedIndices(fixes)
        try #require(logged.count == 5, "logged at \(logged)")
        #expect(logged[0] == 0)
        // Departures: within a few seconds of the noiseless 622 and 1422 (the noise is metres).
        #expect((618...626).contains(logged[1]), "\(logged)")
        #expect((1418...1426).contains(logged[3]), "\(logged)")
        // Arrivals: exactly min_interval after the departure note, at stops B and C.
        #expect(logged[2] == logged[1] + 300)
        #expect(logged[4] == logged[3] + 300)
        for (index, stopEast) in [(logged[2], 2000.0), (logged[4], 5000.0)] {
            let east = GeneratedTrack.east(ofLongitude: fixes[index].longitude)
            #expect(abs(east - stopEast) < 30, "note at \(east) m east, stop at \(stopEast) m")
        }
    }

    @Test(arguments: [7, 8, 9, 10] as [UInt64])
    func aStationaryReceiverWithRealisticJitterLogsNothing(seed: UInt64) {
        // Two hours at one place, HDOP wandering between 0.5 and 2.5 (accuracy 9.5–47.5 m).
        let track = GeneratedTrack(start: Self.start, legs: [.stop(seconds: 7200)], noise: seed, hdop: 0.5...2.5)
        let fixes = track.fixes
        let spread = fixes.map { MovementDecision.distance(fixes[0], $0) }.max() ?? 0
        // The jitter is real: compared raw, fixes of this one place lie farther apart than a
        // 50 m threshold, so only the accuracy-aware comparison keeps the receiver still.
        #expect(spread > 50, "fixes wander \(spread) m")
        // Starting from a note already logged there (as watch does after a restart): none.
        let anchor = try! Fix(latitude: GeneratedTrack.origin.latitude, longitude: GeneratedTrack.origin.longitude,
                              horizontalAccuracy: 9.5, timestamp: Self.start.addingTimeInterval(-60), source: .gpsd)
        #expect(Self.loggedIndices(fixes, anchor: anchor) == [])
        #expect(Self.loggedIndices(fixes, WatchThresholds(minDistance: 50), anchor: anchor) == [])
        // From nothing: the first fix only.
        #expect(Self.loggedIndices(fixes) == [0])
        // With a heartbeat every hour: the first fix, then one an hour.
        #expect(Self.loggedIndices(fixes, WatchThresholds(maxInterval: 3600)) == [0, 3600])
    }

    @Test func movementTooSoonWaitsForMinInterval() throws {
        let a = try Fix(latitude: 48, longitude: 11, horizontalAccuracy: 5, timestamp: Self.start, source: .gpsd)
        let far = try Fix(latitude: 48.01, longitude: 11, horizontalAccuracy: 5, timestamp: Self.start.addingTimeInterval(60), source: .gpsd)
        let decision = MovementDecision(thresholds: WatchThresholds(), anchor: a)
        guard case .skip(.tooSoon(let distance, 60)) = decision.verdict(for: far) else {
            Issue.record("\(decision.verdict(for: far))"); return
        }
        #expect(abs(distance - 1112) < 2)
        let later = try Fix(latitude: 48.01, longitude: 11, horizontalAccuracy: 5, timestamp: Self.start.addingTimeInterval(300), source: .gpsd)
        #expect(decision.verdict(for: later).logs)
        let older = try Fix(latitude: 48.01, longitude: 11, horizontalAccuracy: 5, timestamp: Self.start.addingTimeInterval(-1), source: .gpsd)
        #expect(decision.verdict(for: older) == .skip(.older))
    }

    @Test func settingsAreRangeCheckedWithTheRangeInTheMessage() throws {
        for (name, value, range) in [("ENLOG_WATCH_MIN_DISTANCE", "5", "from 10 to 100000"),
                                     ("ENLOG_WATCH_MIN_INTERVAL", "100000", "from 1 to 86400"),
                                     ("ENLOG_WATCH_MAX_INTERVAL", "10", "from 60 to 604800")] {
            #expect(throws: ConfigError.self) { try Config(path: nil, environment: ["XDG_CONFIG_HOME": "/nonexistent-enlog", "HOME": "/nonexistent-enlog", name: value]) }
            do {
                _ = try Config(path: nil, environment: ["XDG_CONFIG_HOME": "/nonexistent-enlog", "HOME": "/nonexistent-enlog", name: value])
            } catch {
                #expect(error.reason.contains(range), "\(error.reason)")
            }
        }
        let config = try Config(path: nil, environment: ["XDG_CONFIG_HOME": "/nonexistent-enlog", "HOME": "/nonexistent-enlog", "ENLOG_WATCH_MIN_DISTANCE": "500"])
        #expect(WatchThresholds(config: config) == WatchThresholds(minDistance: 500, minInterval: 300, maxInterval: nil))
    }
}
