import Foundation
import XCTest

/// The harness itself: servers never outlive the tests.
final class PythonServerHarnessTests: XCTestCase {
    func testServerExitsWhenStdinCloses() async throws {
        // Started from a concurrency worker thread (signals blocked there) on purpose.
        let server = try PythonServer(script: "http_test_server.py", stdlibOnly: true)
        server.closeStdin()
        let deadline = ContinuousClock.now + .seconds(5)
        while server.process.isRunning && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        XCTAssertFalse(server.process.isRunning)
    }

    func testStopTerminatesAServerStartedOffTheMainThread() async throws {
        let server = try PythonServer(script: "http_test_server.py", stdlibOnly: true)
        let start = ContinuousClock.now
        server.process.terminate()   // SIGTERM alone, stdin still open
        while server.process.isRunning && ContinuousClock.now - start < .seconds(5) {
            try await Task.sleep(for: .milliseconds(20))
        }
        XCTAssertFalse(server.process.isRunning)
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(2))
        server.stop()
    }
}
