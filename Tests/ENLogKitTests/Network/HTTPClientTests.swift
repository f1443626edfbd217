import Foundation
import XCTest
@testable import Support
@testable import Network
#if canImport(Glibc)
import Glibc
#endif

final class HTTPClientTests: HTTPTestServerCase {
    private func url(_ path: String) -> String { server.baseURL + path }

    /// How many /slow requests the server has started on (its own record).
    private func slowRequestsStarted() async throws -> Int {
        let stats = try await fetchJSON(url("/stats")) as? [String: Any]
        return try XCTUnwrap(stats?["slow_started"] as? Int)
    }

    private func echo(_ response: HTTPResponse) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
    }

    // MARK: Basics

    func testPostEchoesBodyHeadersUserAgentAndPrimaryIP() async throws {
        let client = HTTPClient()
        let body: [UInt8] = [0, 1, 2, 0xff, 0x80, 0x0d, 0x0a]
        let response = try await client.send(HTTPRequest(
            method: "POST", url: url("/echo?x=1"),
            headers: [(name: "Content-Type", value: "application/x-thrift"), (name: "X-Enlog-Test", value: "yes")],
            body: body))
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.headers["content-type"], "application/json")
        XCTAssertEqual(response.primaryIP, "127.0.0.1")
        let json = try echo(response)
        XCTAssertEqual(json["method"] as? String, "POST")
        XCTAssertEqual(json["path"] as? String, "/echo?x=1")
        XCTAssertEqual(json["body_hex"] as? String, "000102ff800d0a")
        let headers = Dictionary((json["headers"] as? [[String]] ?? []).map { ($0[0].lowercased(), $0[1]) },
                                 uniquingKeysWith: { $1 })
        XCTAssertEqual(headers["user-agent"], "enlog/\(ENLogVersion.current) (Linux)")
        XCTAssertEqual(headers["content-type"], "application/x-thrift")
        XCTAssertEqual(headers["x-enlog-test"], "yes")
        XCTAssertEqual(headers["content-length"], "7")
        XCTAssertNil(headers["expect"])
    }

    func testGetAndCustomUserAgent() async throws {
        let client = HTTPClient(configuration: HTTPConfiguration(userAgent: "probe/1"))
        let response = try await client.send(HTTPRequest(url: url("/echo")))
        let json = try echo(response)
        XCTAssertEqual(json["method"] as? String, "GET")
        XCTAssertEqual(json["body_hex"] as? String, "")
        let ua = (json["headers"] as? [[String]] ?? []).first { $0[0].lowercased() == "user-agent" }?[1]
        XCTAssertEqual(ua, "probe/1")
    }

    func testStatusCodesAreReturnedNotThrown() async throws {
        let client = HTTPClient()
        for status in [201, 404, 500, 503] {
            let response = try await client.send(HTTPRequest(url: url("/status/\(status)")))
            XCTAssertEqual(response.status, status)
            XCTAssertTrue(String(decoding: response.body, as: UTF8.self).contains("Status \(status)"))
        }
    }

    func testLargeBodyWithinLimit() async throws {
        let client = HTTPClient()
        let response = try await client.send(HTTPRequest(url: url("/large?bytes=\(8 << 20)")))
        XCTAssertEqual(response.body.count, 8 << 20)
        let chunked = try await client.send(HTTPRequest(url: url("/large?bytes=300000&chunked=1")))
        XCTAssertEqual(chunked.body.count, 300000)
        XCTAssertTrue(chunked.body.allSatisfy { $0 == UInt8(ascii: "x") })
    }

    // MARK: Connection reuse

    func testKeepAliveReusesOneConnection() async throws {
        let client = HTTPClient()
        var ports: Set<Int> = []
        var connectionIDs: Set<Int> = []
        for _ in 0..<4 {
            let json = try echo(try await client.send(HTTPRequest(url: url("/conn"))))
            ports.insert(try XCTUnwrap(json["client_port"] as? Int))
            connectionIDs.insert(try XCTUnwrap(json["connection_id"] as? Int))
        }
        // A POST on the same handle reuses the same connection too.
        let post = try echo(try await client.send(HTTPRequest(method: "POST", url: url("/echo"), body: [1, 2, 3])))
        ports.insert(try XCTUnwrap(post["client_port"] as? Int))
        XCTAssertEqual(ports.count, 1, "one TCP connection for all requests")
        XCTAssertEqual(connectionIDs.count, 1)
        XCTAssertEqual(client.poolStatistics.created, 1)
        XCTAssertEqual(client.poolStatistics.idle, 1)
    }

    func testConcurrentRequestsUseSeparateHandles() async throws {
        let client = HTTPClient()
        let slow = url("/slow?seconds=0.4")
        async let a = client.send(HTTPRequest(url: slow))
        async let b = client.send(HTTPRequest(url: slow))
        let (ra, rb) = try await (a, b)
        XCTAssertEqual(ra.status, 200)
        XCTAssertEqual(rb.status, 200)
        XCTAssertEqual(client.poolStatistics.created, 2)
        XCTAssertEqual(client.poolStatistics.idle, 1, "at most one idle handle per scheme+host+port")
    }

    // MARK: Security policy

    func testPlainHTTPToNonLoopbackIsRefusedBeforeAnyConnection() async throws {
        let client = HTTPClient(configuration: HTTPConfiguration(connectTimeout: .seconds(5)))
        let start = ContinuousClock.now
        await assertThrows(HTTPError.insecureURL("192.0.2.1")) {
            _ = try await client.send(HTTPRequest(method: "POST", url: "http://192.0.2.1/edam/user", body: [1]))
        }
        await assertThrows(HTTPError.insecureURL("example.com")) {
            _ = try await client.send(HTTPRequest(url: "HTTP://Example.COM:8080/"))
        }
        await assertThrows(HTTPError.insecureURL("127.0.0.1.example.com")) {
            _ = try await client.send(HTTPRequest(url: "http://127.0.0.1.example.com/"))
        }
        XCTAssertLessThan(ContinuousClock.now - start, hangDeadline)
        XCTAssertEqual(client.poolStatistics.created, 0, "no easy handle was even created")

        // A loopback name redirected elsewhere by CURLOPT_RESOLVE is refused too.
        let redirected = HTTPClient(configuration: HTTPConfiguration(resolve: ["localhost:\(server.port):192.0.2.1"]))
        await assertThrows(HTTPError.insecureURL("localhost")) {
            _ = try await redirected.send(HTTPRequest(url: "http://localhost:\(server.port)/echo"))
        }
        XCTAssertEqual(redirected.poolStatistics.created, 0)
    }

    func testLoopbackPolicy() throws {
        for ok in ["http://127.0.0.1/", "http://127.9.8.7:81/x", "http://localhost:5/", "http://LOCALHOST/",
                   "http://[::1]:8080/", "https://example.com/", "https://192.0.2.1/"] {
            XCTAssertNoThrow(try HTTPURLPolicy.check(ok, resolve: []), ok)
        }
        let target = try HTTPURLPolicy.check("https://WWW.Evernote.com/edam/user", resolve: [])
        XCTAssertEqual(target.poolKey, "https://www.evernote.com:443")
        XCTAssertEqual(try HTTPURLPolicy.check("http://[::1]:8080/", resolve: []).poolKey, "http://[::1]:8080")
        for bad in ["http://10.0.0.1/", "http://[::2]/", "http://[fe80::1]/", "http://localhost.example/",
                    "http://128.0.0.1/"] {
            XCTAssertThrowsError(try HTTPURLPolicy.check(bad, resolve: []), bad) { error in
                guard case .insecureURL = error as? HTTPError else { return XCTFail("\(bad): \(error)") }
            }
        }
        XCTAssertNoThrow(try HTTPURLPolicy.check("http://localhost:80/", resolve: ["localhost:80:127.0.0.2"]))
        XCTAssertNoThrow(try HTTPURLPolicy.check("http://localhost:80/", resolve: ["localhost:81:192.0.2.1"]))
    }

    func testInvalidURLs() async throws {
        let client = HTTPClient()
        for bad in ["ftp://127.0.0.1/", "127.0.0.1/echo", "", "https://", "https://exa mple.com/", "file:///etc/passwd"] {
            do {
                _ = try await client.send(HTTPRequest(url: bad))
                XCTFail("accepted \(bad)")
            } catch let error as HTTPError {
                guard case .invalidURL = error else { return XCTFail("\(bad): \(error)") }
            }
        }
    }

    func testErrorsDoNotLeakQueryStrings() {
        let described = HTTPURLPolicy.describe("https://user:pw@www.evernote.com/oauth?oauth_token=S=s1:U=1:secret#x")
        XCTAssertEqual(described, "https://www.evernote.com")
        XCTAssertFalse(HTTPError.invalidURL(described).reason.contains("secret"))
        XCTAssertFalse(HTTPError.tls("a\nb").reason.contains("\n"))
    }

    func testHeaderInjectionIsRejected() async {
        let client = HTTPClient()
        do {
            _ = try await client.send(HTTPRequest(url: url("/echo"), headers: [(name: "X-A", value: "1\r\nX-B: 2")]))
            XCTFail("header with CRLF accepted")
        } catch let error as HTTPError {
            guard case .other = error else { return XCTFail("\(error)") }
        } catch { XCTFail("\(error)") }
        XCTAssertEqual(client.poolStatistics.created, 0)
    }

    // MARK: Failures

    func testTotalTimeout() async throws {
        let client = HTTPClient(configuration: HTTPConfiguration(totalTimeout: .milliseconds(500)))
        let start = ContinuousClock.now
        await assertThrows(HTTPError.timedOut) {
            _ = try await client.send(HTTPRequest(url: url("/slow?seconds=5")))
        }
        let elapsed = ContinuousClock.now - start
        XCTAssertGreaterThanOrEqual(elapsed, .milliseconds(450))
        XCTAssertLessThan(elapsed, hangDeadline)
    }

    func testCancellationAbortsTheTransfer() async throws {
        let client = HTTPClient()
        let target = url("/slow?seconds=10")
        let start = ContinuousClock.now
        let slowBefore = try await slowRequestsStarted()
        let task = Task { try await client.send(HTTPRequest(url: target)) }
        try await waitUntil("the request reached the server") { try await self.slowRequestsStarted() > slowBefore }
        task.cancel()
        do {
            _ = try await task.value
            XCTFail("cancelled request succeeded")
        } catch let error as HTTPError {
            XCTAssertEqual(error, .cancelled)
        }
        XCTAssertLessThan(ContinuousClock.now - start, hangDeadline)

        // Already cancelled before starting: no transfer at all.
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await client.send(HTTPRequest(url: target))
        }
        await assertThrows(HTTPError.cancelled) { _ = try await early.value }

        // The client still works afterwards.
        let after = try await client.send(HTTPRequest(url: url("/echo")))
        XCTAssertEqual(after.status, 200)
    }

    func testConnectionDroppedMidReplyIsConnectionLost() async throws {
        let client = HTTPClient()
        await assertThrows(HTTPError.connectionLost) { _ = try await client.send(HTTPRequest(url: url("/drop"))) }
        await assertThrows(HTTPError.connectionLost) { _ = try await client.send(HTTPRequest(method: "POST", url: url("/nothing"), body: [1])) }
        let after = try await client.send(HTTPRequest(url: url("/echo")))
        XCTAssertEqual(after.status, 200)
    }

    func testResponseTooLarge() async throws {
        let client = HTTPClient(configuration: HTTPConfiguration(maxResponseBytes: 1000))
        await assertThrows(HTTPError.responseTooLarge) {   // declared Content-Length over the limit
            _ = try await client.send(HTTPRequest(url: url("/large?bytes=5000")))
        }
        await assertThrows(HTTPError.responseTooLarge) {   // chunked: caught while receiving
            _ = try await client.send(HTTPRequest(url: url("/large?bytes=200000&chunked=1")))
        }
        let exact = try await client.send(HTTPRequest(url: url("/large?bytes=1000")))
        XCTAssertEqual(exact.body.count, 1000)
    }

    /// libcurl reports a header line over its 100 KB as "Out of memory" (curl 27).
    func testAHugeHeaderLineIsSaidToBeOne() async throws {
        await assertThrows(HTTPError.headerTooLarge) {
            _ = try await HTTPClient().send(HTTPRequest(url: url("/bigheader?bytes=200000")))
        }
        XCTAssertEqual(HTTPError.headerTooLarge.category, .protocolError)
        let small = try await HTTPClient().send(HTTPRequest(url: url("/bigheader?bytes=1000")))
        XCTAssertEqual(small.headers["x-big"]?.count, 1000)
    }

    /// A reply that arrived but is no usable HTTP is a protocol error (76), never "cannot be
    /// reached" (69): `Content-Encoding: gzip, gzip` was curl 61 and fell into `.other`; a reply
    /// without a status line was curl 1 and said "not a usable http(s) URL"; garbled chunks were
    /// curl 56 and said "the connection was lost".
    func testRepliesThatAreNoUsableHTTPAreProtocolErrors() async throws {
        let client = HTTPClient()
        for kind in ["double-gzip", "unknown-coding", "bad-gzip", "http09", "bad-chunks", "bad-length"] {
            do {
                let response = try await client.send(HTTPRequest(url: url("/garbled?kind=\(kind)")))
                XCTFail("\(kind): accepted as \(response.status) with \(response.body.count) bytes")
            } catch let error as HTTPError {
                XCTAssertTrue(error.isBadReply, "\(kind): \(error) (\(error.reason))")
                XCTAssertEqual(error.category, .protocolError, "\(kind): \(error.reason)")
                XCTAssertTrue(error.reason.hasPrefix("the server's reply is not usable HTTP: "), "\(kind): \(error.reason)")
            }
        }
        let after = try await client.send(HTTPRequest(url: url("/echo")))
        XCTAssertEqual(after.status, 200)
    }

    func testCouldNotConnectToClosedPort() async throws {
        let port = try closedLoopbackPort()
        let client = HTTPClient()
        await assertThrows(HTTPError.couldNotConnect("127.0.0.1:\(port)")) {
            _ = try await client.send(HTTPRequest(url: "http://127.0.0.1:\(port)/"))
        }
    }

    func testTLSToAPlainHTTPServerFailsAsTLS() async throws {
        let client = HTTPClient()
        try await withProxyEnvironment([:]) {
            do {
                _ = try await client.send(HTTPRequest(url: "https://127.0.0.1:\(server.port)/echo"))
                XCTFail("TLS handshake with a plain HTTP server succeeded")
            } catch let error as HTTPError {
                guard case .tls = error else { return XCTFail("\(error)") }
                XCTAssertFalse(error.reason.contains("\n"))
            }
        }
    }

    // MARK: Proxies from the environment

    func testHTTPSProxyFromEnvironmentIsHonoured() async throws {
        let proxy = "http://127.0.0.1:\(server.port)"
        try await withProxyEnvironment(["https_proxy": proxy]) {
            // The target name is never resolved locally: the CONNECT goes to the proxy (our server).
            do {
                _ = try await HTTPClient().send(HTTPRequest(url: "https://enlog-proxy-test.invalid/edam/user"))
                XCTFail("a refusing proxy let the request through")
            } catch let error as HTTPError {
                if case .couldNotResolveHost = error { XCTFail("resolved locally instead of using the proxy") }
            }
        }
        var statsJSON = try await fetchJSON(url("/stats"))
        var stats = try XCTUnwrap(statsJSON as? [String: Any])
        XCTAssertEqual(stats["connect_requests"] as? [String], ["enlog-proxy-test.invalid:443"])

        // no_proxy is honoured as well: this one goes direct (and fails TLS against a plain server).
        try await withProxyEnvironment(["https_proxy": proxy, "no_proxy": "127.0.0.1"]) {
            do {
                _ = try await HTTPClient().send(HTTPRequest(url: "https://127.0.0.1:\(server.port)/echo"))
                XCTFail("TLS to a plain server succeeded")
            } catch let error as HTTPError {
                guard case .tls = error else { return XCTFail("\(error)") }
            }
        }
        // Loopback http never uses a proxy, even one configured for http.
        try await withProxyEnvironment(["http_proxy": "http://127.0.0.1:1", "HTTP_PROXY": "http://127.0.0.1:1"]) {
            let response = try await HTTPClient().send(HTTPRequest(url: url("/echo")))
            XCTAssertEqual(response.status, 200)
        }
        statsJSON = try await fetchJSON(url("/stats"))
        stats = try XCTUnwrap(statsJSON as? [String: Any])
        XCTAssertEqual((stats["connect_requests"] as? [String])?.count, 1)
    }
}

/// Runs `body` with exactly these proxy variables set (all others of the family unset), then
/// restores the environment. XCTest runs test methods one at a time, so this is safe here.
func withProxyEnvironment(_ values: [String: String], _ body: () async throws -> Void) async throws {
    let names = ["http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY",
                 "no_proxy", "NO_PROXY"]
    let saved = names.map { ($0, ProcessInfo.processInfo.environment[$0]) }
    for name in names { unsetenv(name) }
    for (name, value) in values { setenv(name, value, 1) }
    defer {
        for (name, value) in saved {
            if let value { setenv(name, value, 1) } else { unsetenv(name) }
        }
    }
    try await body()
}

