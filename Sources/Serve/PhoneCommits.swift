import Foundation
import Synchronization
import Capture
import Outbox

/// Group commit for the receiver: the requests whose points arrive while a transaction commits
/// wait for it, then go into the next transaction together, so that the full sync each commit
/// costs (most of a batch's time on a disk that syncs slowly) is paid once for all of them. Each
/// request's points are still whole or absent, and a request is answered only once its own
/// transaction is committed; an idle receiver commits a lone request at once, as before.
final class PhoneCommits: Sendable {
    /// Points in one transaction at most (whole requests; one request alone may be larger), so
    /// that a reader of the history and the next requests wait a bounded time.
    static let pointsPerTransaction = 5_000

    private struct Waiting {
        var points: OutboxStore.PhonePoints
        var reply: CheckedContinuation<OutboxStore.PhoneStoreResult, any Error>
    }

    private struct State {
        var waiting: [Waiting] = []
        var committing = false
    }

    private let outbox: OutboxStore
    private let state = Mutex(State())

    init(outbox: OutboxStore) {
        self.outbox = outbox
    }

    /// Stores one request's points; returns once they are committed (with others' or alone).
    func store(_ points: OutboxStore.PhonePoints) async throws -> OutboxStore.PhoneStoreResult {
        // Nothing to store: no transaction to wait for.
        if points.fixes.isEmpty { return try await outbox.storePhonePoints([points])[0] }
        return try await withCheckedThrowingContinuation { reply in
            let start = state.withLock { state in
                state.waiting.append(Waiting(points: points, reply: reply))
                guard !state.committing else { return false }
                state.committing = true
                return true
            }
            if start { Task { await self.commitWhileWaiting() } }
        }
    }

    /// How many requests wait for the next transaction, and whether one is being committed.
    var queue: (waiting: Int, committing: Bool) {
        state.withLock { ($0.waiting.count, $0.committing) }
    }

    /// Commits what waits, a group a transaction, until nothing does.
    private func commitWhileWaiting() async {
        while true {
            let group = state.withLock { state -> [Waiting] in
                var total = 0
                let taken = state.waiting.prefix { waiting in
                    defer { total += waiting.points.fixes.count }
                    return total == 0 || total + waiting.points.fixes.count <= Self.pointsPerTransaction
                }
                state.waiting.removeFirst(taken.count)
                if taken.isEmpty { state.committing = false }
                return Array(taken)
            }
            guard !group.isEmpty else { return }
            do {
                let results = try await outbox.storePhonePoints(group.map(\.points))
                for (waiting, result) in zip(group, results) { waiting.reply.resume(returning: result) }
            } catch {
                for waiting in group { waiting.reply.resume(throwing: error) }
            }
        }
    }
}
