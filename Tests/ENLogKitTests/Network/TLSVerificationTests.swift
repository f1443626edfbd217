import Foundation
import XCTest
@testable import Network

/// TLS verification is always on: a local HTTPS server with a self-signed certificate (valid
/// for 127.0.0.1, but not issued by a system CA) must be refused.
final class TLSVerificationTests: XCTestCase {
    func testSelfSignedCertificateIsRejected() async throws {
        let openssl = "/usr/bin/openssl"
        guard FileManager.default.isExecutableFile(atPath: openssl) else { throw XCTSkip("openssl not installed") }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("enlog-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let cert = dir.appendingPathComponent("cert.pem").path
        let key = dir.appendingPathComponent("key.pem").path
        let make = try Subprocess.run(URL(fileURLWithPath: openssl), [
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
            "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"])
        XCTAssertEqual(make.status, 0, "openssl req: \(make.standardError)")

        let server = try PythonServer(script: "http_test_server.py", arguments: ["--tls-cert", cert, "--tls-key", key],
                                      stdlibOnly: true)
        defer { server.stop() }
        try await withProxyEnvironment([:]) {
            do {
                _ = try await HTTPClient().send(HTTPRequest(url: "https://127.0.0.1:\(server.port)/echo"))
                XCTFail("self-signed certificate accepted")
            } catch let error as HTTPError {
                guard case .tls(let message) = error else { return XCTFail("\(error)") }
                XCTAssertTrue(message.contains("certificate"), message)
            }
        }
    }
}
