import Foundation
import Support
import EvernoteAPI
import Configuration
import Capture
import Compose

/// When a failed note is due again: capped exponential backoff on its attempt count. The one
/// formula for retry times, used by the sync engine (with jitter) and by `OutboxStore.markFailed`
/// when its caller names no retry time (without: a single process has no herd to spread).
package struct RetryBackoff: Sendable, Equatable {
    /// The first retry waits this long; each further attempt doubles it.
    package var base: TimeInterval
    /// No wait is longer than this.
    package var cap: TimeInterval

    /// 30 s, doubling, at most 6 h: what `enlog sync` uses unless told otherwise.
    package static let standard = RetryBackoff(base: 30, cap: 6 * 3600)

    package init(base: TimeInterval, cap: TimeInterval) {
        self.base = base
        self.cap = cap
    }

    /// base · 2^(attempts−1), capped.
    package func ceiling(afterAttempts attempts: Int) -> TimeInterval {
        min(cap, base * pow(2, Double(max(attempts - 1, 0))))
    }

    /// The ceiling scaled by a random factor in [0.5, 1], so that notes failed together do not
    /// all come due at the same moment.
    package func jittered(afterAttempts attempts: Int) -> TimeInterval {
        ceiling(afterAttempts: attempts) * Double.random(in: 0.5...1.0)
    }
}
