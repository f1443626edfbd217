import Foundation
import Synchronization
import XCTest
@testable import Network

/// The Python interpreter with oauthlib (env ENLOG_PYTHON). Skips when unset, fails under CI=true.
func requirePython(file: StaticString = #filePath, line: UInt = #line) throws -> String {
    let environment = ProcessInfo.processInfo.environment
    if let python = environment["ENLOG_PYTHON"], !python.isEmpty { return python }
    if environment["CI"] == "true" {
        XCTFail("ENLOG_PYTHON must point at a Python with oauthlib when CI=true", file: file, line: line)
    }
    throw XCTSkip("set ENLOG_PYTHON to a Python with oauthlib 4.0.1 to run this test")
}

let supportDirectory = Fixtures.support

/// Runs `python -c SCRIPT args…` and returns stdout (trimmed).
func runPython(_ python: String, _ script: String, _ arguments: [String]) throws -> String {
    let result = try Subprocess.run(URL(fileURLWithPath: python), ["-c", script] + arguments)
    XCTAssertEqual(result.status, 0, result.standardError)
    return result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
}

/// Tests/support/oauth_server.py, started on 127.0.0.1:0; `PORT=` is read from its stdout.
/// Stopped with SIGTERM by `stop()` (tests call it in a defer/tearDown); it also exits by itself after 120 s.
final class OAuthTestServer {
    let process: ChildProcess
    let port: Int
    var base: String { "http://127.0.0.1:\(port)" }

    init(python: String, arguments: [String]) throws {
        process = try ChildProcess(python, [supportDirectory.appendingPathComponent("oauth_server.py").path,
                                            "--max-seconds", "120"] + arguments, errorsToTest: true)
        guard let line = process.line(startingWith: "PORT="), let port = Int(line) else {
            process.kill()
            throw NSError(domain: "OAuthTestServer", code: 1, userInfo: [NSLocalizedDescriptionKey: "no PORT= line: \(process.output)"])
        }
        self.port = port
    }

    /// SIGTERM, then SIGKILL after 10 s; always reaps the child.
    func stop() { process.stop(grace: .seconds(10)) }

    deinit { stop() }

    func stats() async throws -> [String: Any] {
        let response = try await HTTPClient().send(HTTPRequest(url: base + "/_stats"))
        return try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any] ?? [:]
    }
}

/// Collects printed lines.
final class LineRecorder: Sendable {
    private let storage = Mutex<[String]>([])
    var lines: [String] { storage.withLock { $0 } }
    func append(_ line: String) {
        if ProcessInfo.processInfo.environment["ENLOG_TEST_TRACE"] != nil { FileHandle.standardError.write(Data((line + "\n").utf8)) }
        storage.withLock { $0.append(line) }
    }
}

/// Plays the user's browser: fetches the authorization URL (the test server answers 302 = "approved"
/// or "denied"), then follows the Location to the loopback listener. Records the listener's page.
final class FakeBrowser: Sendable {
    private struct Visits {
        var pages = [String]()
        var locations = [String]()
    }
    private let visits = Mutex(Visits())
    let client = HTTPClient()
    /// When false, the browser stops after the authorization server's 302 (the user will paste the Location).
    let followToListener: Bool

    init(followToListener: Bool = true) {
        self.followToListener = followToListener
    }

    var lastPage: String? { visits.withLock { $0.pages.last } }
    var lastLocation: String? { visits.withLock { $0.locations.last } }

    /// The listener's page, once this fake browser has read it (the flow may finish first).
    func page() async -> String {
        try? await waitUntil("the browser read the listener's page") { lastPage != nil }
        return lastPage ?? ""
    }

    func open(_ url: String) {
        Task { try? await self.visit(url) }
    }

    func visit(_ url: String) async throws {
        let first = try await client.send(HTTPRequest(url: url))
        guard first.status == 302, let location = first.headers["location"] else {
            visits.withLock { $0.pages.append("status \(first.status)") }
            return
        }
        visits.withLock { $0.locations.append(location) }
        guard followToListener else { return }
        let page = try await client.send(HTTPRequest(url: location))
        let text = "\(page.status) " + String(decoding: page.body, as: UTF8.self)
        visits.withLock { $0.pages.append(text) }
    }
}
