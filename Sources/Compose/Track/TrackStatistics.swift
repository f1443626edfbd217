import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Capture

/// Distance travelled and time moving over fixes in time order, robust to a receiver's jitter.
///
/// Movement is measured from an anchor, not fix to fix: a fix counts as having moved only when
/// it lies beyond both fixes' accuracy radii from the anchor (the rule `watch` uses, so a
/// stationary receiver adds nothing however long it sits), and then only if the pace from the
/// anchor is at least `minimumSpeed` (a slow drift of fixes over an hour is not a walk). The
/// distance and time from the anchor then count, and the fix becomes the anchor.
///
/// Fixes more than `longestGap` apart leave a gap: where and how fast the way between went is
/// unknown (positions typed by hand hours apart, a receiver switched off), so it counts for
/// neither distance nor time moving; it is counted as a gap, and the next fix is a new anchor.
package struct TrackStatistics: Sendable, Equatable {
    package var fixes = 0
    /// Metres, along the anchored path.
    package var distance = 0.0
    /// Seconds spent moving.
    package var movingTime: TimeInterval = 0
    package var start: Date?
    package var end: Date?
    /// Times two fixes in a row were more than `longestGap` apart.
    package var gaps = 0

    /// Longer than any stop `watch` leaves without a fix while a receiver has one.
    package static let longestGap: TimeInterval = 15 * 60

    /// Below walking pace: 0.3 m/s (about 1 km/h).
    package static let minimumSpeed = 0.3
    /// The radius assumed for a fix without a stated accuracy, metres.
    package static let unknownAccuracy = 5.0

    package init(_ fixes: [Fix]) {
        self.fixes = fixes.count
        start = fixes.first?.timestamp
        end = fixes.last?.timestamp
        guard var anchor = fixes.first else { return }
        var previous = anchor
        for fix in fixes.dropFirst() {
            defer { previous = fix }
            if fix.timestamp.timeIntervalSince(previous.timestamp) > Self.longestGap {
                gaps += 1
                anchor = fix
                continue
            }
            let elapsed = fix.timestamp.timeIntervalSince(anchor.timestamp)
            let metres = anchor.distance(to: fix)
            guard metres > Self.radius(anchor) + Self.radius(fix) else { continue }
            if elapsed > 0, metres / elapsed >= Self.minimumSpeed {
                distance += metres
                movingTime += elapsed
            }
            anchor = fix
        }
    }

    private static func radius(_ fix: Fix) -> Double {
        fix.horizontalAccuracy ?? unknownAccuracy
    }

    /// "12.3 km" or "850 m".
    package var distanceText: String {
        distance >= 1000 ? String(format: "%.1f km", distance / 1000) : String(format: "%.0f m", distance)
    }

    /// "1 h 05 min", "12 min", "40 s".
    package var movingTimeText: String {
        let seconds = Int(movingTime.rounded())
        if seconds < 60 { return "\(seconds) s" }
        let minutes = seconds / 60
        return minutes < 60 ? "\(minutes) min" : String(format: "%d h %02d min", minutes / 60, minutes % 60)
    }
}
