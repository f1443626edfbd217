import Foundation
import Synchronization
import XCTest
@testable import Network
@testable import Auth

/// Full logins against Tests/support/oauth_server.py (oauthlib verifies every signature and the PKCE verifier).
/// The test plays the browser: the flow "opens" the authorization URL (DISPLAY is set in the injected
/// environment, `openBrowser` is the fake browser), which fetches it, gets the server's 302, and sends the
/// Location to the loopback listener.
final class AuthEndToEndTests: XCTestCase {
    var servers = [OAuthTestServer]()

    override func tearDown() {
        for server in servers { server.stop() }
        servers.removeAll()
    }

    func start(_ arguments: [String]) throws -> OAuthTestServer {
        let server = try OAuthTestServer(python: try requirePython(), arguments: arguments)
        servers.append(server)
        return server
    }

    func oauth1Server(deny: Bool = false) throws -> OAuthTestServer {
        try start(["--mode", "oauth1", "--consumer-key", "enlog-test-key", "--consumer-secret", "s3cr&t é",
                   "--issue-token", "S=s1:U=1e240:E=19a:C=1:P=1cd:A=enlog-test-key:V=2:H=abc",
                   "--note-store-url", "http://127.0.0.1:1/shard/s1/notestore"] + (deny ? ["--deny"] : []))
    }

    /// Detection hands the OAuth 2.0 login the server's metadata itself (no optional to unwrap later).
    func testProtocolDetectionCarriesTheServersMetadata() async throws {
        let oauth2 = try start(["--mode", "oauth2", "--issue-token", "S=s1:U=1e240:E=19a:C=1:P=1cd:A=enlog:V=2:H=abc"])
        let detected = try await AuthService.resolve(.custom, host: oauth2.base).detectProtocol(transport: HTTPClient())
        guard case .oauth2(let metadata) = detected else { return XCTFail("detected \(detected)") }
        XCTAssertEqual(metadata.authorizationEndpoint, oauth2.base + "/auth/authorize")
        XCTAssertEqual(metadata.tokenEndpoint, oauth2.base + "/auth/token")
        XCTAssertEqual(metadata.registrationEndpoint, oauth2.base + "/auth/register")

        let oauth1 = try oauth1Server()
        let fallback = try await AuthService.resolve(.custom, host: oauth1.base).detectProtocol(transport: HTTPClient())
        guard case .oauth1 = fallback else { return XCTFail("detected \(fallback)") }
    }

    func flow(browser: FakeBrowser, lines: LineRecorder, display: Bool = true,
              pasted: (@Sendable () async -> String?)? = { nil }) -> AuthFlow {
        AuthFlow(transport: HTTPClient(), environment: display ? ["DISPLAY": ":99"] : [:],
                 printLine: { lines.append($0) }, openBrowser: { browser.open($0) }, pastedLines: pasted)
    }

    func testOAuth1LoginHMACSHA1() async throws {
        let server = try oauth1Server()
        let browser = FakeBrowser(), lines = LineRecorder()
        let options = AuthLoginOptions(service: .custom, host: server.base,
                                       consumer: OAuth1Consumer(key: "enlog-test-key", secret: "s3cr&t é"), timeout: 20)
        let credentials = try await flow(browser: browser, lines: lines).login(options)
        XCTAssertEqual(credentials.authProtocol, .oauth1)
        XCTAssertEqual(credentials.token, "S=s1:U=1e240:E=19a:C=1:P=1cd:A=enlog-test-key:V=2:H=abc")
        XCTAssertEqual(credentials.shard, "s1")
        XCTAssertEqual(credentials.userId, 123456)
        XCTAssertEqual(credentials.noteStoreUrl, "http://127.0.0.1:1/shard/s1/notestore")
        XCTAssertEqual(credentials.webApiUrlPrefix, "\(server.base)/shard/s1/")
        XCTAssertGreaterThan(credentials.tokenExpires ?? .distantPast, Date())
        XCTAssertEqual(credentials.host, server.base)
        // The authorization URL is printed on a line of its own.
        XCTAssertTrue(lines.lines.contains { $0.hasPrefix("\(server.base)/OAuth.action?oauth_token=temp-") && !$0.contains(" ") })
        XCTAssertFalse(lines.lines.joined().contains("H=abc"))
        let page = await browser.page()
        XCTAssertTrue(page.hasPrefix("200 "))
        XCTAssertTrue(page.contains("enlog is authorized"))
        let stats = try await server.stats()
        XCTAssertEqual(stats["verified"] as? Int, 2)
        XCTAssertEqual(stats["methods"] as? [String], ["HMAC-SHA1", "HMAC-SHA1"])
    }

    func testOAuth1LoginPlaintextWithPastedURL() async throws {
        let server = try oauth1Server()
        let browser = FakeBrowser(followToListener: false), lines = LineRecorder()
        // --no-browser: nothing is opened; the "user" visits the printed URL elsewhere and pastes the redirect.
        let pasteSource = PasteQueue()
        let options = AuthLoginOptions(service: .custom, host: server.base,
                                       consumer: OAuth1Consumer(key: "enlog-test-key", secret: "s3cr&t é"),
                                       signatureMethod: .plaintext, noBrowser: true, timeout: 20)
        let flow = self.flow(browser: FakeBrowser(), lines: lines, pasted: { await pasteSource.next() })
        let login = Task { try await flow.login(options) }
        guard let url = try await waitForLine(lines, { $0.contains("/OAuth.action?") }) else {
            _ = try await login.value  // surfaces the login's error
            return XCTFail("the flow never printed the authorization URL")
        }
        try await browser.visit(url)
        let location = try XCTUnwrap(browser.lastLocation)
        await pasteSource.push("not a url")
        await pasteSource.push(location)
        let credentials = try await login.value
        XCTAssertEqual(credentials.authProtocol, .oauth1)
        XCTAssertEqual(credentials.shard, "s1")
        let stats = try await server.stats()
        XCTAssertEqual(stats["methods"] as? [String], ["PLAINTEXT", "PLAINTEXT"])
        XCTAssertTrue(lines.lines.contains { $0.contains("pasted redirect URL is unusable") })
    }

    /// geeknote's placement: everything in the query string. (oauthlib decodes query values twice, so this
    /// path is exercised with a hex secret, like Evernote's; the header path above covers special characters.)
    func testOAuth1LoginQueryPlacement() async throws {
        let server = try start(["--mode", "oauth1", "--consumer-key", "enlog-test-key", "--consumer-secret", "0123abcd",
                                "--issue-token", "S=s7:U=1:E=1:H=x"])
        for method in [OAuth1SignatureMethod.hmacSHA1, .plaintext] {
            let options = AuthLoginOptions(service: .custom, host: server.base,
                                           consumer: OAuth1Consumer(key: "enlog-test-key", secret: "0123abcd"),
                                           signatureMethod: method, oauth1Placement: .query, timeout: 20)
            let credentials = try await flow(browser: FakeBrowser(), lines: LineRecorder()).login(options)
            XCTAssertEqual(credentials.shard, "s1")
            XCTAssertEqual(credentials.token, "S=s7:U=1:E=1:H=x")
        }
        let stats = try await server.stats()
        XCTAssertEqual(stats["methods"] as? [String], ["HMAC-SHA1", "HMAC-SHA1", "PLAINTEXT", "PLAINTEXT"])
    }

    func testOAuth1DenyAndBadSecret() async throws {
        let server = try oauth1Server(deny: true)
        let browser = FakeBrowser(), lines = LineRecorder()
        var options = AuthLoginOptions(service: .custom, host: server.base,
                                       consumer: OAuth1Consumer(key: "enlog-test-key", secret: "s3cr&t é"), timeout: 20)
        do {
            _ = try await flow(browser: browser, lines: lines).login(options)
            XCTFail("expected a denial")
        } catch let error as AuthError {
            XCTAssertEqual(error, .accessDenied)
        }
        let deniedPage = await browser.page()
        XCTAssertTrue(deniedPage.contains("denied"))

        options.consumer = OAuth1Consumer(key: "enlog-test-key", secret: "wrong")
        do {
            _ = try await flow(browser: browser, lines: lines).login(options)
            XCTFail("expected a signature rejection")
        } catch let error as AuthError {
            guard case .serverRejected(_, 401, _) = error else { return XCTFail("\(error)") }
            XCTAssertFalse(error.reason.contains("wrong"))
        }
        options.consumer = nil
        do {
            _ = try await flow(browser: browser, lines: lines).login(options)
            XCTFail("expected missing consumer key")
        } catch let error as AuthError {
            XCTAssertEqual(error, .missingConsumerKey)
        }
    }

    func testOAuth2LoginThenRefresh() async throws {
        // Access tokens live 10 minutes: inside the 15-minute margin, so a refresh is due at once.
        let server = try start(["--mode", "oauth2", "--issue-token", "TOK", "--access-lifetime", "600"])
        let browser = FakeBrowser(), lines = LineRecorder()
        let authFlow = flow(browser: browser, lines: lines)
        let credentials = try await authFlow.login(AuthLoginOptions(service: .custom, host: server.base, timeout: 20))
        XCTAssertEqual(credentials.authProtocol, .oauth2)
        XCTAssertTrue(credentials.token.hasPrefix("S=s1:U=1e240:E="))
        XCTAssertTrue(credentials.token.hasSuffix(":H=TOK-1"))
        XCTAssertEqual(credentials.shard, "s1")
        XCTAssertEqual(credentials.userId, 123456)
        XCTAssertEqual(credentials.noteStoreUrl, "\(server.base)/edam/note/s1")
        XCTAssertEqual(credentials.tokenEndpoint, "\(server.base)/auth/token")
        XCTAssertNotNil(credentials.clientId)
        XCTAssertNotNil(credentials.refreshToken)
        XCTAssertGreaterThan(credentials.tokenExpires ?? .distantPast, Date().addingTimeInterval(86400))
        let accessExpiry = try XCTUnwrap(credentials.accessTokenExpires)
        XCTAssertEqual(accessExpiry.timeIntervalSinceNow, 600, accuracy: 30)
        XCTAssertTrue(lines.lines.contains { $0.hasPrefix("\(server.base)/auth/authorize?") && $0.contains("code_challenge_method=S256") })
        let page = await browser.page()
        XCTAssertTrue(page.contains("enlog is authorized"))

        // Not yet due an hour earlier; due now.
        let notDue = try await authFlow.refreshIfNeeded(credentials, now: Date().addingTimeInterval(-3600))
        XCTAssertEqual(notDue, credentials)
        let refreshed = try await authFlow.refreshIfNeeded(credentials)
        XCTAssertTrue(refreshed.token.hasSuffix(":H=TOK-2"))
        XCTAssertNotEqual(refreshed.refreshToken, credentials.refreshToken, "refresh tokens rotate")
        XCTAssertEqual(refreshed.clientId, credentials.clientId)
        // The old refresh token is spent.
        do {
            _ = try await authFlow.refresh(credentials)
            XCTFail("expected the spent refresh token to be refused")
        } catch let error as AuthError {
            guard case .refreshImpossible = error else { return XCTFail("\(error)") }
        }
        let stats = try await server.stats()
        XCTAssertEqual(stats["pkce_verified"] as? Int, 1)
        XCTAssertEqual(stats["refreshed"] as? Int, 1)
        XCTAssertEqual(stats["registered"] as? Int, 1)
    }

    func testOAuth2Deny() async throws {
        let server = try start(["--mode", "oauth2", "--issue-token", "TOK", "--deny"])
        let browser = FakeBrowser(), lines = LineRecorder()
        do {
            _ = try await flow(browser: browser, lines: lines).login(AuthLoginOptions(service: .custom, host: server.base, timeout: 20))
            XCTFail("expected a denial")
        } catch let error as AuthError {
            XCTAssertEqual(error, .accessDenied)
            XCTAssertEqual(error.reason, "you denied access: Evernote did not authorize enlog")
        }
        let deniedPage = await browser.page()
        XCTAssertTrue(deniedPage.contains("denied"))
    }

    func testLoginTimesOutWhenNobodyAuthorizes() async throws {
        let server = try start(["--mode", "oauth2", "--issue-token", "TOK"])
        let lines = LineRecorder()
        let authFlow = AuthFlow(transport: HTTPClient(), environment: [:], printLine: { lines.append($0) },
                                openBrowser: { _ in XCTFail("no display: the browser must not be opened") },
                                pastedLines: { nil })
        do {
            _ = try await authFlow.login(AuthLoginOptions(service: .custom, host: server.base, timeout: 0.5))
            XCTFail("expected a timeout")
        } catch let error as AuthError {
            guard case .callbackTimedOut = error else { return XCTFail("\(error)") }
        }
    }

    func waitForLine(_ lines: LineRecorder, _ match: (String) -> Bool) async throws -> String? {
        try await waitUntil("a printed line matches") { lines.lines.contains(where: match) }
        return lines.lines.first(where: match)
    }
}

/// Lines for the injected paste reader.
actor PasteQueue {
    private var queue = [String]()
    private var waiters = [CheckedContinuation<String?, Never>]()

    func push(_ line: String) {
        if waiters.isEmpty { queue.append(line) } else { waiters.removeFirst().resume(returning: line) }
    }

    func next() async -> String? {
        if !queue.isEmpty { return queue.removeFirst() }
        return await withCheckedContinuation { waiters.append($0) }
    }
}
