import Synchronization

/// A cancellation that work outside Swift's task tree can see: a blocking call on its own thread
/// (polled between steps) or a run whose bookkeeping must finish even when its caller is cancelled.
/// `cancel()` may come from any thread (typically a task's cancellation handler); it also cancels
/// the one operation registered through `cancellable(_:)`, if any is in flight.
package final class CancellationFlag: Sendable {
    private struct State {
        var cancelled = false
        var inFlight: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())

    package init() {}

    package var isCancelled: Bool { state.withLock { $0.cancelled } }

    package func cancel() {
        let inFlight = state.withLock { state -> (@Sendable () -> Void)? in
            state.cancelled = true
            return state.inFlight
        }
        inFlight?()
    }

    /// Runs `call` in a task of its own that `cancel()` cancels (an HTTP transfer then aborts and
    /// throws `HTTPError.cancelled`). Already cancelled: the task is cancelled before it starts waiting.
    package func cancellable<T: Sendable>(_ call: @escaping @Sendable () async throws -> T) async throws -> T {
        let task = Task { try await call() }
        if register({ task.cancel() }) { task.cancel() }
        defer { _ = register(nil) }
        return try await task.value
    }

    /// Sets the in-flight canceller; true when already cancelled.
    private func register(_ canceller: (@Sendable () -> Void)?) -> Bool {
        state.withLock { state in
            state.inFlight = canceller
            return state.cancelled
        }
    }
}
