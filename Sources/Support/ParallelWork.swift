import Dispatch
import Foundation
import Synchronization

/// Runs independent pieces of work on every core the process may use: the calling thread and one
/// thread more per other core, each taking the next index as soon as it has finished one.
///
/// `DispatchQueue.concurrentPerform` was meant to do this, but Linux's libdispatch adds its pool's
/// second thread only when its monitor judges the machine idle: with another build beside it,
/// `enlog validate` ran on one core (the pool's thread did 8 of 79 clock ticks).
package enum ParallelWork {
    /// Calls `body` once for each index of `0..<count`, in no set order, and returns when all
    /// calls have returned.
    package static func forEach(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let threads = min(count, ProcessInfo.processInfo.activeProcessorCount) - 1
        let queue = Queue(count: count, body: body)
        guard threads > 0 else { return queue.drain() }
        let finished = DispatchGroup()
        for _ in 0..<threads {
            finished.enter()
            let thread = Thread {
                queue.drain()
                finished.leave()
            }
            thread.name = "enlog.parallel"
            thread.start()
        }
        queue.drain()
        finished.wait()
    }

    private final class Queue: Sendable {
        let count: Int
        let body: @Sendable (Int) -> Void
        let next = Atomic<Int>(0)

        init(count: Int, body: @escaping @Sendable (Int) -> Void) {
            self.count = count
            self.body = body
        }

        func drain() {
            while true {
                let index = next.wrappingAdd(1, ordering: .relaxed).oldValue
                guard index < count else { return }
                body(index)
            }
        }
    }
}
