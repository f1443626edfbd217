import Foundation
import Support
import EvernoteAPI
import Configuration
import Network

/// What the auth code needs from the HTTP client; `HTTPClient` conforms, tests may inject fakes.
package protocol AuthHTTPTransport: Sendable {
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
}

extension HTTPClient: AuthHTTPTransport {}

/// Which Evernote-compatible service to log in to.
package enum ServiceKind: String, Sendable, Codable, CaseIterable {
    case evernote
    case sandbox
    case yinxiang
    case custom
}

/// How the stored token was obtained: one of the two login protocols, or given as is.
package enum AuthProtocolKind: String, Sendable, Codable {
    case oauth1 = "oauth1"
    case oauth2 = "oauth2"
    /// A developer token or any raw token (`enlog auth token`).
    case token = "token"

    package var displayName: String {
        switch self {
        case .oauth1: return "OAuth 1.0a"
        case .oauth2: return "OAuth 2.0 + PKCE"
        case .token: return "token given by hand"
        }
    }
}

/// A resolved service: where its EDAM API lives and where to look for an OAuth 2.0 authorization server.
package struct AuthService: Sendable, Equatable {
    package var kind: ServiceKind
    /// `scheme://host[:port]`, no trailing slash: base of `/oauth`, `/OAuth.action`, `/edam/…`.
    package var baseURL: String
    /// Where RFC 8414 discovery is tried; nil = OAuth 1.0a only.
    package var authorizationServerURL: String?
    /// When discovery on `authorizationServerURL` answers 404, fall back to OAuth 1.0a (custom hosts).
    package var fallsBackToOAuth1: Bool

    package static let evernote = AuthService(kind: .evernote, baseURL: "https://www.evernote.com",
                                             authorizationServerURL: "https://accounts.evernote.com", fallsBackToOAuth1: false)
    package static let yinxiang = AuthService(kind: .yinxiang, baseURL: "https://app.yinxiang.com",
                                             authorizationServerURL: nil, fallsBackToOAuth1: true)

    /// Resolves `--service` / `--host`. `custom` needs `host`; `http://` is only allowed for loopback hosts.
    package static func resolve(_ kind: ServiceKind, host: String? = nil) throws -> AuthService {
        switch kind {
        case .evernote: return .evernote
        case .sandbox:
            // Kept as a name so that credentials stored for it still read; nothing answers there.
            throw AuthError.serviceRetired("Evernote's sandbox (sandbox.evernote.com) is gone: there is nothing to sign in to")
        case .yinxiang: return .yinxiang
        case .custom:
            guard let host, !host.isEmpty else {
                throw AuthError.invalidHost("the custom service needs --host URL")
            }
            let origin = try validatedOrigin(host)
            return AuthService(kind: .custom, baseURL: origin, authorizationServerURL: origin, fallsBackToOAuth1: true)
        }
    }

    /// Checks a host URL and reduces it to its origin.
    package static func validatedOrigin(_ string: String) throws -> String {
        guard let url = AuthURL(string) else {
            throw AuthError.invalidHost("\(string) is not an http(s) URL")
        }
        if url.scheme == "http" && !url.isLoopback {
            throw AuthError.invalidHost("http:// is only allowed for loopback hosts, not \(url.host)")
        }
        guard url.path == "/" || url.path.isEmpty, url.query == nil else {
            throw AuthError.invalidHost("\(string) must be a bare scheme://host[:port]")
        }
        return url.origin
    }

    /// The protocol a login uses, with what it needs to run.
    package enum LoginProtocol: Sendable {
        case oauth1
        /// OAuth 2.0, with the authorization server's published metadata.
        case oauth2(OAuth2ServerMetadata)
    }

    /// Decides the protocol: OAuth 2.0 when the authorization server publishes
    /// `/.well-known/oauth-authorization-server`, else OAuth 1.0a (custom hosts fall back on 404).
    package func detectProtocol(transport: AuthHTTPTransport) async throws -> LoginProtocol {
        guard let authorizationServerURL else { return .oauth1 }
        if let metadata = try await OAuth2.discover(issuer: authorizationServerURL, transport: transport) {
            return .oauth2(metadata)
        }
        if fallsBackToOAuth1 { return .oauth1 }
        // Evernote's one way in is OAuth 2.0: no metadata there means no way in for enlog.
        throw AuthError.apiAccessRefused(host: AuthURL(authorizationServerURL)?.host ?? authorizationServerURL,
                                         step: "authorization-server discovery", status: 404,
                                         detail: "no OAuth 2.0 metadata")
    }
}
