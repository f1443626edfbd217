@testable import Support
import Dispatch
import Foundation
import Synchronization
import Testing

/// `enlog validate`'s workers: every index once, on more than one thread where there are cores.
@Suite("ParallelWork: every index once, on every core")
struct ParallelWorkTests {
    @Test(arguments: [0, 1, 2, 3, 1000])
    func callsEveryIndexOnce(_ count: Int) {
        let calls = Mutex([Int](repeating: 0, count: count))
        ParallelWork.forEach(count) { index in calls.withLock { $0[index] += 1 } }
        #expect(calls.withLock { $0 } == [Int](repeating: 1, count: count))
    }

    /// The first piece waits for the second to start: it can see it only if two threads run at
    /// once (one thread running them in turn waits out the timeout).
    @Test func runsPiecesAtTheSameTime() throws {
        try #require(ProcessInfo.processInfo.activeProcessorCount > 1, "one core: nothing to run beside")
        let arrivals = Mutex(0), met = Mutex(0)
        let secondArrived = DispatchSemaphore(value: 0)
        ParallelWork.forEach(2) { _ in
            if arrivals.withLock({ arrivals in arrivals += 1; return arrivals }) == 2 {
                secondArrived.signal()
            } else if secondArrived.wait(timeout: .now() + 30) == .success {
                met.withLock { $0 += 1 }
            }
        }
        #expect(met.withLock { $0 } == 1)
    }
}
