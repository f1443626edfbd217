import Foundation

/// The wake-ups `watch`'s loop sets for itself, at most one of each kind pending.
enum WatchTimer: Sendable, Hashable, CaseIterable {
    /// Network changes have settled (a link coming up sends a burst): time to try uploading.
    case networkSettled
    /// The backoff after a sync left notes queued has passed.
    case syncRetry
    /// Past midnight: time for the previous day's digest (`watch.digest`).
    case digest
    /// The track's pending batch has waited `TrackRecorder.batchAge`: time to write it.
    case trackWrite
}

/// At most one pending wake-up, and a stale one ignored. Scheduling again or cancelling makes
/// the wake-up already on its way stale: its task may be past its sleep with the input queued
/// behind others, where cancelling the task no longer reaches it, so the input carries the
/// generation it was scheduled with and only the live one fires. A value: the task that sleeps
/// is the loop's.
struct LoopTimer: Sendable, Equatable {
    enum Wake: Sendable, Equatable {
        case after(Duration)
        /// At a time of the wall clock, which a clock set forward (suspend, NTP) brings nearer.
        case at(Date)
    }

    private(set) var generation = 0
    /// The wake-up pending, nil when none is.
    private(set) var pending: Wake?

    /// Replaces the pending wake-up, if any; returns the generation its firing carries.
    mutating func schedule(_ wake: Wake) -> Int {
        generation += 1
        pending = wake
        return generation
    }

    /// Makes the pending wake-up stale; returns whether there was one.
    @discardableResult
    mutating func cancel() -> Bool {
        defer {
            generation += 1
            pending = nil
        }
        return pending != nil
    }

    /// Whether a firing of `generation` is the live wake-up.
    func isCurrent(_ generation: Int) -> Bool {
        pending != nil && generation == self.generation
    }

    /// Takes a firing: true when it is the live wake-up (which is then no longer pending),
    /// false when it is stale and must do nothing.
    mutating func fire(_ generation: Int) -> Bool {
        guard isCurrent(generation) else { return false }
        pending = nil
        return true
    }
}

extension LoopTimer.Wake {
    /// Sleeps until the wake-up is due or the task is cancelled.
    func sleep() async {
        switch self {
        case .after(let duration):
            try? await Task.sleep(for: duration)
        case .at(let due):
            // Slept in slices so that a clock set forward (suspend, NTP) still wakes it near the time.
            while !Task.isCancelled, Date() < due {
                try? await Task.sleep(for: .seconds(min(max(due.timeIntervalSinceNow, 0.1), 300)))
            }
        }
    }
}
