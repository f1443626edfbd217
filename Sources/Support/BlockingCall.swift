import Dispatch
import Foundation
import Synchronization

/// Blocking work — a C call that waits (`curl_easy_perform`, `poll`, `read`, `getaddrinfo`) — on a
/// thread of its own, so that it never ties up a thread of Swift's small cooperative pool, awaited
/// through a continuation, and cancellable through the awaiting task.
package enum BlockingCall {
    /// What cancelling the awaiting task does (the `CancellationFlag` passed to the work is raised in both cases).
    package enum Cancellation: Sendable {
        /// Call `wake`, which makes the blocking call return early (writes to a wake pipe, raises a
        /// flag a callback checks), and wait for the work to return whatever it returns then.
        case wake(@Sendable () -> Void)
        /// Stop waiting at once with `CancellationError`; the work finishes on its thread and its
        /// result is dropped. For calls nothing can interrupt, such as `getaddrinfo`.
        case abandon
    }

    /// Runs `work` on a thread of its own named `name` (see `BlockingThreads`) and returns its result.
    package static func run<T: Sendable>(_ name: String, onCancel cancellation: Cancellation,
                                 _ work: @escaping @Sendable (CancellationFlag) throws -> T) async throws -> T {
        let flag = CancellationFlag()
        let waiter = Waiter<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, Error>) in
                guard waiter.start(continuation) else { return }   // abandoned before it started
                BlockingThreads.start(name) {
                    waiter.finish(Result { try work(flag) })
                }
            }
        } onCancel: {
            flag.cancel()
            switch cancellation {
            case .wake(let wake): wake()
            case .abandon: waiter.finish(.failure(CancellationError()))
            }
        }
    }

    /// Runs `work`, which cannot fail, on a thread of its own named `name`. Cancelling the awaiting task
    /// raises the flag passed to `work` and calls `wake`; `work` then returns what it has.
    package static func run<T: Sendable>(_ name: String, wake: @escaping @Sendable () -> Void = {},
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

/// The threads blocking work runs on. A thread that finished its work waits a few seconds for
/// the next before it ends, so that calls one after another (a sync run's requests) reuse one
/// thread instead of creating and ending one each; a call that finds no idle thread gets a new
/// one, so calls never wait for each other.
enum BlockingThreads {
    /// How long a thread waits for more work before it ends.
    static let idleLifetime = DispatchTimeInterval.seconds(5)

    private final class Worker: Sendable {
        let wakeup = DispatchSemaphore(value: 0)
        /// The next job and the thread name it asks for, handed over by `start`.
        let next = Mutex<(name: String, job: @Sendable () -> Void)?>(nil)
    }

    /// Threads waiting for work, the most recently idle last.
    private static let idle = Mutex<[Worker]>([])

    static func start(_ name: String, _ job: @escaping @Sendable () -> Void) {
        if let worker = idle.withLock({ $0.popLast() }) {
            worker.next.withLock { $0 = (name, job) }
            worker.wakeup.signal()
            return
        }
        let worker = Worker()
        let thread = Thread { run(worker, name: name, first: job) }
        thread.name = name
        thread.start()
    }

    private static func run(_ worker: Worker, name: String, first: @escaping @Sendable () -> Void) {
        var current: (name: String, job: @Sendable () -> Void)? = (name, first)
        var threadName = name
        while let next = current {
            if next.name != threadName {
                Thread.current.name = next.name
                threadName = next.name
            }
            next.job()
            current = nil   // nothing of the finished job kept alive while idle
            idle.withLock { $0.append(worker) }
            if worker.wakeup.wait(timeout: .now() + idleLifetime) == .timedOut {
                let ended = idle.withLock { idle -> Bool in
                    guard let index = idle.firstIndex(where: { $0 === worker }) else { return false }
                    idle.remove(at: index)
                    return true
                }
                if ended { return }
                worker.wakeup.wait()   // taken for a job just as the wait timed out: its signal is coming
            }
            current = worker.next.withLock { next in
                defer { next = nil }
                return next
            }
        }
    }
}

/// Runs `work`, giving up (and cancelling it) once `budget` has passed.
package func withDeadline<T: Sendable>(_ budget: Duration, _ work: @escaping @Sendable () async throws -> T) async throws -> T {
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

package struct DeadlineExceeded: ENLogError {
    var budget: Duration
    package var reason: String { "no answer within \(budget.components.seconds) s" }
    /// Whatever was asked did not answer in time: a service that is not available now.
    package var category: ErrorCategory { .unavailable }
}
