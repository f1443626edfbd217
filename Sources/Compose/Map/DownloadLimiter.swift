import Synchronization
import Support
import EvernoteAPI
import Configuration
import Network
import Capture

/// A counting semaphore for async code: at most `limit` holders at once, waiters served in
/// order, a waiting task's cancellation ends its wait with `CancellationError`.
final class DownloadLimiter: Sendable {
    /// OSM's tile usage policy allows at most 2 connections per client for bulk work and asks
    /// apps to keep it low; the project's bound is 3 downloads in flight per process, whoever asks.
    static let perProcess = DownloadLimiter(limit: 3)

    private struct State {
        var available: Int
        var waiters: [(id: UInt64, continuation: CheckedContinuation<Void, Error>)] = []
        var cancelledBeforeWaiting: Set<UInt64> = []
        var nextID: UInt64 = 0
        var holders = 0
        var mostHolders = 0
    }

    private let state: Mutex<State>
    let limit: Int

    init(limit: Int) {
        self.limit = limit
        state = Mutex(State(available: limit))
    }

    /// Runs `body` holding one of the `limit` places.
    func withPermit<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await acquire()
        defer { release() }
        return try await body()
    }

    /// The most holders seen at once (for tests of the bound itself).
    var mostHoldersSeen: Int { state.withLock { $0.mostHolders } }

    private func acquire() async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
                enum Next { case go, wait, cancelled }
                let next = state.withLock { state -> Next in
                    if state.cancelledBeforeWaiting.remove(id) != nil { return .cancelled }
                    if state.available > 0 {
                        state.available -= 1
                        state.holders += 1
                        state.mostHolders = max(state.mostHolders, state.holders)
                        return .go
                    }
                    state.waiters.append((id, continuation))
                    return .wait
                }
                switch next {
                case .go: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .wait: break
                }
            }
        } onCancel: {
            let waiting = state.withLock { state -> CheckedContinuation<Void, Error>? in
                if let index = state.waiters.firstIndex(where: { $0.id == id }) {
                    return state.waiters.remove(at: index).continuation
                }
                // Not queued yet (or already holding a place): the queueing step will see this.
                state.cancelledBeforeWaiting.insert(id)
                return nil
            }
            waiting?.resume(throwing: CancellationError())
        }
        // A permit granted after cancellation but before the handler ran keeps its place until
        // `release`, which the caller's `defer` guarantees.
        state.withLock { _ = $0.cancelledBeforeWaiting.remove(id) }
    }

    private func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Error>? in
            if state.waiters.isEmpty {
                state.available += 1
                state.holders -= 1
                return nil
            }
            // The place passes straight to the next waiter.
            return state.waiters.removeFirst().continuation
        }
        next?.resume()
    }
}
