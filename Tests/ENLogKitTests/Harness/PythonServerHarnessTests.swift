import Foundation
import XCTest

/// The harness itself: servers never outlive the tests.
final class PythonServerHarnessTests: XCTestCase {
    func testServerExitsWhenStdinCloses() async throws {
        // Started from a concurrency worker thread (signals blocked there) on purpose.
        let server = try PythonServer(script: "http_test_server.py", stdlibOnly: true)
        server.closeStdin()
        try await waitUntil("the server exits after its stdin closed") { !server.process.isRunning }
    }

    func testStopTerminatesAServerStartedOffTheMainThread() async throws {
        let server = try PythonServer(script: "http_test_server.py", stdlibOnly: true)
        kill(server.process.pid, SIGTERM)   // SIGTERM alone, stdin still open
        try await waitUntil("the server exits on SIGTERM") { !server.process.isRunning }
        server.stop()
    }
}
