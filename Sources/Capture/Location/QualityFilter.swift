import Foundation
import Support
import Configuration
import Network

/// Decides whether a fix is fresh and precise enough to log.
///
/// The ancestor iOS app's rule (age ≤ 15 s; its accuracy ≤ 10 m is 40 m here) with its bugs fixed: the age is
/// compared as a `Double` (the original truncated it with integer `abs`, so 15.9 s passed), a
/// fix from the future is not mistaken for a fresh one, and an unknown or negative accuracy
/// (CoreLocation's "invalid") is rejected whenever an accuracy limit is set.
package struct QualityFilter: Sendable, Equatable {
    package enum Rejection: Sendable, Equatable, CustomStringConvertible {
        case tooOld(age: TimeInterval, limit: TimeInterval)
        case fromTheFuture(ahead: TimeInterval, tolerance: TimeInterval)
        case accuracyUnknown(limit: Double)
        case tooInaccurate(accuracy: Double, limit: Double)

        package var description: String {
            switch self {
            case let .tooOld(age, limit):
                return String(format: "fix is %.1f s old, limit %.1f s", age, limit)
            case let .fromTheFuture(ahead, tolerance):
                if ahead > QualityFilter.clockDisagreement {
                    return "GPS time is \(QualityFilter.span(ahead)) ahead of the system clock: the system clock is wrong (not yet set by NTP?); wait for NTP, or set it (timedatectl set-time)"
                }
                return String(format: "fix is %.1f s in the future (clock skew tolerance %.1f s)", ahead, tolerance)
            case let .accuracyUnknown(limit):
                return String(format: "fix has no valid accuracy estimate, limit %.1f m", limit)
            case let .tooInaccurate(accuracy, limit):
                return String(format: "accuracy %.1f m is worse than the %.1f m limit", accuracy, limit)
            }
        }
    }

    /// Beyond this, a fix's time and the system clock disagree by more than any delay between a
    /// receiver and enlog: one of the two clocks is wrong, and messages say so rather than
    /// calling the fix old or early.
    package static let clockDisagreement: TimeInterval = 120

    /// "3601 s", "2.5 h", "56 years": how far apart two clocks are, for a person.
    package static func span(_ seconds: TimeInterval) -> String {
        let magnitude = abs(seconds)
        if magnitude < 2 * 3600 { return String(format: "%.0f s", magnitude) }
        if magnitude < 3 * 86400 { return String(format: "%.1f h", magnitude / 3600) }
        if magnitude < 2 * 365.25 * 86400 { return String(format: "%.0f days", magnitude / 86400) }
        return String(format: "%.1f years", magnitude / (365.25 * 86400))
    }

    /// Oldest acceptable fix in seconds; `nil` accepts any age (e.g. replaying an old log).
    package var maxAge: TimeInterval?
    /// Largest acceptable horizontal uncertainty in metres (the accuracy the fix must at least
    /// have); `nil` accepts any accuracy, including none.
    package var minAccuracy: Double?
    /// How far ahead of the local clock a fix may be stamped before it is refused: receivers
    /// and hosts disagree by a little, but a fix minutes ahead means a wrong clock somewhere.
    package var futureTolerance: TimeInterval

    package static let defaultMaxAge: TimeInterval = 15
    /// 40 m: gpsd's accuracy (`eph`) is 19 m × HDOP at 95 % confidence, so this admits an
    /// ordinary receiver's fix up to HDOP 2.1 (docs/configuration.md says why, with sources).
    /// The ancestor app's 10 m needed HDOP 0.52 and refused most fixes of an ordinary receiver.
    package static let defaultMinAccuracy: Double = 40
    package static let defaultFutureTolerance: TimeInterval = 2

    package init(
        maxAge: TimeInterval? = QualityFilter.defaultMaxAge,
        minAccuracy: Double? = QualityFilter.defaultMinAccuracy,
        futureTolerance: TimeInterval = QualityFilter.defaultFutureTolerance
    ) {
        self.maxAge = maxAge
        self.minAccuracy = minAccuracy
        self.futureTolerance = futureTolerance
    }

    /// Accepts everything: for manual locations, where the user vouches for the position.
    package static let acceptAll = QualityFilter(maxAge: nil, minAccuracy: nil, futureTolerance: .infinity)

    /// Why `fix` is not acceptable at `now`, or `nil` when it is.
    package func rejection(of fix: Fix, now: Date = Date()) -> Rejection? {
        let age = now.timeIntervalSince(fix.timestamp)
        if -age > futureTolerance {
            return .fromTheFuture(ahead: -age, tolerance: futureTolerance)
        }
        if let maxAge, age > maxAge {
            return .tooOld(age: age, limit: maxAge)
        }
        if let limit = minAccuracy {
            guard let accuracy = fix.horizontalAccuracy, accuracy >= 0 else {
                return .accuracyUnknown(limit: limit)
            }
            if accuracy > limit {
                return .tooInaccurate(accuracy: accuracy, limit: limit)
            }
        }
        return nil
    }

    package func accepts(_ fix: Fix, now: Date = Date()) -> Bool {
        rejection(of: fix, now: now) == nil
    }
}
