import Foundation
import Testing
@testable import Capture
@testable import Compose
@testable import Diary
@testable import Watch

/// The track `watch` keeps, as a value: which fixes go into the history and how they are batched.
@Suite("watch: the track it keeps")
struct WatchTrackTests {
    static let start = WatchDecisionTests.start

    /// The recorder over `fixes` as watch runs it with no notes: the first fix is the anchor (a
    /// note's), the rest are offered in turn; the fixes kept, oldest first.
    static func kept(_ fixes: [Fix], _ thresholds: TrackThresholds = TrackThresholds()) -> [Fix] {
        var recorder = TrackRecorder(thresholds: thresholds, anchor: fixes.first)
        var kept: [Fix] = []
        for fix in fixes.dropFirst() {
            recorder.record(fix)
            if recorder.batchIsFull { kept += recorder.takeBatch() }
        }
        return kept + recorder.takeBatch()
    }

    @Test(arguments: [7, 8, 9, 10] as [UInt64])
    func aStationaryReceiverWithRealisticJitterKeepsNothing(seed: UInt64) {
        // Two hours at one place, HDOP wandering between 0.5 and 2.5 (accuracy 9.5–47.5 m): the
        // fixes lie farther apart than track_distance, but never beyond both accuracy radii.
        let still = GeneratedTrack(start: Self.start, legs: [.stop(seconds: 7200)], noise: seed, hdop: 0.5...2.5).fixes
        let spread = still.map { MovementDecision.distance(still[0], $0) }.max() ?? 0
        #expect(spread > TrackThresholds().distance, "the jitter is real: \(spread) m")
        #expect(Self.kept(still).isEmpty)
    }

    @Test(arguments: [1, 2, 3, 42] as [UInt64])
    func aNoisyDriveKeepsAPointEvery50MetresOrSoAndItsLength(seed: UInt64) {
        let drive = GeneratedTrack(start: Self.start, legs: WatchDecisionTests.drive, noise: seed)
        let fixes = drive.fixes
        let kept = Self.kept(fixes)
        // 5 km at 10 m/s with 9.5 m radii: 25 m beyond 19 m is 44 m, reached 5 s (50 m) on.
        #expect((5000 / 60...5000 / 40).contains(kept.count), "\(kept.count) kept of \(fixes.count)")
        let statistics = TrackStatistics([fixes[0]] + kept)
        #expect(abs(statistics.distance - 5000) < 5000 * 0.03, "\(statistics.distance) m")
        // Ten-minute stops keep nothing but, at most, the last metres of the approach (kept once
        // track_interval has passed): stop A from 0 s, B from 800 s, C from 1700 s.
        let stopped = kept.map { Int($0.timestamp.timeIntervalSince(Self.start).rounded()) }
            .filter { $0 < 600 || (830..<1400).contains($0) || $0 >= 1730 }
        #expect(stopped.count <= 2, "kept at \(stopped) s")
    }

    @Test func aSlowWalkIsKeptEveryIntervalAndTimesAreTheFixesOwn() throws {
        // 1 m/s with exact positions (9.5 m radii each): 100 m beyond the 19 m takes 119–120 s
        // (haversine against the generator's flat metres), but once 60 s have passed half is
        // enough: 50 m beyond, 69–70 s on.
        let walk = GeneratedTrack(start: Self.start, legs: [.drive(metres: 600, speed: 1)]).fixes
        let seconds = Self.kept(walk, TrackThresholds(distance: 100, interval: 60)).map { Int($0.timestamp.timeIntervalSince(Self.start).rounded()) }
        let gaps = zip(seconds, [0] + seconds).map { $0 - $1 }
        #expect(seconds.count == 8 && gaps.allSatisfy { (69...70).contains($0) }, "kept at \(seconds) s")
        #expect(Self.kept(walk, TrackThresholds(distance: 100, interval: 600)).count == 4, "every 119–120 s, without the interval")
        // A fix older than the last kept one (a receiver replaying) is not kept.
        var recorder = TrackRecorder(thresholds: TrackThresholds(), anchor: walk[300])
        let older = recorder.record(walk[100]), later = recorder.record(walk[350])
        #expect(!older)
        #expect(later)
    }

    @Test func batchesAreHandedOverFullInTimeOrderAndComeBackWhenTheirWriteFails() {
        let drive = GeneratedTrack(start: Self.start, legs: [.drive(metres: 5000, speed: 50)]).fixes
        var recorder = TrackRecorder(thresholds: TrackThresholds(), anchor: drive[0])
        var index = 1
        while !recorder.batchIsFull {
            let taken = recorder.record(drive[index])
            #expect(taken, "50 m a second: 25 m past both 9.5 m radii")
            index += 1
        }
        #expect(recorder.pending.count == TrackRecorder.batchSize)
        let batch = recorder.takeBatch()
        #expect(recorder.pending.isEmpty)
        recorder.record(drive[index])
        recorder.putBack(batch)
        #expect(recorder.pending.map(\.timestamp) == (batch + [drive[index]]).map(\.timestamp))
        // A note's fix becomes the anchor: the next fix is measured from it.
        recorder.noted(drive[index + 10])
        let again = recorder.record(drive[index + 10])
        #expect(!again)
        #expect(recorder.anchor == drive[index + 10])
    }
}
