import Foundation
import XCTest

/// How long a test waits for something that must happen before it calls it a hang. Generous on
/// purpose: tests assert what happens, never how fast, and must pass on a loaded machine.
let hangSeconds: TimeInterval = 60
let hangDeadline: Duration = .seconds(hangSeconds)

struct WaitTimedOut: Error, CustomStringConvertible {
    let description: String
}

/// Blocks this thread until `condition` holds: for an event the test can only observe by looking
/// (a file, a process state), in synchronous code. Throws after `deadline`, which only catches a
/// hang. Asynchronous code uses `waitUntil`, which leaves its thread to the work it waits for.
@available(*, noasync, message: "use waitUntil")
func blockUntil(_ what: String, within deadline: Duration = hangDeadline,
                _ condition: () throws -> Bool) throws {
    let end = ContinuousClock.now + deadline
    while try !condition() {
        guard ContinuousClock.now < end else { throw WaitTimedOut(description: "gave up waiting: \(what)") }
        usleep(5_000)
    }
}

/// Waits until `condition` holds: for an event the test can only observe by looking (a server-side
/// record, a process state). Throws after `deadline`, which only catches a hang.
func waitUntil(_ what: String, within deadline: Duration = hangDeadline,
               _ condition: () async throws -> Bool) async throws {
    let end = ContinuousClock.now + deadline
    while try await !condition() {
        guard ContinuousClock.now < end else { throw WaitTimedOut(description: "gave up waiting: \(what)") }
        try await Task.sleep(for: .milliseconds(5))
    }
}

/// Asserts that `body` throws exactly `expected` (the one helper for "this must fail with that").
func assertThrows<E: Error & Equatable, T>(_ expected: E, file: StaticString = #filePath, line: UInt = #line,
                                           _ body: () throws -> T) {
    do {
        let value = try body()
        XCTFail("expected \(expected), got \(value)", file: file, line: line)
    } catch let error as E {
        XCTAssertEqual(error, expected, file: file, line: line)
    } catch {
        XCTFail("expected \(expected), got \(error)", file: file, line: line)
    }
}

/// `assertThrows` for asynchronous work.
func assertThrows<E: Error & Equatable, T>(_ expected: E, file: StaticString = #filePath, line: UInt = #line,
                                           _ body: () async throws -> T) async {
    do {
        let value = try await body()
        XCTFail("expected \(expected), got \(value)", file: file, line: line)
    } catch let error as E {
        XCTAssertEqual(error, expected, file: file, line: line)
    } catch {
        XCTFail("expected \(expected), got \(error)", file: file, line: line)
    }
}

/// Asserts that `body` throws, and hands the error to `check` (when the exact value is not known).
func assertThrowsAsync<T>(file: StaticString = #filePath, line: UInt = #line,
                          _ body: () async throws -> T, _ check: (any Error) -> Void) async {
    do {
        let value = try await body()
        XCTFail("expected an error, got \(value)", file: file, line: line)
    } catch {
        check(error)
    }
}
