import Crypto
import Foundation
import Support
import EvernoteAPI
import Configuration
import Network

/// OAuth 1.0a signature methods Evernote accepts.
package enum OAuth1SignatureMethod: String, Sendable, Codable {
    case hmacSHA1 = "HMAC-SHA1"
    case plaintext = "PLAINTEXT"
}

/// Where the signed protocol parameters travel.
package enum OAuth1ParameterPlacement: String, Sendable, Codable {
    case header
    case query
}

/// The application's consumer credentials (from config or ENLOG_CONSUMER_KEY/SECRET; never in source).
package struct OAuth1Consumer: Sendable {
    package var key: String
    package var secret: String
    package init(key: String, secret: String) {
        self.key = key
        self.secret = secret
    }
}

/// RFC 5849 signing primitives.
package enum OAuth1 {
    /// RFC 5849 §3.4.1.2: `lower(scheme)://lower(host)[:non-default port]/path`, no query or fragment.
    package static func baseStringURI(_ url: String) throws -> String {
        guard let parsed = AuthURL(url) else { throw AuthError.invalidHost("\(url) is not an http(s) URL") }
        return parsed.origin + parsed.path
    }

    /// RFC 5849 §3.4.1.3.2: encode names and values, sort by name then value, join `n=v` with `&`.
    package static func normalizedParameters(_ parameters: [(String, String)]) -> String {
        let encoded: [(String, String)] = parameters.map { pair in
            (AuthEncoding.percentEncode(pair.0), AuthEncoding.percentEncode(pair.1))
        }
        let sorted = encoded.sorted { (a: (String, String), b: (String, String)) -> Bool in
            a.0 == b.0 ? a.1 < b.1 : a.0 < b.0
        }
        return sorted.map { pair in pair.0 + "=" + pair.1 }.joined(separator: "&")
    }

    /// RFC 5849 §3.4.1: `METHOD&enc(base URI)&enc(normalized parameters)`.
    /// `parameters` = query + form body + oauth_* (without `oauth_signature`); the URL's own query is added here.
    package static func signatureBaseString(method: String, url: String, parameters: [(String, String)]) throws -> String {
        let queryPairs = AuthURL(url)?.queryPairs ?? []
        let all = (queryPairs + parameters).filter { $0.0 != "oauth_signature" && $0.0 != "realm" }
        return [method.uppercased(), AuthEncoding.percentEncode(try baseStringURI(url)),
                AuthEncoding.percentEncode(normalizedParameters(all))].joined(separator: "&")
    }

    /// `enc(consumer_secret)&enc(token_secret)` — the HMAC key and the PLAINTEXT signature.
    package static func signingKey(consumerSecret: String, tokenSecret: String) -> String {
        AuthEncoding.percentEncode(consumerSecret) + "&" + AuthEncoding.percentEncode(tokenSecret)
    }

    package static func hmacSHA1Signature(baseString: String, consumerSecret: String, tokenSecret: String) -> String {
        let key = SymmetricKey(data: Array(signingKey(consumerSecret: consumerSecret, tokenSecret: tokenSecret).utf8))
        let mac = HMAC<Insecure.SHA1>.authenticationCode(for: Array(baseString.utf8), using: key)
        return Data(mac).base64EncodedString()
    }

    package static func signature(method: OAuth1SignatureMethod, httpMethod: String, url: String,
                                 parameters: [(String, String)], consumerSecret: String, tokenSecret: String) throws -> String {
        switch method {
        case .plaintext:
            return signingKey(consumerSecret: consumerSecret, tokenSecret: tokenSecret)
        case .hmacSHA1:
            let base = try signatureBaseString(method: httpMethod, url: url, parameters: parameters)
            return hmacSHA1Signature(baseString: base, consumerSecret: consumerSecret, tokenSecret: tokenSecret)
        }
    }

    /// Signs a GET request. With `.header` every protocol parameter (oauth_callback and oauth_verifier
    /// included) travels in `Authorization: OAuth …` (RFC 5849 §3.5.1, node-oauth's way with Evernote);
    /// with `.query` everything is in the query string (geeknote's way).
    package static func signedGetRequest(url: String, extraParameters: [(String, String)], consumer: OAuth1Consumer,
                                        token: String?, tokenSecret: String, method: OAuth1SignatureMethod,
                                        placement: OAuth1ParameterPlacement = .header,
                                        nonce: String, timestamp: Int) throws -> HTTPRequest {
        var parameters: [(String, String)] = [
            ("oauth_consumer_key", consumer.key),
            ("oauth_nonce", nonce),
            ("oauth_signature_method", method.rawValue),
            ("oauth_timestamp", String(timestamp)),
            ("oauth_version", "1.0"),
        ]
        if let token { parameters.append(("oauth_token", token)) }
        parameters += extraParameters
        let signature = try OAuth1.signature(method: method, httpMethod: "GET", url: url, parameters: parameters,
                                             consumerSecret: consumer.secret, tokenSecret: tokenSecret)
        parameters.append(("oauth_signature", signature))
        switch placement {
        case .query:
            let separator = url.contains("?") ? "&" : "?"
            return HTTPRequest(method: "GET", url: url + separator + AuthEncoding.formEncode(parameters))
        case .header:
            let header = "OAuth " + parameters.map { "\(AuthEncoding.percentEncode($0.0))=\"\(AuthEncoding.percentEncode($0.1))\"" }
                .joined(separator: ", ")
            return HTTPRequest(method: "GET", url: url, headers: [("Authorization", header)])
        }
    }

    /// Decides what the listener does with a callback: `oauth_token` must be this login's temporary
    /// token; no `oauth_verifier` means the user declined.
    package static func classifyCallback(_ callback: CallbackParameters, expectedToken: String) -> CallbackVerdict {
        guard let token = callback["oauth_token"] else { return .reject("oauth_token is missing") }
        guard constantTimeEqual(token, expectedToken) else { return .reject("oauth_token mismatch") }
        if let verifier = callback["oauth_verifier"], !verifier.isEmpty { return .accept }
        return .denied
    }

    /// The verifier from an accepted callback; throws `accessDenied` when there is none.
    package static func verifier(from callback: CallbackParameters, expectedToken: String) throws -> String {
        switch classifyCallback(callback, expectedToken: expectedToken) {
        case .accept: return callback["oauth_verifier"]!
        case .denied: throw AuthError.accessDenied
        case .reject(let why):
            throw why.contains("mismatch") ? AuthError.callbackMismatch("oauth_token") : AuthError.callbackInvalid(why)
        }
    }
}

/// Constant-time comparison for tokens and states.
func constantTimeEqual(_ a: String, _ b: String) -> Bool {
    let x = Array(a.utf8), y = Array(b.utf8)
    guard x.count == y.count else { return false }
    var diff: UInt8 = 0
    for index in x.indices { diff |= x[index] ^ y[index] }
    return diff == 0
}

/// Step 1's answer.
package struct OAuth1TemporaryCredentials: Sendable {
    package var token: String
    package var tokenSecret: String
    package var callbackConfirmed: Bool
}

/// Step 4's answer: the Evernote token and where the account lives.
package struct OAuth1TokenResponse: Sendable, Equatable {
    package var token: String
    package var shard: String?
    package var userId: Int?
    /// `edam_expires` (milliseconds since 1970) as a date.
    package var expires: Date?
    package var noteStoreUrl: String?
    package var webApiUrlPrefix: String?

    package static func parse(_ body: String) throws -> OAuth1TokenResponse {
        let fields = AuthEncoding.firstValues(AuthEncoding.parseForm(body.trimmingCharacters(in: .whitespacesAndNewlines)))
        guard let token = fields["oauth_token"], !token.isEmpty else {
            throw AuthError.malformedResponse(step: "token exchange", detail: "no oauth_token")
        }
        let expires = fields["edam_expires"].flatMap(Int64.init).map { Date(timeIntervalSince1970: Double($0) / 1000) }
        return OAuth1TokenResponse(token: token, shard: fields["edam_shard"], userId: fields["edam_userId"].flatMap(Int.init),
                                   expires: expires, noteStoreUrl: fields["edam_noteStoreUrl"],
                                   webApiUrlPrefix: fields["edam_webApiUrlPrefix"])
    }
}

/// The three network steps of OAuth 1.0a against `HOST/oauth` and `HOST/OAuth.action`.
package struct OAuth1Client: Sendable {
    package var baseURL: String
    package var consumer: OAuth1Consumer
    package var signatureMethod: OAuth1SignatureMethod
    package var placement: OAuth1ParameterPlacement
    package var transport: AuthHTTPTransport
    var nonce: @Sendable () -> String = { HexText.lowercase(AuthEncoding.randomBytes(16)) }
    var timestamp: @Sendable () -> Int = { Int(Date().timeIntervalSince1970) }

    package init(baseURL: String, consumer: OAuth1Consumer, signatureMethod: OAuth1SignatureMethod = .hmacSHA1,
                placement: OAuth1ParameterPlacement = .header, transport: AuthHTTPTransport) {
        self.baseURL = baseURL
        self.consumer = consumer
        self.signatureMethod = signatureMethod
        self.placement = placement
        self.transport = transport
    }

    var endpoint: String { baseURL + "/oauth" }

    /// Step 1: temporary credentials, with `oauth_callback` = the loopback listener's URL.
    package func requestTemporaryCredentials(callback: String) async throws -> OAuth1TemporaryCredentials {
        let request = try OAuth1.signedGetRequest(url: endpoint, extraParameters: [("oauth_callback", callback)],
                                                  consumer: consumer, token: nil, tokenSecret: "", method: signatureMethod,
                                                  placement: placement, nonce: nonce(), timestamp: timestamp())
        let response = try await transport.send(request)
        guard response.status == 200 else {
            throw AuthError.serverRejected(step: "temporary-credential request", status: response.status,
                                           detail: "check the consumer key and secret (and that the key is activated for this host)")
        }
        let fields = AuthEncoding.firstValues(AuthEncoding.parseForm(
            String(decoding: response.body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)))
        guard let token = fields["oauth_token"], !token.isEmpty else {
            throw AuthError.malformedResponse(step: "temporary-credential request", detail: "no oauth_token")
        }
        return OAuth1TemporaryCredentials(token: token, tokenSecret: fields["oauth_token_secret"] ?? "",
                                          callbackConfirmed: fields["oauth_callback_confirmed"] == "true")
    }

    /// Step 2: the page the user opens.
    package func authorizationURL(for temporary: OAuth1TemporaryCredentials) -> String {
        baseURL + "/OAuth.action?oauth_token=" + AuthEncoding.percentEncode(temporary.token)
    }

    /// Step 4: exchange the temporary token and verifier for the Evernote token.
    package func exchange(_ temporary: OAuth1TemporaryCredentials, verifier: String) async throws -> OAuth1TokenResponse {
        let request = try OAuth1.signedGetRequest(url: endpoint, extraParameters: [("oauth_verifier", verifier)],
                                                  consumer: consumer, token: temporary.token, tokenSecret: temporary.tokenSecret,
                                                  method: signatureMethod, placement: placement,
                                                  nonce: nonce(), timestamp: timestamp())
        let response = try await transport.send(request)
        guard response.status == 200 else {
            throw AuthError.serverRejected(step: "token exchange", status: response.status, detail: nil)
        }
        return try OAuth1TokenResponse.parse(String(decoding: response.body, as: UTF8.self))
    }
}
