import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Auth
import Capture
import Compose
import Outbox
import Diary
import Sync

/// How `watch` thins the route it follows before keeping it in the history (`watch.track*`).
package struct TrackThresholds: Sendable, Equatable {
    /// Metres moved from the last kept fix, beyond both fixes' accuracy radii, before another is
    /// kept (so a receiver's jitter keeps nothing).
    package var distance: Double
    /// Seconds after which half of `distance` is enough: a slow walk, a crawl in traffic, the
    /// last metres before a stop still get a point now and then.
    package var interval: TimeInterval

    package init(distance: Double = 25, interval: TimeInterval = 60) {
        self.distance = distance
        self.interval = interval
    }

    /// nil when `watch.track = false`.
    package init?(config: Config) {
        guard config.boolean(.watchTrack) else { return nil }
        self.init(distance: config.number(.watchTrackDistance), interval: config.number(.watchTrackInterval))
    }
}

/// The track `watch` keeps: which accepted fixes go into the history (a value: no clock, no I/O;
/// time is the fixes' own, so a replay keeps exactly what the live stream kept), and the batch
/// of kept fixes not yet written.
///
/// Fixes are written in batches, not one by one: the outbox pays an fsync per commit (a note is
/// the only copy of the user's entry), which a Raspberry Pi's SD card should not see every
/// second. A batch is written once it holds `batchSize` fixes, `batchAge` seconds after its
/// first fix was kept (a timer in the live loop), before each note, and when watch stops; a
/// crash (power cut, SIGKILL) therefore loses at most `batchSize - 1` track fixes, none older
/// than `batchAge`. Notes are written at once, as ever.
package struct TrackRecorder: Sendable, Equatable {
    package static let batchSize = 32
    package static let batchAge: TimeInterval = 120

    package var thresholds: TrackThresholds
    /// The last fix in the history along the track (kept, or written with a note).
    package private(set) var anchor: Fix?
    /// Kept fixes not written yet, oldest first.
    package private(set) var pending: [Fix] = []

    package init(thresholds: TrackThresholds, anchor: Fix? = nil) {
        self.thresholds = thresholds
        self.anchor = anchor
    }

    /// Whether `fix`, accepted by the quality filter, belongs in the track; it changes nothing.
    package func keeps(_ fix: Fix) -> Bool {
        guard let anchor else { return true }
        let elapsed = fix.timestamp.timeIntervalSince(anchor.timestamp)
        guard elapsed > 0 else { return false }
        // Only the distance beyond both accuracy radii is movement, as for notes (MovementDecision
        // says why). A stated accuracy is not a hard bound: over a stationary day a few fixes lie
        // just beyond the sum of the radii, so movement must also clear a margin (the threshold,
        // or half of it once the interval has passed) before anything is kept.
        let moved = MovementDecision.distance(anchor, fix) - MovementDecision.radius(anchor) - MovementDecision.radius(fix)
        return moved >= thresholds.distance || (elapsed >= thresholds.interval && moved >= thresholds.distance / 2)
    }

    /// Takes `fix` into the pending batch when it belongs in the track; returns whether it did.
    @discardableResult
    package mutating func record(_ fix: Fix) -> Bool {
        guard keeps(fix) else { return false }
        pending.append(fix)
        anchor = fix
        return true
    }

    /// `fix` is in the history already (a note was written on it): later fixes are measured from it.
    package mutating func noted(_ fix: Fix) {
        if anchor.map({ fix.timestamp >= $0.timestamp }) ?? true { anchor = fix }
    }

    package var batchIsFull: Bool { pending.count >= Self.batchSize }

    /// Hands over the pending batch to be written.
    package mutating func takeBatch() -> [Fix] {
        defer { pending = [] }
        return pending
    }

    /// A batch whose write failed comes back, ahead of what was kept since.
    package mutating func putBack(_ batch: [Fix]) {
        pending = batch + pending
    }
}
