import ArgumentParser
import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Auth
import Capture
import Compose
import Outbox
import Diary
import Sync
import Watch
import CoreCommands

struct Auth: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "auth",
        abstract: "Sign in to Evernote (OAuth; never a password), check or forget the account.",
        discussion: """
            Evernote in 2026: the one way into its API is OAuth 2.0 with PKCE at \
            accounts.evernote.com, which `auth login` uses; Evernote may refuse it for plans \
            without API access (exit 77). It no longer issues API keys or developer tokens, and \
            its OAuth 1.0a endpoint and its sandbox are gone. OAuth 1.0a and `auth token` remain \
            for services that still issue keys and tokens (Yinxiang, EDAM-compatible hosts) and \
            for a token you already hold. Without API access, `enlog export --enex FILE --new` \
            writes the notes as a file any Evernote client imports (docs/export.md).

            Examples:
              enlog auth login                  Evernote, OAuth 2.0 in a browser
              enlog auth login --no-browser     over SSH: paste where the browser ends
              enlog auth login --service yinxiang
              ENLOG_TOKEN=S=s1:... enlog auth token --service yinxiang
              enlog auth status --json
              enlog auth logout
            """,
        subcommands: [Login.self, Token.self, Status.self, Logout.self]
    )

    struct ServiceOptions: ParsableArguments {
        @Option(help: "evernote (OAuth 2.0), yinxiang (OAuth 1.0a), or custom with --host (OAuth 2.0, else 1.0a).")
        var service: ServiceKind = .evernote

        @Option(help: ArgumentHelp("Base URL of a custom service (http:// only for loopback).", valueName: "url"))
        var host: String?

        func validate() throws {
            if host != nil && service != .custom { throw ValidationError("--host goes with --service custom") }
        }
    }

    struct Login: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "login",
            abstract: "Authorize enlog in a browser; the URL is printed so it also works over SSH.",
            discussion: """
                Refused by the authorization server (discovery or client registration, as for \
                Evernote plans without API access): one line saying so, exit 77.

                Examples:
                  enlog auth login
                  enlog auth login --service yinxiang
                  enlog auth login --service custom --host https://en.example.org
                """)
        @OptionGroup var global: GlobalOptions
        @OptionGroup var service: ServiceOptions
        @Flag(help: "Do not open a browser; paste the address the browser ends on instead.") var noBrowser = false
        // Optional, so help shows the default once, in words (not "300.0", not "0").
        @Option(help: ArgumentHelp("Seconds to wait for the authorization (default 300).", valueName: "seconds")) var timeout: Double?
        @Option(help: ArgumentHelp("Loopback port for the redirect (default: any free port).", valueName: "port")) var port: UInt16?
        @Flag(help: "Sign OAuth 1.0a requests with PLAINTEXT instead of HMAC-SHA1.") var plaintext = false

        func validate() throws {
            try NumericRange.authorizationSeconds.check(timeout, flag: "--timeout")
        }

        func run() async throws {
            let config = try global.loadConfig()
            let flow = AuthFlow(transport: Account.client(config), printLine: { Terminal.standardError($0) })
            let consumer = AuthFlow.consumer(environment: ProcessInfo.processInfo.environment,
                                             key: config.string(.consumerKey), secret: config.string(.consumerSecret))
            let credentials = try await flow.login(AuthLoginOptions(
                service: service.service, host: service.host, consumer: consumer,
                signatureMethod: plaintext ? .plaintext : .hmacSHA1, noBrowser: noBrowser,
                callbackPort: port ?? 0, timeout: timeout ?? 300))
            try await Account.store(credentials, config: config)
        }
    }

    struct Token: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "token",
            abstract: "Store a token obtained elsewhere (a developer token), after checking it works.",
            discussion: """
                For a token you already hold, or one a service still issues (Yinxiang, an \
                EDAM-compatible host): Evernote issues no new developer tokens since July 2026.

                Examples:
                  ENLOG_TOKEN=S=s1:... enlog auth token --service yinxiang
                  enlog auth token --service evernote --token "$(pass evernote/token)"
                """)
        @OptionGroup var global: GlobalOptions
        @OptionGroup var service: ServiceOptions
        @Option(help: "The token (default: $ENLOG_TOKEN, which keeps it out of shell history).") var token: String?
        @Option(help: ArgumentHelp("NoteStore URL (default: asked from the service).", valueName: "url")) var noteStoreUrl: String?

        func run() async throws {
            guard let token = token ?? ProcessInfo.processInfo.environment["ENLOG_TOKEN"], !token.isEmpty else {
                throw ValidationError("give --token TOKEN or set ENLOG_TOKEN")
            }
            let resolved = try AuthService.resolve(service.service, host: service.host)
            let credentials = Credentials(service: service.service, host: resolved.baseURL, authProtocol: .token,
                                          noteStoreUrl: noteStoreUrl, token: token)
            try await Account.store(credentials, config: try global.loadConfig())
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "status",
            abstract: "Show the account and when its token expires; never the token.",
            discussion: """
                Exit 0 when signed in, 77 when not; --json answers {"signedIn": false, ...} then too.

                Examples:
                  enlog auth status
                  enlog auth status --json
                """)
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let store = Account.credentialStore()
            guard let credentials = try store.loadIfPresent() else {
                if json {
                    // Answer in JSON on stdout, the message on stderr, and the usual exit code.
                    try Terminal.standardOutput(try AccountReport.signedOutJSON(credentialsFile: store.path))
                    let error = AuthError.credentialsMissing(path: store.path)
                    Terminal.standardError("enlog: error: \(error.reason) (\(error.recoverySuggestion ?? ""))")
                    throw ExitStatus.of(error).exitCode
                }
                throw AuthError.credentialsMissing(path: store.path)
            }
            try Terminal.standardOutput(json ? try AccountReport.json(credentials) : credentials.redacted())
        }
    }

    struct Logout: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "logout",
            abstract: "Forget the stored credentials.",
            discussion: """
                Examples:
                  enlog auth logout
                """)
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let store = Account.credentialStore()
            try Terminal.standardOutput(try store.delete() ? "signed out (removed \(TerminalText.escaped(store.path)))" : "not signed in")
        }
    }
}

extension ServiceKind: ExpressibleByArgument {
    /// Help and completions offer only services that exist; `sandbox` still parses, to say it is gone.
    package static var allValueStrings: [String] { allCases.filter { $0 != .sandbox }.map(\.rawValue) }
}

/// What the auth commands share: where credentials live, and checking them before storing.
enum Account {
    static func credentialStore() -> CredentialStore {
        CredentialStore(path: CredentialStore.defaultPath())
    }

    /// The HTTP client for the account's calls, with the network settings (CA file, timeout).
    static func client(_ config: Config) -> HTTPClient {
        HTTPClient(configuration: HTTPConfiguration(config: config))
    }

    static func store(_ credentials: Credentials, config: Config) async throws {
        let account = try await EvernoteAccount(credentials: credentials, http: client(config)).verified()
        let store = credentialStore()
        try store.save(account.credentials)
        let who = account.credentials.userName ?? account.credentials.userId.map { "user \($0)" } ?? "your account"
        try Terminal.standardOutput("signed in as \(who) on \(account.credentials.service.rawValue) (\(account.credentials.host)); credentials in \(TerminalText.escaped(store.path))")
        // A new sign-in starts afresh: a rate-limit wait imposed on the old one is not kept.
        do {
            let outbox = try OutboxStore(path: config.string(.database)!, access: .change)
            if let until = try await outbox.liftRateLimitHold() {
                try Terminal.standardOutput("the wait for Evernote's rate limit (until \(InstantText.string(until))) is lifted")
            }
        } catch OutboxError.missing(_) {
            // No outbox yet: nothing waits.
        } catch {
            Terminal.standardError("enlog: warning: signed in, but the rate-limit wait could not be lifted: \(error)")
        }
    }

    static func signedIn(_ config: Config) async throws -> EvernoteAccount {
        try await EvernoteAccount.signedIn(store: credentialStore(),
                                           flow: AuthFlow(transport: client(config), printLine: { Terminal.standardError($0) }))
    }
}

struct Notebooks: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notebooks",
        abstract: "List the account's notebooks.",
        discussion: """
            Examples:
              enlog notebooks
              enlog notebooks --json
            """)
    @OptionGroup var global: GlobalOptions
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        let notebooks = try await Account.signedIn(try global.loadConfig()).noteStore().listNotebooks()
            .sorted { ($0.name ?? "").localizedCaseInsensitiveCompare($1.name ?? "") == .orderedAscending }
        if json {
            try Terminal.standardOutput(try AccountReport.json(notebooks))
        } else {
            for notebook in notebooks {
                let mark = notebook.defaultNotebook == true ? "  (default)" : ""
                try Terminal.standardOutput("\(notebook.name ?? "?")\(notebook.stack.map { "  [\($0)]" } ?? "")\(mark)")
            }
        }
    }
}
