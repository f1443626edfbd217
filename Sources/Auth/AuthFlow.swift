import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import Support
import EvernoteAPI
import Configuration
import Network

/// Options of `enlog auth login`.
package struct AuthLoginOptions: Sendable {
    package var service: ServiceKind
    /// `--host URL`, required for `custom`.
    package var host: String?
    /// OAuth 1.0a consumer (config or ENLOG_CONSUMER_KEY/SECRET); see `AuthFlow.consumer(environment:key:secret:)`.
    package var consumer: OAuth1Consumer?
    package var signatureMethod: OAuth1SignatureMethod
    /// Authorization header (default) or query string for the OAuth 1.0a protocol parameters.
    package var oauth1Placement: OAuth1ParameterPlacement
    /// `--no-browser`: never run xdg-open; wait for the callback or a pasted redirect URL.
    package var noBrowser: Bool
    /// Loopback callback port (0 = ephemeral).
    package var callbackPort: UInt16
    /// How long to wait for the authorization, in seconds.
    package var timeout: TimeInterval
    package var clientName: String

    package init(service: ServiceKind, host: String? = nil, consumer: OAuth1Consumer? = nil,
                signatureMethod: OAuth1SignatureMethod = .hmacSHA1, oauth1Placement: OAuth1ParameterPlacement = .header,
                noBrowser: Bool = false, callbackPort: UInt16 = 0, timeout: TimeInterval = 300, clientName: String = "enlog") {
        self.oauth1Placement = oauth1Placement
        self.service = service
        self.host = host
        self.consumer = consumer
        self.signatureMethod = signatureMethod
        self.noBrowser = noBrowser
        self.callbackPort = callbackPort
        self.timeout = timeout
        self.clientName = clientName
    }
}

/// The interactive login and the token refresh, for `enlog auth login` and every command that needs a token.
package struct AuthFlow: Sendable {
    package var transport: AuthHTTPTransport
    package var environment: [String: String]
    /// Where user-facing lines go (the CLI passes a stderr printer). Never receives a token or secret.
    package var printLine: @Sendable (String) -> Void
    /// Opens a URL in the user's browser; failures are ignored. Default: `xdg-open URL`.
    package var openBrowser: @Sendable (String) -> Void
    /// Supplies lines the user pastes (headless logins); nil at end of input. Default: stdin.
    package var pastedLines: @Sendable () async -> String?
    /// Whether to offer the paste fallback even when a browser could be opened.
    package var alwaysOfferPaste: Bool = false

    package init(transport: AuthHTTPTransport = HTTPClient(),
                environment: [String: String] = ProcessInfo.processInfo.environment,
                printLine: @escaping @Sendable (String) -> Void,
                openBrowser: @escaping @Sendable (String) -> Void = AuthFlow.xdgOpen,
                pastedLines: (@Sendable () async -> String?)? = nil) {
        self.transport = transport
        self.environment = environment
        self.printLine = printLine
        self.openBrowser = openBrowser
        let stdin = StdinLineReader()
        self.pastedLines = pastedLines ?? { await stdin.nextLine() }
    }

    /// The consumer from explicit values (config) or ENLOG_CONSUMER_KEY / ENLOG_CONSUMER_SECRET.
    package static func consumer(environment: [String: String], key: String? = nil, secret: String? = nil) -> OAuth1Consumer? {
        let key = key ?? environment["ENLOG_CONSUMER_KEY"]
        let secret = secret ?? environment["ENLOG_CONSUMER_SECRET"]
        guard let key, !key.isEmpty, let secret else { return nil }
        return OAuth1Consumer(key: key, secret: secret)
    }

    package var hasDisplay: Bool {
        !(environment["DISPLAY"] ?? "").isEmpty || !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty
    }

    /// Runs the whole login and returns credentials for `CredentialStore.save`.
    package func login(_ options: AuthLoginOptions) async throws -> Credentials {
        let service = try AuthService.resolve(options.service, host: options.host)
        switch try await service.detectProtocol(transport: transport) {
        case .oauth1: return try await loginOAuth1(service: service, options: options)
        case .oauth2(let metadata): return try await loginOAuth2(service: service, metadata: metadata, options: options)
        }
    }

    func loginOAuth1(service: AuthService, options: AuthLoginOptions) async throws -> Credentials {
        guard let consumer = options.consumer else { throw AuthError.missingConsumerKey }
        let listener = try LoopbackCallbackListener(port: options.callbackPort)
        defer { listener.close() }
        let client = OAuth1Client(baseURL: service.baseURL, consumer: consumer, signatureMethod: options.signatureMethod,
                                  placement: options.oauth1Placement, transport: transport)
        let temporary = try await client.requestTemporaryCredentials(callback: listener.redirectURI)
        let expected = temporary.token
        let callback = try await authorize(url: client.authorizationURL(for: temporary), listener: listener, options: options) {
            OAuth1.classifyCallback($0, expectedToken: expected)
        }
        let verifier = try OAuth1.verifier(from: callback, expectedToken: expected)
        let token = try await client.exchange(temporary, verifier: verifier)
        return Credentials(service: service.kind, host: service.baseURL, authProtocol: .oauth1, userId: token.userId,
                           shard: token.shard, noteStoreUrl: token.noteStoreUrl, webApiUrlPrefix: token.webApiUrlPrefix,
                           token: token.token, tokenExpires: token.expires)
    }

    func loginOAuth2(service: AuthService, metadata: OAuth2ServerMetadata, options: AuthLoginOptions) async throws -> Credentials {
        let listener = try LoopbackCallbackListener(port: options.callbackPort)
        defer { listener.close() }
        let clientId = try await OAuth2.register(metadata: metadata, redirectURI: listener.redirectURI,
                                                 clientName: options.clientName, transport: transport)
        let pkce = PKCE.generate()
        let state = AuthEncoding.randomToken()
        let url = OAuth2.authorizationURL(metadata: metadata, clientId: clientId, redirectURI: listener.redirectURI,
                                          state: state, pkce: pkce)
        let callback = try await authorize(url: url, listener: listener, options: options) {
            OAuth2.classifyCallback($0, expectedState: state)
        }
        let code = try OAuth2.code(from: callback, expectedState: state)
        let tokens = try await OAuth2.exchange(code: code, pkce: pkce, clientId: clientId, redirectURI: listener.redirectURI,
                                               tokenEndpoint: metadata.tokenEndpoint, transport: transport)
        return Self.credentials(service: service.kind, host: service.baseURL, tokens: tokens, clientId: clientId,
                                tokenEndpoint: metadata.tokenEndpoint, previous: nil)
    }

    static func credentials(service: ServiceKind, host: String, tokens: OAuth2TokenSet, clientId: String,
                            tokenEndpoint: String, previous: Credentials?) -> Credentials {
        let shard = tokens.classic.shard ?? previous?.shard
        return Credentials(
            service: service, host: host, authProtocol: .oauth2,
            userId: tokens.classic.userId ?? previous?.userId, userName: previous?.userName, shard: shard,
            noteStoreUrl: shard.map { "\(host)/edam/note/\($0)" } ?? previous?.noteStoreUrl,
            webApiUrlPrefix: shard.map { "\(host)/shard/\($0)/" } ?? previous?.webApiUrlPrefix,
            token: tokens.evernoteToken, tokenExpires: tokens.classic.expires,
            accessToken: tokens.accessToken, accessTokenExpires: tokens.accessTokenExpires,
            refreshToken: tokens.refreshToken ?? previous?.refreshToken,
            refreshTokenExpires: tokens.refreshToken == nil ? previous?.refreshTokenExpires : tokens.refreshTokenExpires,
            clientId: clientId, tokenEndpoint: tokenEndpoint)
    }

    /// Shows the URL, opens the browser when possible, and waits for the callback or a pasted redirect URL.
    func authorize(url: String, listener: LoopbackCallbackListener, options: AuthLoginOptions,
                   classify: @escaping @Sendable (CallbackParameters) -> CallbackVerdict) async throws -> CallbackParameters {
        let browser = !options.noBrowser && hasDisplay
        printLine("Open this address in a browser to authorize enlog:")
        printLine(url)
        let offerPaste = options.noBrowser || !hasDisplay || alwaysOfferPaste
        if offerPaste {
            printLine("Waiting for the browser to return to \(listener.redirectURI). If that browser runs on another machine, "
                + "paste here the address it ends up on (it starts with http://127.0.0.1:\(listener.port)/).")
        } else {
            printLine("Waiting for the authorization (up to \(Int(options.timeout)) seconds)…")
        }
        if browser { openBrowser(url) }
        guard offerPaste else {
            return try await listener.waitForCallback(timeout: options.timeout, classify: classify)
        }
        let pasted = pastedLines
        let printLine = self.printLine
        let path = listener.path
        let timeout = options.timeout
        return try await withThrowingTaskGroup(of: CallbackParameters.self) { group in
            group.addTask { try await listener.waitForCallback(timeout: timeout, classify: classify) }
            group.addTask {
                while true {
                    guard let line = await pasted() else {
                        // End of input: leave it to the listener (and its timeout).
                        try await Task.sleep(nanoseconds: UInt64((timeout + 60) * 1e9))
                        throw CancellationError()
                    }
                    try Task.checkCancellation()
                    if line.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { continue }
                    do {
                        let parameters = try CallbackParameters.parsePastedURL(line, expectedPath: path)
                        switch classify(parameters) {
                        case .accept, .denied: return parameters
                        case .reject(let why): printLine("That address does not belong to this login (\(why)); paste the right one.")
                        }
                    } catch let error as AuthError {
                        printLine(error.reason)
                    }
                }
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }

    /// OAuth 2.0 credentials whose access token or classic token expires within 15 minutes (or has expired).
    package static func needsRefresh(_ credentials: Credentials, now: Date = Date()) -> Bool {
        guard credentials.authProtocol == .oauth2 else { return false }
        let limit = now.addingTimeInterval(OAuth2.refreshMargin)
        return [credentials.accessTokenExpires, credentials.tokenExpires].contains { $0.map { $0 <= limit } ?? false }
    }

    /// Refreshes OAuth 2.0 credentials when `needsRefresh`; returns them unchanged otherwise.
    /// The caller saves the result when it differs.
    package func refreshIfNeeded(_ credentials: Credentials, now: Date = Date()) async throws -> Credentials {
        guard Self.needsRefresh(credentials, now: now) else { return credentials }
        return try await refresh(credentials, now: now)
    }

    /// Unconditional refresh (`grant_type=refresh_token`).
    package func refresh(_ credentials: Credentials, now: Date = Date()) async throws -> Credentials {
        guard credentials.authProtocol == .oauth2 else {
            throw AuthError.refreshImpossible("OAuth 1.0a tokens cannot be refreshed")
        }
        guard let refreshToken = credentials.refreshToken, let clientId = credentials.clientId,
              let tokenEndpoint = credentials.tokenEndpoint else {
            throw AuthError.refreshImpossible("no refresh token is stored")
        }
        if let expiry = credentials.refreshTokenExpires, expiry <= now {
            throw AuthError.refreshImpossible("the refresh token expired")
        }
        let tokens: OAuth2TokenSet
        do {
            tokens = try await OAuth2.refresh(refreshToken: refreshToken, clientId: clientId, tokenEndpoint: tokenEndpoint,
                                              transport: transport, now: now)
        } catch AuthError.serverRejected(_, let status, let detail) where status == 400 || status == 401 {
            throw AuthError.refreshImpossible("the server refused the refresh token" + (detail.map { " (\($0))" } ?? ""))
        }
        return Self.credentials(service: credentials.service, host: credentials.host, tokens: tokens, clientId: clientId,
                                tokenEndpoint: tokenEndpoint, previous: credentials)
    }

    /// `xdg-open URL`, detached, output discarded; any failure is ignored.
    package static let xdgOpen: @Sendable (String) -> Void = { url in
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["xdg-open", url]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
            Thread.detachNewThread { process.waitUntilExit() }
        } catch {}
    }
}

/// Reads lines from standard input without blocking a cooperative thread; cancellable.
final class StdinLineReader: Sendable {
    /// Bytes read past the last line returned; one reader at a time holds them.
    private struct Pending {
        var buffer = [UInt8]()
        var atEOF = false
    }

    private let pending = Mutex(Pending())

    func nextLine() async -> String? {
        // The read polls the flag between short waits, so cancelling needs no wake-up of its own.
        await BlockingCall.run("enlog.stdin") { cancellation in
            self.pending.withLock { Self.readLine(&$0, cancellation) }
        }
    }

    private static func readLine(_ pending: inout Pending, _ cancellation: CancellationFlag) -> String? {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            if let newline = pending.buffer.firstIndex(of: 10) {
                let line = String(decoding: pending.buffer[..<newline], as: UTF8.self)
                pending.buffer.removeSubrange(...newline)
                return line
            }
            if pending.atEOF {
                if pending.buffer.isEmpty { return nil }
                defer { pending.buffer.removeAll() }
                return String(decoding: pending.buffer, as: UTF8.self)
            }
            if cancellation.isCancelled { return nil }
            var fds = [pollfd(fd: 0, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&fds, 1, 200)
            if ready <= 0 { continue }
            let count = read(0, &chunk, chunk.count)
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                pending.atEOF = true
            } else if count == 0 {
                pending.atEOF = true
            } else {
                pending.buffer.append(contentsOf: chunk[0..<count])
                if pending.buffer.count > 64 * 1024 { pending.buffer.removeAll() }
            }
        }
    }
}
