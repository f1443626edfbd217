import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Capture
import Compose
import Outbox

/// When `enlog watch` logs a note: the thresholds from `watch.*`.
package struct WatchThresholds: Sendable, Equatable {
    /// Metres moved since the last logged note, beyond what the fixes' uncertainty explains.
    package var minDistance: Double
    /// Seconds since the last logged note before a movement is logged.
    package var minInterval: TimeInterval
    /// Seconds after which a note is logged even without movement (a heartbeat); nil: never.
    package var maxInterval: TimeInterval?

    package init(minDistance: Double = 200, minInterval: TimeInterval = 300, maxInterval: TimeInterval? = nil) {
        self.minDistance = minDistance
        self.minInterval = minInterval
        self.maxInterval = maxInterval
    }

    package init(config: Config) {
        self.init(minDistance: config.number(.watchMinDistance),
                  minInterval: config.number(.watchMinInterval),
                  maxInterval: config.string(.watchMaxInterval) == nil ? nil : config.number(.watchMaxInterval))
    }
}

/// The decision `watch` makes for every accepted fix, as a value: no clock, no I/O. Time is the
/// fixes' own timestamps, so a recorded log replayed at once decides exactly as it did live.
package struct MovementDecision: Sendable, Equatable {
    /// In words for `watch -v` and its JSON lines ("skipped: 55.6 m moved, but only 12 s after
    /// the last note, 300 s apart at least"); never Swift's dump of the case.
    package enum Verdict: Sendable, Equatable, CustomStringConvertible {
        /// No note logged yet (and none to start from): this is the first place.
        case first
        /// Moved `distance` metres (centre to centre) since the last note, past the threshold.
        case moved(distance: Double)
        /// Stationary, but `watch.max_interval` has passed since the last note.
        case heartbeat(elapsed: TimeInterval)
        case skip(Skip)

        package var logs: Bool {
            if case .skip = self { return false }
            return true
        }

        package var description: String {
            switch self {
            case .first: return "first place"
            case .moved(let distance): return "moved \(Self.metres(distance))"
            case .heartbeat(let elapsed): return "still here after \(Self.seconds(elapsed))"
            case .skip(let skip): return "skipped: \(skip)"
            }
        }

        static func metres(_ value: Double) -> String { String(format: "%.0f m", value) }
        static func seconds(_ value: TimeInterval) -> String { String(format: "%.0f s", value) }
    }

    package enum Skip: Sendable, Equatable, CustomStringConvertible {
        /// Not far enough: `distance` metres, of which `uncertainty` is explained by the fixes' accuracy.
        case notMoved(distance: Double, uncertainty: Double)
        /// Far enough, but too soon after the last note.
        case tooSoon(distance: Double, elapsed: TimeInterval)
        /// A fix stamped before the last note (a receiver or gpsd restart replaying old data).
        case older

        package var description: String {
            switch self {
            case let .notMoved(distance, uncertainty):
                return "not moved (\(Verdict.metres(distance)) from the last note; the fixes' accuracy allows \(Verdict.metres(uncertainty)))"
            case let .tooSoon(distance, elapsed):
                return "moved \(Verdict.metres(distance)), but only \(Verdict.seconds(elapsed)) after the last note"
            case .older:
                return "older than the last note (an old fix replayed)"
            }
        }
    }

    package var thresholds: WatchThresholds
    /// The fix of the last logged note: what distance and time are measured from.
    package private(set) var anchor: Fix?

    package init(thresholds: WatchThresholds, anchor: Fix? = nil) {
        self.thresholds = thresholds
        self.anchor = anchor
    }

    /// What to do with `fix`; it changes nothing (call `logged(_:)` once the note is stored, so a
    /// note that failed to store does not move the anchor).
    package func verdict(for fix: Fix) -> Verdict {
        guard let anchor else { return .first }
        let elapsed = fix.timestamp.timeIntervalSince(anchor.timestamp)
        guard elapsed >= 0 else { return .skip(.older) }
        let distance = Self.distance(anchor, fix)
        // A receiver that does not move still wanders: each fix lies somewhere within its
        // accuracy radius of the true position, so two fixes of the same place can be up to the
        // sum of both radii apart. Only the distance beyond that sum is movement; a stationary
        // receiver therefore never crosses min_distance however long it sits (outliers beyond
        // their stated accuracy by more than min_distance are not what receivers produce).
        let uncertainty = Self.radius(anchor) + Self.radius(fix)
        let moved = distance - uncertainty >= thresholds.minDistance
        if moved {
            return elapsed >= thresholds.minInterval ? .moved(distance: distance) : .skip(.tooSoon(distance: distance, elapsed: elapsed))
        }
        if let maxInterval = thresholds.maxInterval, elapsed >= maxInterval { return .heartbeat(elapsed: elapsed) }
        return .skip(.notMoved(distance: distance, uncertainty: uncertainty))
    }

    /// The note for `fix` is stored: later fixes are measured from it.
    package mutating func logged(_ fix: Fix) {
        anchor = fix
    }

    /// Unknown accuracy counts as none: such fixes reach here only when no accuracy limit is set.
    package static func radius(_ fix: Fix) -> Double {
        max(fix.horizontalAccuracy ?? 0, 0)
    }

    /// Great-circle distance in metres (see `Fix.distance(to:)`).
    package static func distance(_ a: Fix, _ b: Fix) -> Double { a.distance(to: b) }
}
