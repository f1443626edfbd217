import Crypto
import Foundation
import Support
import EvernoteAPI
import Configuration
import Network

/// RFC 8414 authorization-server metadata (the fields enlog uses).
package struct OAuth2ServerMetadata: Sendable, Codable, Equatable {
    package var issuer: String?
    package var authorizationEndpoint: String
    package var tokenEndpoint: String
    package var registrationEndpoint: String?
    package var codeChallengeMethodsSupported: [String]?

    enum CodingKeys: String, CodingKey {
        case issuer
        case authorizationEndpoint = "authorization_endpoint"
        case tokenEndpoint = "token_endpoint"
        case registrationEndpoint = "registration_endpoint"
        case codeChallengeMethodsSupported = "code_challenge_methods_supported"
    }
}

/// RFC 7636 PKCE pair (S256).
package struct PKCE: Sendable {
    package var verifier: String
    package var challenge: String
    package var method: String { "S256" }

    /// A fresh verifier of `length` (43…128) unreserved characters from the CSPRNG.
    package static func generate(length: Int = 64) -> PKCE {
        let length = min(max(length, 43), 128)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8)
        var generator = SystemRandomNumberGenerator()
        let verifier = String(decoding: (0..<length).map { _ in alphabet.randomElement(using: &generator)! }, as: UTF8.self)
        return PKCE(verifier: verifier)
    }

    package init(verifier: String) {
        self.verifier = verifier
        self.challenge = PKCE.challenge(for: verifier)
    }

    /// base64url(SHA256(ASCII(verifier))) without padding.
    package static func challenge(for verifier: String) -> String {
        AuthEncoding.base64URLEncode(SHA256.hash(data: Array(verifier.utf8)))
    }
}

/// Claims of a JWT, read without any signature check (the TLS connection is what is trusted).
package struct JWTClaims: Sendable {
    /// The claims this client reads: text and numbers (others, such as arrays, are dropped).
    package let strings: [String: String]
    package let numbers: [String: Double]

    package init(jwt: String) throws {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 || parts.count == 2, let payload = AuthEncoding.base64URLDecode(String(parts[1])),
              let object = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any] else {
            throw AuthError.malformedResponse(step: "token", detail: "the access token is not a readable JWT")
        }
        strings = object.compactMapValues { $0 as? String }
        numbers = object.compactMapValues { ($0 as? NSNumber)?.doubleValue }
    }

    package func string(_ name: String) -> String? { strings[name] }

    package func date(_ name: String) -> Date? {
        numbers[name].map { Date(timeIntervalSince1970: $0) }
    }

    package var expiry: Date? { date("exp") }
}

/// The classic Evernote token `S=s1:U=…:E=<hex ms>:C=…:…` (treated as opaque except for these fields).
package struct ClassicToken: Sendable, Equatable {
    package var shard: String?
    package var userId: Int?
    package var expires: Date?

    package init(_ token: String) {
        var fields = [String: String]()
        for part in token.split(separator: ":") {
            guard let eq = part.firstIndex(of: "=") else { continue }
            fields[String(part[..<eq])] = String(part[part.index(after: eq)...])
        }
        shard = fields["S"]
        userId = fields["U"].flatMap { Int($0, radix: 16) }
        expires = fields["E"].flatMap { UInt64($0, radix: 16) }.map { Date(timeIntervalSince1970: Double($0) / 1000) }
    }
}

/// A token endpoint answer, with everything enlog derives from it.
package struct OAuth2TokenSet: Sendable {
    package var accessToken: String
    package var refreshToken: String?
    package var expiresIn: Int?
    /// Claim `mono_authn_token`: the Thrift `authenticationToken`.
    package var evernoteToken: String
    package var accessTokenExpires: Date?
    package var refreshTokenExpires: Date?
    package var classic: ClassicToken

    package static func parse(_ body: [UInt8], now: Date = Date()) throws -> OAuth2TokenSet {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
            throw AuthError.malformedResponse(step: "token", detail: "not a JSON object")
        }
        guard let access = object["access_token"] as? String, !access.isEmpty else {
            throw AuthError.malformedResponse(step: "token", detail: "no access_token")
        }
        let claims = try JWTClaims(jwt: access)
        guard let mono = claims.string("mono_authn_token"), !mono.isEmpty else {
            throw AuthError.malformedResponse(step: "token", detail: "the access token carries no mono_authn_token claim")
        }
        let refresh = object["refresh_token"] as? String
        let expiresIn = (object["expires_in"] as? NSNumber)?.intValue
        let accessExpiry = claims.expiry ?? expiresIn.map { now.addingTimeInterval(Double($0)) }
        let refreshExpiry = refresh.flatMap { try? JWTClaims(jwt: $0) }?.expiry
        return OAuth2TokenSet(accessToken: access, refreshToken: refresh, expiresIn: expiresIn, evernoteToken: mono,
                              accessTokenExpires: accessExpiry, refreshTokenExpires: refreshExpiry, classic: ClassicToken(mono))
    }
}

/// OAuth 2.0 + PKCE steps as Evernote production (accounts.evernote.com) uses them.
package enum OAuth2 {
    package static let scopes = "openid profile mono_authn_token email offline_access"
    /// Refresh when the access token or the classic token expires within this many seconds.
    package static let refreshMargin: TimeInterval = 15 * 60

    /// The answers by which an authorization server says "not you" rather than "not now":
    /// unauthorized, forbidden, gone; and for registration a 400 (RFC 7591 §3.2.2: the client
    /// was not accepted).
    static let refusals: Set<Int> = [401, 403, 410]

    /// RFC 8414 discovery; nil when the server answers 404 (no OAuth 2.0 there).
    package static func discover(issuer: String, transport: AuthHTTPTransport) async throws -> OAuth2ServerMetadata? {
        let url = issuer.trimmingSuffix("/") + "/.well-known/oauth-authorization-server"
        let response = try await transport.send(HTTPRequest(method: "GET", url: url, headers: [("Accept", "application/json")]))
        if response.status == 404 { return nil }
        if refusals.contains(response.status) {
            throw AuthError.apiAccessRefused(host: AuthURL(url)?.host ?? issuer, step: "authorization-server discovery",
                                             status: response.status, detail: errorCode(response.body))
        }
        guard response.status == 200 else {
            throw AuthError.serverRejected(step: "authorization-server discovery", status: response.status, detail: nil)
        }
        do {
            return try JSONDecoder().decode(OAuth2ServerMetadata.self, from: Data(response.body))
        } catch {
            throw AuthError.malformedResponse(step: "authorization-server discovery", detail: "missing endpoints")
        }
    }

    /// RFC 7591 dynamic registration of a public client; returns the `client_id`.
    package static func register(metadata: OAuth2ServerMetadata, redirectURI: String, clientName: String,
                                transport: AuthHTTPTransport) async throws -> String {
        guard let endpoint = metadata.registrationEndpoint else {
            throw AuthError.malformedResponse(step: "authorization-server discovery", detail: "no registration_endpoint")
        }
        let request: [String: Any] = [
            "client_name": clientName,
            "redirect_uris": [redirectURI],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        ]
        let body = try JSONSerialization.data(withJSONObject: request, options: [.sortedKeys])
        let response = try await transport.send(HTTPRequest(
            method: "POST", url: endpoint,
            headers: [("Content-Type", "application/json"), ("Accept", "application/json")], body: [UInt8](body)))
        if response.status == 400 || refusals.contains(response.status) {
            throw AuthError.apiAccessRefused(host: AuthURL(endpoint)?.host ?? endpoint, step: "client registration",
                                             status: response.status, detail: errorCode(response.body))
        }
        guard response.status == 200 || response.status == 201 else {
            throw AuthError.serverRejected(step: "client registration", status: response.status, detail: nil)
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any],
              let clientId = object["client_id"] as? String, !clientId.isEmpty else {
            throw AuthError.malformedResponse(step: "client registration", detail: "no client_id")
        }
        return clientId
    }

    package static func authorizationURL(metadata: OAuth2ServerMetadata, clientId: String, redirectURI: String,
                                        state: String, pkce: PKCE, scope: String = scopes) -> String {
        let parameters: [(String, String)] = [
            ("response_type", "code"),
            ("client_id", clientId),
            ("redirect_uri", redirectURI),
            ("scope", scope),
            ("state", state),
            ("code_challenge", pkce.challenge),
            ("code_challenge_method", pkce.method),
        ]
        let separator = metadata.authorizationEndpoint.contains("?") ? "&" : "?"
        return metadata.authorizationEndpoint + separator + AuthEncoding.formEncode(parameters)
    }

    /// What the listener does with a callback: `state` must match; `error=access_denied` = the user declined.
    package static func classifyCallback(_ callback: CallbackParameters, expectedState: String) -> CallbackVerdict {
        guard let state = callback["state"] else { return .reject("state is missing") }
        guard constantTimeEqual(state, expectedState) else { return .reject("state mismatch") }
        if callback["error"] != nil { return .denied }
        if let code = callback["code"], !code.isEmpty { return .accept }
        return .reject("code is missing")
    }

    /// The code from a callback, or the right error.
    package static func code(from callback: CallbackParameters, expectedState: String) throws -> String {
        switch classifyCallback(callback, expectedState: expectedState) {
        case .accept: return callback["code"]!
        case .denied:
            let error = callback["error"] ?? "access_denied"
            if error == "access_denied" { throw AuthError.accessDenied }
            throw AuthError.callbackInvalid("the server answered error=\(error.prefix(64))")
        case .reject(let why):
            throw why.contains("mismatch") ? AuthError.callbackMismatch("state") : AuthError.callbackInvalid(why)
        }
    }

    package static func exchange(code: String, pkce: PKCE, clientId: String, redirectURI: String, tokenEndpoint: String,
                                transport: AuthHTTPTransport, now: Date = Date()) async throws -> OAuth2TokenSet {
        try await postToken([
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", redirectURI),
            ("client_id", clientId),
            ("code_verifier", pkce.verifier),
        ], step: "code exchange", tokenEndpoint: tokenEndpoint, transport: transport, now: now)
    }

    package static func refresh(refreshToken: String, clientId: String, tokenEndpoint: String,
                               transport: AuthHTTPTransport, now: Date = Date()) async throws -> OAuth2TokenSet {
        try await postToken([
            ("grant_type", "refresh_token"),
            ("refresh_token", refreshToken),
            ("client_id", clientId),
        ], step: "token refresh", tokenEndpoint: tokenEndpoint, transport: transport, now: now)
    }

    static func postToken(_ form: [(String, String)], step: String, tokenEndpoint: String,
                          transport: AuthHTTPTransport, now: Date) async throws -> OAuth2TokenSet {
        let response = try await transport.send(HTTPRequest(
            method: "POST", url: tokenEndpoint,
            headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json")],
            body: Array(AuthEncoding.formEncode(form).utf8)))
        guard response.status == 200 else {
            throw AuthError.serverRejected(step: step, status: response.status, detail: errorCode(response.body))
        }
        return try OAuth2TokenSet.parse(response.body, now: now)
    }

    /// The `error` code of an OAuth error answer (RFC 6749 §5.2, RFC 7591 §3.2.2), safe to show;
    /// descriptions are not echoed (they may quote input). Only a plain token is taken.
    static func errorCode(_ body: [UInt8]) -> String? {
        let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]
        guard let code = object?["error"] as? String, !code.isEmpty,
              code.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "_-.".unicodeScalars.contains($0)) })
        else { return nil }
        return String(code.prefix(64))
    }
}

extension String {
    package func trimmingSuffix(_ suffix: String) -> String {
        var result = self
        while result.hasSuffix(suffix) { result.removeLast(suffix.count) }
        return result
    }
}
