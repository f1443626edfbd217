import Foundation
import Support
import EvernoteAPI
import Configuration
import Network

/// A signed-in account: its credentials and the Thrift clients that use them.
package struct EvernoteAccount: Sendable {
    package private(set) var credentials: Credentials
    package let http: HTTPClient

    package init(credentials: Credentials, http: HTTPClient = HTTPClient()) {
        self.credentials = credentials
        self.http = http
    }

    package var userStore: UserStoreClient {
        UserStoreClient(transport: ThriftHTTPTransport(url: credentials.userStoreUrl, client: http),
                        authenticationToken: credentials.token)
    }

    package func noteStore() throws -> NoteStoreClient {
        guard let url = credentials.noteStoreUrl else { throw AuthError.credentialsMissing(path: "the NoteStore URL") }
        return NoteStoreClient(transport: ThriftHTTPTransport(url: url, client: http), authenticationToken: credentials.token)
    }

    /// The stored account, its OAuth 2.0 token refreshed first when it is about to expire (and
    /// the refreshed credentials saved).
    package static func signedIn(store: CredentialStore, flow: AuthFlow) async throws -> EvernoteAccount {
        let stored = try store.load()
        let current = try await flow.refreshIfNeeded(stored)
        if current != stored { try store.save(current) }
        return EvernoteAccount(credentials: current, http: flow.transport as? HTTPClient ?? HTTPClient())
    }

    /// Checks fresh credentials against the service before they are stored: the client version is
    /// accepted, the token works (`getUser`), and the NoteStore URL is known (`getUserUrls`).
    package func verified(clientName: String = "enlog/\(ENLogVersion.current); Linux") async throws -> EvernoteAccount {
        let users = userStore
        guard try await users.checkVersion(clientName: clientName) else { throw AuthError.clientTooOld }
        let user = try await users.getUser()
        var checked = credentials
        checked.userName = user.username ?? checked.userName
        if let id = user.id { checked.userId = Int(id) }
        if checked.shard == nil { checked.shard = user.shardId }
        if checked.noteStoreUrl == nil {
            checked.noteStoreUrl = try await users.getUserUrls().noteStoreUrl
        }
        // Refused now, in one line, rather than by every sync to come (while `reachability`
        // would call the service reachable).
        if let url = checked.noteStoreUrl {
            do {
                _ = try HTTPURLPolicy.check(url, resolve: [])
            } catch .insecureURL {
                throw AuthError.insecureNoteStore(HTTPURLPolicy.describe(url))
            } catch {
                throw AuthError.malformedResponse(step: "NoteStore URL", detail: error.reason)
            }
        }
        return EvernoteAccount(credentials: checked, http: http)
    }

    /// Which account a queued note belongs to: service, host and user, never the token.
    package var accountKey: String {
        "\(credentials.service.rawValue):\(credentials.host):\(credentials.userId.map(String.init) ?? credentials.userName ?? "?")"
    }
}

extension EvernoteAccount {
    /// The account signed in on this machine (the credentials at their default path), read
    /// offline; nil when nobody signed in or the file cannot be read.
    package static func stored() -> EvernoteAccount? {
        (try? CredentialStore(path: CredentialStore.defaultPath()).loadIfPresent()).flatMap { $0 }.map { EvernoteAccount(credentials: $0) }
    }
}
