import Foundation
import XCTest
@testable import Support

/// The one way enlog runs a blocking C call: on a thread of its own, cancellable through the task.
final class BlockingCallTests: XCTestCase {
    func testWorkRunsOutsideTheCooperativePool() async {
        let outsideAnyTask = await BlockingCall.run("enlog.test") { _ in withUnsafeCurrentTask { $0 == nil } }
        XCTAssertTrue(outsideAnyTask)
    }

    func testResultsAndErrorsComeBack() async {
        struct Failure: Error, Equatable {}
        let value = try? await BlockingCall.run("enlog.test", onCancel: .abandon) { _ in 42 }
        XCTAssertEqual(value, 42)
        do {
            _ = try await BlockingCall.run("enlog.test", onCancel: .wake {}) { _ -> Int in throw Failure() }
            XCTFail("no error")
        } catch {
            XCTAssertEqual(error as? Failure, Failure())
        }
    }

    /// Cancelling wakes the blocked call (here a poll(2) on a pipe) and waits for what it returns.
    func testCancellingWakesTheCallAndWaitsForIt() async throws {
        let wake = try XCTUnwrap(WakePipe())
        let (started, announce) = AsyncStream.makeStream(of: Void.self)
        let call = Task {
            try await BlockingCall.run("enlog.test", onCancel: .wake { wake.signal() }) { flag -> String in
                announce.yield()
                var fds = [pollfd(fd: wake.readEnd, events: Int16(POLLIN), revents: 0)]
                _ = poll(&fds, 1, -1)
                return flag.isCancelled ? "woken, flag raised" : "woken, flag down"
            }
        }
        var iterator = started.makeAsyncIterator()
        _ = await iterator.next()
        call.cancel()
        let outcome = try await call.value
        XCTAssertEqual(outcome, "woken, flag raised")
    }

    /// A call nothing can interrupt (getaddrinfo) is abandoned: the caller goes on at once.
    func testAbandonedCallReturnsAtOnceWhileTheWorkStillBlocks() async {
        let gate = DispatchSemaphore(value: 0)
        defer { gate.signal() }
        let (started, announce) = AsyncStream.makeStream(of: Void.self)
        let call = Task {
            try await BlockingCall.run("enlog.test", onCancel: .abandon) { _ -> Int in
                announce.yield()
                gate.wait()
                return 1
            }
        }
        var iterator = started.makeAsyncIterator()
        _ = await iterator.next()
        call.cancel()
        do {
            let value = try await call.value
            XCTFail("the abandoned call returned \(value)")
        } catch {
            XCTAssertTrue(error is CancellationError, "\(error)")
        }
    }

    func testAlreadyCancelledTaskIsAbandonedBeforeTheWorkStarts() async {
        let call = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await BlockingCall.run("enlog.test", onCancel: .abandon) { _ in 1 }
        }
        do {
            _ = try await call.value
            XCTFail("a cancelled task got a result")
        } catch {
            XCTAssertTrue(error is CancellationError, "\(error)")
        }
    }

    /// The flag of a run that must finish its bookkeeping: cancelling it cancels only the call in flight.
    func testCancellationFlagCancelsTheCallInFlightAndEveryLaterOne() async throws {
        let flag = CancellationFlag()
        let (started, announce) = AsyncStream.makeStream(of: Void.self)
        let call = Task {
            try await flag.cancellable { () async throws -> Int in
                announce.yield()
                try await Task.sleep(for: .seconds(600))
                return 1
            }
        }
        var iterator = started.makeAsyncIterator()
        _ = await iterator.next()
        XCTAssertFalse(flag.isCancelled)
        flag.cancel()
        do {
            _ = try await call.value
            XCTFail("the call in flight was not cancelled")
        } catch {
            XCTAssertTrue(error is CancellationError, "\(error)")
        }
        XCTAssertTrue(flag.isCancelled)
        do {
            _ = try await flag.cancellable { () async throws -> Int in
                try await Task.sleep(for: .seconds(600))
                return 1
            }
            XCTFail("a call after the cancellation ran")
        } catch {
            XCTAssertTrue(error is CancellationError, "\(error)")
        }
    }
}
