import Foundation
import Synchronization
import XCTest
#if canImport(Glibc)
import Glibc
#endif
@testable import Network

/// A Python test server from `Tests/support/` run as a child process on 127.0.0.1.
///
/// Start: `python SCRIPT --port 0 --print-port --watch-stdin ARGS…`; the harness reads the
/// `PORT=<n>` line from stdout (`hangDeadline`). Stop: `stop()` (also on deinit) closes its stdin, sends SIGTERM,
/// SIGKILL after 10 s, and waits; and because the server watches its stdin, it also exits by itself when this process
/// dies and the pipe closes, so a crashed test run leaves no server behind.
///
/// Interpreter: env `ENLOG_PYTHON` (a venv with PyPI `evernote3`). Unset: the test is skipped
/// (`XCTSkip`), or fails when `CI=true`. Stdlib-only scripts fall back to `python3` on PATH.
final class PythonServer {
    let process: ChildProcess
    let port: Int

    var baseURL: String { "http://127.0.0.1:\(port)" }

    struct StartFailure: Error, CustomStringConvertible { let description: String }

    static var supportDirectory: URL {
        Fixtures.support
    }

    /// The interpreter to use, or a skip (a failure under CI=true) when none is configured.
    static func interpreter(stdlibOnly: Bool) throws -> String {
        let env = ProcessInfo.processInfo.environment
        if let python = env["ENLOG_PYTHON"], !python.isEmpty { return python }
        if stdlibOnly {
            for dir in (env["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
                let candidate = "\(dir)/python3"
                if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            }
        }
        if env["CI"] == "true" {
            throw StartFailure(description: "ENLOG_PYTHON is not set (required when CI=true): point it at a Python with PyPI evernote3")
        }
        throw XCTSkip("ENLOG_PYTHON is not set: point it at a Python with PyPI evernote3 (e.g. /work/scratch/thrift/.venv/bin/python)")
    }

    init(script: String, arguments: [String] = [], stdlibOnly: Bool = false) throws {
        let python = try Self.interpreter(stdlibOnly: stdlibOnly)
        process = try ChildProcess(python, [Self.supportDirectory.appendingPathComponent(script).path,
                                            "--port", "0", "--print-port", "--watch-stdin"] + arguments,
                                   errorsToTest: true, standardInputPipe: true)
        guard let line = process.line(startingWith: "PORT="), let port = Int(line.trimmingCharacters(in: .whitespaces)) else {
            process.kill()
            throw StartFailure(description: "\(script) did not report its port (exit status \(process.wait()))")
        }
        self.port = port
    }

    /// What happens when the test process dies: the server sees EOF on stdin and exits.
    func closeStdin() { process.closeStandardInput() }

    /// Closes the server's stdin (it exits on EOF), sends SIGTERM, and after 10 s SIGKILL.
    func stop() {
        process.closeStandardInput()
        process.stop(grace: .seconds(10))
    }

    deinit { stop() }
}

/// GET a test server's JSON control endpoint with our own client.
func fetchJSON(_ url: String) async throws -> Any {
    let response = try await controlClient.send(HTTPRequest(url: url))
    XCTAssertEqual(response.status, 200, "GET \(url)")
    return try JSONSerialization.jsonObject(with: Data(response.body))
}

let controlClient = HTTPClient()

/// Tests against `Tests/support/http_test_server.py`, one server per test.
class HTTPTestServerCase: XCTestCase {
    var server: PythonServer!

    override func setUpWithError() throws {
        server = try PythonServer(script: "http_test_server.py", stdlibOnly: true)
    }

    override func tearDown() {
        server?.stop()
        server = nil
    }
}
