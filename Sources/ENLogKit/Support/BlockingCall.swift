import Foundation
import Synchronization

/// Blocking work — a C call that waits (`curl_easy_perform`, `poll`, `read`, `getaddrinfo`) — on a
/// thread of its own, so that it never ties up a thread of Swift's small cooperative pool, awaited
/// through a continuation, and cancellable through the awaiting task.
enum BlockingCall {
    /// What cancelling the awaiting task does (the `CancellationFlag` passed to the work is raised in both cases).
    enum Cancellation: Sendable {
        /// Call `wake`, which makes the blocking call return early (writes to a wake pipe, raises a
        /// flag a callback checks), and wait for the work to return whatever it returns then.
        case wake(@Sendable () -> Void)
        /// Stop waiting at once with `CancellationError`; the work finishes on its thread and its
        /// result is dropped. For calls nothing can interrupt, such as `getaddrinfo`.
        case abandon
    }

    /// Runs `work` on a new thread named `name` and returns its result.
    static func run<T: Sendable>(_ name: String, onCancel cancellation: Cancellation,
                                 _ work: @escaping @Sendable (CancellationFlag) throws -> T) async throws -> T {
        let flag = CancellationFlag()
        let waiter = Waiter<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, Error>) in
                guard waiter.start(continuation) else { return }   // abandoned before it started
                let thread = Thread {
                    waiter.finish(Result { try work(flag) })
                }
                thread.name = name
                thread.start()
            }
        } onCancel: {
            flag.cancel()
            switch cancellation {
            case .wake(let wake): wake()
            case .abandon: waiter.finish(.failure(CancellationError()))
            }
        }
    }

    /// Runs `work`, which cannot fail, on a new thread named `name`. Cancelling the awaiting task
    /// raises the flag passed to `work` and calls `wake`; `work` then returns what it has.
    static func run<T: Sendable>(_ name: String, wake: @escaping @Sendable () -> Void = {},
                                 _ work: @escaping @Sendable (CancellationFlag) -> T) async -> T {
        do {
            return try await run(name, onCancel: .wake(wake)) { work($0) }
        } catch {
            preconditionFailure("a waking call fails only when its work does, and this work cannot: \(error)")
        }
    }

    /// The continuation, resumed exactly once: by the work's result or by abandonment, whichever comes first.
    private final class Waiter<T: Sendable>: Sendable {
        private enum State {
            case notStarted
            case waiting(CheckedContinuation<T, Error>)
            /// Finished before the continuation existed (abandoned by a cancellation that came first).
            case finishedEarly(Result<T, Error>)
            case done
        }

        private let state = Mutex(State.notStarted)

        /// False when the wait is already over (the continuation was resumed here).
        func start(_ continuation: CheckedContinuation<T, Error>) -> Bool {
            let early = state.withLock { state -> Result<T, Error>? in
                if case .finishedEarly(let result) = state {
                    state = .done
                    return result
                }
                state = .waiting(continuation)
                return nil
            }
            guard let early else { return true }
            continuation.resume(with: early)
            return false
        }

        func finish(_ result: Result<T, Error>) {
            let continuation = state.withLock { state -> CheckedContinuation<T, Error>? in
                switch state {
                case .notStarted:
                    state = .finishedEarly(result)
                    return nil
                case .waiting(let continuation):
                    state = .done
                    return continuation
                case .finishedEarly, .done:
                    return nil
                }
            }
            continuation?.resume(with: result)
        }
    }
}

/// Runs `work`, giving up (and cancelling it) once `budget` has passed.
func withDeadline<T: Sendable>(_ budget: Duration, _ work: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await work() }
        group.addTask {
            try await Task.sleep(for: budget)
            throw DeadlineExceeded(budget: budget)
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}

struct DeadlineExceeded: ENLogError {
    var budget: Duration
    var reason: String { "no answer within \(budget.components.seconds) s" }
    /// Whatever was asked did not answer in time: a service that is not available now.
    var category: ErrorCategory { .unavailable }
}
