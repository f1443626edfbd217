import Foundation
import XCTest
@testable import Network
@testable import Auth

/// `enlog auth …` and `enlog notebooks` as a user runs them on a machine without a browser:
/// the real binary, the official SDK's server behind an oauthlib-checked OAuth server.
final class AuthCommandTests: XCTestCase {
    static let token = "S=s1:U=1:E=19c3a1b2c3d:C=18c3a1b2c3d:P=1cd:A=enlog-test:V=2:H=abcdef"
    var home: EnlogHome!
    var evernote: PythonServer!

    override func setUpWithError() throws {
        home = try EnlogHome()
        // The OAuth 2.0 test server derives a fresh classic token per issue (`…:R=n`).
        let tokens = [Self.token] + (2...4).map { "\(Self.token):R=\($0)" }
        evernote = try PythonServer(script: "evernote_server.py", arguments: tokens.flatMap { ["--token", $0] })
    }

    override func tearDown() {
        evernote?.stop()
    }

    /// Runs `enlog auth login --no-browser`, plays the browser with the URL it prints, and pastes
    /// the address the browser ends on, as a user on an SSH session would.
    func login(host: String, extraEnvironment: [String: String] = [:]) async throws -> ProcessResult {
        let standardOutput = home.directory.path("login.out")
        let child = try ChildProcess(Subprocess.enlog,
                                     ["auth", "login", "--service", "custom", "--host", host, "--no-browser", "--timeout", "30"],
                                     environment: home.environment.merging(extraEnvironment) { $1 }.map { "\($0)=\($1)" },
                                     standardInputPipe: true, standardOutputFile: standardOutput)
        // The pipe carries stderr alone (stdout is in the file); whole lines only, so a URL is
        // never taken while half of it is still on its way.
        func authorizationURL(in printed: String) -> String? {
            printed.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
                .first { $0.hasPrefix("http://") || $0.hasPrefix("https://") }
        }
        _ = child.waitForOutput { authorizationURL(in: $0) != nil }
        let url = try XCTUnwrap(authorizationURL(in: child.output), "no authorization URL on a line of its own in: \(child.output)")
        let approval = try await HTTPClient().send(HTTPRequest(url: url))
        XCTAssertEqual(approval.status, 302)
        let redirect = try XCTUnwrap(approval.headers["location"])
        try child.writeStandardInput(Data((redirect + "\n").utf8))
        child.closeStandardInput()
        let (status, printed) = child.finish()
        return ProcessResult(status: status,
                             standardOutput: String(decoding: try Data(contentsOf: URL(fileURLWithPath: standardOutput)), as: UTF8.self),
                             standardError: printed)
    }

    func assertSignedInAndPrivate(_ result: ProcessResult, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(result.status, 0, result.standardError, file: file, line: line)
        XCTAssertTrue(result.standardOutput.contains("signed in as tester1"), result.standardOutput, file: file, line: line)
        XCTAssertFalse((result.standardOutput + result.standardError).contains(Self.token), "token printed", file: file, line: line)
        let credentials = home.directory.path("config/enlog/credentials.json")
        let attributes = try FileManager.default.attributesOfItem(atPath: credentials)
        XCTAssertEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o600, file: file, line: line)
        let status = try home.run("auth", "status")
        XCTAssertEqual(status.status, 0, file: file, line: line)
        XCTAssertFalse(status.standardOutput.contains(Self.token), file: file, line: line)
        let notebooks = try home.run("notebooks", "--json")
        XCTAssertEqual(notebooks.status, 0, notebooks.standardError, file: file, line: line)
        XCTAssertTrue(notebooks.standardOutput.contains("\"isDefault\" : true"), notebooks.standardOutput, file: file, line: line)
    }

    func testOAuth1LoginWithAPastedRedirectThenNotebooks() async throws {
        let oauth = try PythonServer(script: "oauth_server.py", arguments: [
            "--mode", "oauth1", "--consumer-key", "enlog-test", "--consumer-secret", "s3cret",
            "--issue-token", Self.token, "--note-store-url", evernote.baseURL + "/shard/s1/notestore",
            "--edam-url", evernote.baseURL])
        defer { oauth.stop() }
        let result = try await login(host: oauth.baseURL,
                                     extraEnvironment: ["ENLOG_CONSUMER_KEY": "enlog-test", "ENLOG_CONSUMER_SECRET": "s3cret"])
        try assertSignedInAndPrivate(result)
        XCTAssertFalse(result.standardError.contains("s3cret"), "secret printed")
    }

    func testOAuth2PKCELoginThenNotebooks() async throws {
        let oauth = try PythonServer(script: "oauth_server.py", arguments: [
            "--mode", "oauth2", "--issue-token", Self.token, "--edam-url", evernote.baseURL])
        defer { oauth.stop() }
        try assertSignedInAndPrivate(try await login(host: oauth.baseURL))
        let status = try home.run("auth", "status", "--json")
        XCTAssertTrue(status.standardOutput.contains("\"refreshable\" : true"), status.standardOutput)
    }

    func testDeniedAccessIsAClearError() async throws {
        let oauth = try PythonServer(script: "oauth_server.py", arguments: [
            "--mode", "oauth2", "--issue-token", Self.token, "--edam-url", evernote.baseURL, "--deny"])
        defer { oauth.stop() }
        let result = try await login(host: oauth.baseURL)
        XCTAssertEqual(result.status, 77, result.standardError)
        XCTAssertTrue(result.standardError.contains("denied"), result.standardError)
        XCTAssertFalse(FileManager.default.fileExists(atPath: home.directory.path("config/enlog/credentials.json")))
    }

    /// Evernote in 2026 admits apps only by OAuth 2.0, and may refuse the client registration
    /// (or the discovery) for a plan without API access: one line says what happened and names
    /// the way that needs no API access; exit 77; nothing is stored.
    func testARefusedRegistrationOrDiscoveryIsOneLineNamingTheExport() throws {
        for (refusal, expected) in [(["--refuse-registration", "403"], "refused enlog's client registration (HTTP 403: unapproved_software_statement)"),
                                    (["--refuse-registration", "400"], "refused enlog's client registration (HTTP 400: unapproved_software_statement)"),
                                    (["--refuse-discovery", "401"], "refused enlog's authorization-server discovery (HTTP 401: access_denied)")] {
            let oauth = try PythonServer(script: "oauth_server.py", arguments: [
                "--mode", "oauth2", "--issue-token", Self.token, "--edam-url", evernote.baseURL] + refusal)
            defer { oauth.stop() }
            let result = try home.run("auth", "login", "--service", "custom", "--host", oauth.baseURL, "--no-browser", "--timeout", "30")
            XCTAssertEqual(result.status, 77, result.standardError)
            XCTAssertEqual(result.standardErrorLines.count, 1, result.standardError)
            XCTAssertTrue(result.standardError.hasPrefix("enlog: error: 127.0.0.1 \(expected)"), result.standardError)
            XCTAssertTrue(result.standardError.contains("`enlog export --enex FILE --new`"), result.standardError)
            XCTAssertFalse(FileManager.default.fileExists(atPath: home.directory.path("config/enlog/credentials.json")))
        }
    }

    /// Evernote's sandbox is gone: asking for it says so, and help offers it no more.
    func testTheSandboxIsGoneAndHelpTellsThe2026Facts() throws {
        for command in [["auth", "login", "--service", "sandbox"], ["auth", "token", "--service", "sandbox", "--token", "T"]] {
            let result = try home.run(command)
            XCTAssertEqual(result.status, 2, result.standardError)
            XCTAssertEqual(result.standardErrorLines.count, 1, result.standardError)
            XCTAssertTrue(result.standardError.contains("sandbox (sandbox.evernote.com) is gone"), result.standardError)
        }
        let help = try home.run("auth", "--help").standardOutput + (try home.run("auth", "login", "--help").standardOutput)
            + (try home.run("auth", "token", "--help").standardOutput)
        for fact in ["OAuth 2.0 with PKCE at accounts.evernote.com", "no longer issues API keys or developer tokens",
                     "OAuth 1.0a endpoint and its sandbox are gone", "enlog export --enex FILE --new", "exit 77"] {
            XCTAssertTrue(help.replacingOccurrences(of: "\n", with: " ").replacing(/\s+/, with: " ").contains(fact), "help lacks: \(fact)\n\(help)")
        }
        XCTAssertFalse(help.contains("sandbox,") || help.contains("--service sandbox"), help)
    }

    func testTokenIsCheckedBeforeItIsStored() throws {
        var home = self.home!
        home.extraEnvironment["ENLOG_TOKEN"] = "S=s1:U=1:bogus"
        let rejected = try home.run("auth", "token", "--service", "custom", "--host", evernote.baseURL)
        XCTAssertEqual(rejected.status, 77, rejected.standardError)
        XCTAssertEqual(rejected.standardErrorLines.count, 1)
        XCTAssertFalse(rejected.standardError.contains("bogus"))
        XCTAssertEqual(try home.run("notebooks").status, 77, "not signed in")
        home.extraEnvironment["ENLOG_TOKEN"] = Self.token
        XCTAssertEqual(try home.run("auth", "token", "--service", "custom", "--host", evernote.baseURL).status, 0)
        XCTAssertEqual(try home.run("notebooks").standardOutput, "First Notebook  (default)\n")
        XCTAssertEqual(try home.run("auth", "logout").status, 0)
        XCTAssertEqual(try home.run("notebooks").status, 77)
    }

    func testAWorldReadableCredentialsFileIsRefused() throws {
        var home = self.home!
        home.extraEnvironment["ENLOG_TOKEN"] = Self.token
        XCTAssertEqual(try home.run("auth", "token", "--service", "custom", "--host", evernote.baseURL).status, 0)
        let path = home.directory.path("config/enlog/credentials.json")
        chmod(path, 0o644)
        let refused = try home.run("notebooks")
        XCTAssertEqual(refused.status, 77)
        XCTAssertTrue(refused.standardError.contains("chmod 600 \(path)"), refused.standardError)
    }

    func testPlainHTTPToARemoteHostIsRefused() throws {
        let result = try home.run("auth", "login", "--service", "custom", "--host", "http://192.0.2.7:8080", "--no-browser")
        XCTAssertEqual(result.status, 2, result.standardError)
        XCTAssertTrue(result.standardError.contains("http://"), result.standardError)
    }
}

/// Issue 20, defect 16: a plain-http NoteStore URL (from the sign-in's `edam_noteStoreUrl`, or
/// given) is refused at sign-in in one line, and nothing is stored; loopback stays allowed.
extension AuthCommandTests {
    /// TEST-NET-2: never contacted, the URL is refused before any use.
    static let remoteHTTP = "http://198.51.100.7/shard/s1/notestore"

    func testAPlainHTTPNoteStoreURLIsRefusedAtSignIn() async throws {
        let oauth = try PythonServer(script: "oauth_server.py", arguments: [
            "--mode", "oauth1", "--consumer-key", "enlog-test", "--consumer-secret", "s3cret",
            "--issue-token", Self.token, "--note-store-url", Self.remoteHTTP, "--edam-url", evernote.baseURL])
        defer { oauth.stop() }
        let login = try await login(host: oauth.baseURL,
                                    extraEnvironment: ["ENLOG_CONSUMER_KEY": "enlog-test", "ENLOG_CONSUMER_SECRET": "s3cret"])
        var home = self.home!
        home.extraEnvironment["ENLOG_TOKEN"] = Self.token
        let token = try home.run("auth", "token", "--service", "custom", "--host", evernote.baseURL, "--note-store-url", Self.remoteHTTP)
        for (how, result) in [("auth login", login), ("auth token", token)] {
            XCTAssertEqual(result.status, 76, "\(how): \(result.standardError)")
            let errors = result.standardError.split(separator: "\n").filter { $0.hasPrefix("enlog: error:") }
            XCTAssertEqual(errors.count, 1, "\(how): \(result.standardError)")
            XCTAssertTrue(result.standardError.contains("refusing the NoteStore URL http://198.51.100.7"), "\(how): \(result.standardError)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: self.home.directory.path("config/enlog/credentials.json")), how)
        }
        let loopback = try home.run("auth", "token", "--service", "custom", "--host", evernote.baseURL,
                                    "--note-store-url", evernote.baseURL + "/shard/s1/notestore")
        XCTAssertEqual(loopback.status, 0, loopback.standardError)
    }
}

/// A token given with `auth token` carries its expiry in its `E=` field (hex milliseconds):
/// `auth status` says when, not "unknown".
extension AuthCommandTests {
    func testAuthStatusReadsTheExpiryInTheTokensOwnField() throws {
        var home = self.home!
        home.extraEnvironment["ENLOG_TOKEN"] = Self.token   // E=19c3a1b2c3d: 2026-02-07T21:56:25.277Z
        let signIn = try home.run("auth", "token", "--service", "custom", "--host", evernote.baseURL)
        XCTAssertEqual(signIn.status, 0, signIn.standardError)
        let status = try home.run("auth", "status")
        XCTAssertTrue(status.standardOutput.contains("token: present (hidden), expires 2026-02-07T21:56:25Z"), status.standardOutput)
        let json = try home.run("auth", "status", "--json")
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        XCTAssertEqual(object["tokenExpires"] as? String, "2026-02-07T21:56:25Z", json.standardOutput)
    }
}
