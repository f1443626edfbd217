import Foundation
import XCTest
@testable import Network
@testable import Auth

final class LoopbackListenerTests: XCTestCase {
    let client = HTTPClient()

    func get(_ url: String) async throws -> HTTPResponse {
        try await client.send(HTTPRequest(url: url))
    }

    func testBindsLoopbackEphemeralPortAndIgnoresOtherPaths() async throws {
        let listener = try LoopbackCallbackListener()
        XCTAssertGreaterThan(listener.port, 0)
        XCTAssertEqual(listener.redirectURI, "http://127.0.0.1:\(listener.port)/oauth_callback")
        let base = "http://127.0.0.1:\(listener.port)"
        let waiter = Task { try await listener.waitForCallback(timeout: 10) { OAuth2.classifyCallback($0, expectedState: "S") } }
        let favicon = try await get(base + "/favicon.ico")
        XCTAssertEqual(favicon.status, 404)
        let mismatch = try await get(base + "/oauth_callback?code=C&state=WRONG")
        XCTAssertEqual(mismatch.status, 400)
        XCTAssertTrue(String(decoding: mismatch.body, as: UTF8.self).contains("state mismatch"))
        let good = try await get(base + "/oauth_callback?code=C&state=S")
        XCTAssertEqual(good.status, 200)
        XCTAssertTrue(String(decoding: good.body, as: UTF8.self).contains("enlog is authorized — you can close this tab"))
        let callback = try await waiter.value
        XCTAssertEqual(callback["code"], "C")
    }

    func testOAuth1TokenMismatchRejectedThenDenialAccepted() async throws {
        let listener = try LoopbackCallbackListener()
        let base = "http://127.0.0.1:\(listener.port)"
        let waiter = Task { try await listener.waitForCallback(timeout: 10) { OAuth1.classifyCallback($0, expectedToken: "T") } }
        let mismatch = try await get(base + "/oauth_callback?oauth_token=OTHER&oauth_verifier=v")
        XCTAssertEqual(mismatch.status, 400)
        let denied = try await get(base + "/oauth_callback?oauth_token=T&sandbox_lnb=false")
        XCTAssertEqual(denied.status, 200)
        XCTAssertTrue(String(decoding: denied.body, as: UTF8.self).contains("denied"))
        let callback = try await waiter.value
        XCTAssertThrowsError(try OAuth1.verifier(from: callback, expectedToken: "T")) { XCTAssertEqual($0 as? AuthError, .accessDenied) }
    }

    func testTimesOutWithTypedError() async throws {
        let listener = try LoopbackCallbackListener()
        let started = Date()
        do {
            _ = try await listener.waitForCallback(timeout: 0.4) { _ in .accept }
            XCTFail("expected a timeout")
        } catch let error as AuthError {
            XCTAssertEqual(error, .callbackTimedOut(seconds: 0))
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), hangSeconds)
    }

    func testCancellationAndClose() async throws {
        let listener = try LoopbackCallbackListener()
        let waiter = Task { try await listener.waitForCallback(timeout: 30) { _ in .accept } }
        // A request off the callback path is answered (404) only by a running wait.
        let probe = try await get("http://127.0.0.1:\(listener.port)/favicon.ico")
        XCTAssertEqual(probe.status, 404)
        waiter.cancel()
        do {
            _ = try await waiter.value
            XCTFail("expected cancellation")
        } catch let error as AuthError {
            XCTAssertEqual(error, .cancelled)
        }
        let port = listener.port
        listener.close()
        // The port is free again once closed.
        let again = try LoopbackCallbackListener(port: port)
        XCTAssertEqual(again.port, port)
    }

    func testIdleConnectionDoesNotBlockForever() async throws {
        let listener = try LoopbackCallbackListener()
        // A connection that never sends a request (browser preconnect).
        let idle = try LoopbackSocket(connectingTo: listener.port)
        let waiter = Task { try await listener.waitForCallback(timeout: 30) { _ in .accept } }
        // Another request is served while the idle connection is still open: the listener
        // neither waited it out nor closed it first (closed, it would read as end of file here).
        let other = try await get("http://127.0.0.1:\(listener.port)/favicon.ico")
        XCTAssertEqual(other.status, 404)
        var byte: UInt8 = 0
        XCTAssertEqual(recv(idle.fd, &byte, 1, Int32(MSG_DONTWAIT)), -1, "served while the idle connection is still open")
        XCTAssertEqual(errno, EAGAIN)
        let response = try await get("http://127.0.0.1:\(listener.port)/oauth_callback?x=1")
        XCTAssertEqual(response.status, 200)
        _ = try await waiter.value
    }
}
