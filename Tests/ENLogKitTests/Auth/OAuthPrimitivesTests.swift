import Foundation
import XCTest
@testable import Auth
@testable import Capture

final class OAuth1SigningTests: XCTestCase {
    func testPercentEncodingIsRFC3986() {
        XCTAssertEqual(AuthEncoding.percentEncode("Ladies + Gentlemen"), "Ladies%20%2B%20Gentlemen")
        XCTAssertEqual(AuthEncoding.percentEncode("An encoded string!"), "An%20encoded%20string%21")
        XCTAssertEqual(AuthEncoding.percentEncode("Dogs, Cats & Mice"), "Dogs%2C%20Cats%20%26%20Mice")
        XCTAssertEqual(AuthEncoding.percentEncode("☃"), "%E2%98%83")
        XCTAssertEqual(AuthEncoding.percentEncode("-._~azAZ09"), "-._~azAZ09")
        XCTAssertEqual(AuthEncoding.percentDecode("a%20b+c%2B"), "a b c+")
    }

    /// RFC 5849 §3.4.1.1 example (realm excluded, query and form body included, duplicate names sorted by value).
    func testRFC5849BaseString() throws {
        let parameters = AuthEncoding.parseForm("c2&a3=2+q") + [
            ("oauth_consumer_key", "9djdj82h48djs9d2"), ("oauth_token", "kkk9d7dh3k39sjv7"),
            ("oauth_signature_method", "HMAC-SHA1"), ("oauth_timestamp", "137131201"), ("oauth_nonce", "7d8f3e4a"),
            ("realm", "Example"),
        ]
        let base = try OAuth1.signatureBaseString(
            method: "post", url: "http://EXAMPLE.COM:80/request?b5=%3D%253D&a3=a&c%40=&a2=r%20b", parameters: parameters)
        XCTAssertEqual(base, "POST&http%3A%2F%2Fexample.com%2Frequest&a2%3Dr%2520b%26a3%3D2%2520q%26a3%3Da%26b5%3D%253D%25253D"
            + "%26c%2540%3D%26c2%3D%26oauth_consumer_key%3D9djdj82h48djs9d2%26oauth_nonce%3D7d8f3e4a"
            + "%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D137131201%26oauth_token%3Dkkk9d7dh3k39sjv7")
    }

    func testBaseStringURIKeepsNonDefaultPort() throws {
        XCTAssertEqual(try OAuth1.baseStringURI("HTTPS://www.Example.net:8080/?q=1"), "https://www.example.net:8080/")
        XCTAssertEqual(try OAuth1.baseStringURI("https://www.example.net:443/oauth"), "https://www.example.net/oauth")
    }

    /// The classic "photos" example (OAuth Core 1.0 appendix A.5, RFC 5849 §1.2's credentials).
    func testHMACSHA1WellKnownExample() throws {
        let parameters: [(String, String)] = [
            ("oauth_consumer_key", "dpf43f3p2l4k3l03"), ("oauth_token", "nnch734d00sl2jdk"),
            ("oauth_signature_method", "HMAC-SHA1"), ("oauth_timestamp", "1191242096"),
            ("oauth_nonce", "kllo9940pd9333jh"), ("oauth_version", "1.0"),
        ]
        let url = "http://photos.example.net/photos?file=vacation.jpg&size=original"
        let base = try OAuth1.signatureBaseString(method: "GET", url: url, parameters: parameters)
        XCTAssertEqual(base, "GET&http%3A%2F%2Fphotos.example.net%2Fphotos&file%3Dvacation.jpg%26oauth_consumer_key%3Ddpf43f3p2l4k3l03"
            + "%26oauth_nonce%3Dkllo9940pd9333jh%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D1191242096"
            + "%26oauth_token%3Dnnch734d00sl2jdk%26oauth_version%3D1.0%26size%3Doriginal")
        XCTAssertEqual(OAuth1.hmacSHA1Signature(baseString: base, consumerSecret: "kd94hf93k423kf44", tokenSecret: "pfkkdhi9sl3r4s00"),
                       "tR3+Ty81lMeYAr/Fid0kMTYa/WM=")
        XCTAssertEqual(try OAuth1.signature(method: .plaintext, httpMethod: "GET", url: url, parameters: parameters,
                                            consumerSecret: "kd94hf93k423kf44", tokenSecret: ""), "kd94hf93k423kf44&")
    }

    /// Same inputs through oauthlib.oauth1.rfc5849.signature: base string and HMAC-SHA1 must agree.
    func testCrossCheckAgainstOAuthlib() throws {
        let python = try requirePython()
        let url = "https://Sandbox.Evernote.com:443/oauth?x=%E2%98%83&y=a+b&z=1%2F2"
        let body = "note=Dogs%2C+Cats+%26+Mice&empty="
        let oauth: [(String, String)] = [
            ("oauth_consumer_key", "enlog-key"), ("oauth_nonce", "n0nce~!*"), ("oauth_signature_method", "HMAC-SHA1"),
            ("oauth_timestamp", "1700000000"), ("oauth_callback", "http://127.0.0.1:43123/oauth_callback"),
            ("oauth_version", "1.0"), ("oauth_token", "temp token/+="),
        ]
        let consumerSecret = "s3cr&t é", tokenSecret = "t/s"
        let base = try OAuth1.signatureBaseString(method: "POST", url: url, parameters: AuthEncoding.parseForm(body) + oauth)
        let signature = OAuth1.hmacSHA1Signature(baseString: base, consumerSecret: consumerSecret, tokenSecret: tokenSecret)
        let script = """
        import json, sys
        from oauthlib.oauth1.rfc5849 import signature as s
        from urllib.parse import urlsplit
        url, body, oauth, cs, ts = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4], sys.argv[5]
        header = 'OAuth ' + ', '.join('%s="%s"' % (k, s.utils.escape(v)) for k, v in oauth)
        params = s.collect_parameters(uri_query=urlsplit(url).query, body=body, headers={'Authorization': header})
        base = s.signature_base_string('POST', s.base_string_uri(url), s.normalize_parameters(params))
        print(base); print(s.sign_hmac_sha1(base, cs, ts))
        """
        let json = String(decoding: try JSONSerialization.data(withJSONObject: oauth.map { [$0.0, $0.1] }), as: UTF8.self)
        let output = try runPython(python, script, [url, body, json, consumerSecret, tokenSecret]).split(separator: "\n")
        XCTAssertEqual(output.count, 2)
        XCTAssertEqual(String(output.first ?? ""), base)
        XCTAssertEqual(String(output.last ?? ""), signature)
    }

    func testTokenResponseParsing() throws {
        let body = "oauth_token=S%3Ds4%3AU%3Da1%3AE%3D12345%3AC%3D1%3AP%3D1cd%3AA%3Den-devtoken%3AV%3D2%3AH%3Dabc"
            + "&oauth_token_secret=&edam_shard=s4&edam_userId=161&edam_expires=1700000000123"
            + "&edam_noteStoreUrl=https%3A%2F%2Fsandbox.evernote.com%2Fshard%2Fs4%2Fnotestore"
            + "&edam_webApiUrlPrefix=https%3A%2F%2Fsandbox.evernote.com%2Fshard%2Fs4%2F"
        let token = try OAuth1TokenResponse.parse(body)
        XCTAssertEqual(token.token, "S=s4:U=a1:E=12345:C=1:P=1cd:A=en-devtoken:V=2:H=abc")
        XCTAssertEqual(token.shard, "s4")
        XCTAssertEqual(token.userId, 161)
        XCTAssertEqual(token.expires?.timeIntervalSince1970 ?? 0, 1_700_000_000.123, accuracy: 0.0005)
        XCTAssertEqual(token.noteStoreUrl, "https://sandbox.evernote.com/shard/s4/notestore")
        XCTAssertEqual(token.webApiUrlPrefix, "https://sandbox.evernote.com/shard/s4/")
        XCTAssertThrowsError(try OAuth1TokenResponse.parse("oauth_token_secret="))
    }

    func testCallbackChecksTokenAndVerifier() throws {
        let good = CallbackParameters(requestTarget: "/oauth_callback?oauth_token=T1&oauth_verifier=V1&sandbox_lnb=false")
        XCTAssertEqual(try OAuth1.verifier(from: good, expectedToken: "T1"), "V1")
        XCTAssertEqual(OAuth1.classifyCallback(good, expectedToken: "T2"), .reject("oauth_token mismatch"))
        XCTAssertThrowsError(try OAuth1.verifier(from: good, expectedToken: "T2")) {
            XCTAssertEqual($0 as? AuthError, .callbackMismatch("oauth_token"))
        }
        let denied = CallbackParameters(requestTarget: "/oauth_callback?oauth_token=T1&sandbox_lnb=false")
        XCTAssertThrowsError(try OAuth1.verifier(from: denied, expectedToken: "T1")) {
            XCTAssertEqual($0 as? AuthError, .accessDenied)
            XCTAssertTrue(($0 as? AuthError)?.reason.contains("you denied access") ?? false)
        }
    }
}

final class OAuth2PrimitivesTests: XCTestCase {
    /// A callback's `error=` is the browser's text (a fuzzer sent a line break in it): the message
    /// that quotes it stays one line, as does every other that carries text from elsewhere.
    func testMessagesQuotingOutsideTextStayOnOneLine() throws {
        let callback = CallbackParameters(requestTarget: "/oauth_callback?state=S&error=no%0Away%0D%0A%1B%5B31m")
        XCTAssertThrowsError(try OAuth2.code(from: callback, expectedState: "S")) { error in
            let reason = (error as? AuthError)?.reason ?? ""
            XCTAssertTrue(reason.hasSuffix("the server answered error=no way [31m"), reason)
        }
        let text = "first\nsecond\r\n\u{2028}third\u{7}"
        let errors: [AuthError] = [
            .callbackMismatch(text), .callbackInvalid(text), .pastedURLInvalid(text), .listenerFailed(text), .invalidHost(text),
            .serverRejected(step: text, status: 400, detail: text), .malformedResponse(step: text, detail: text),
            .refreshImpossible(text), .credentialsMissing(path: text), .credentialsInsecure(path: text, mode: text),
            .credentialsUnreadable(path: text, detail: text), .credentialsInvalid(path: text),
            .credentialsUnwritable(path: text, detail: text),
        ]
        for error in errors {
            XCTAssertFalse(error.reason.unicodeScalars.contains { $0.properties.generalCategory == .control || $0.properties.isWhitespace && $0 != " " },
                           error.reason)
            XCTAssertTrue(error.reason.contains("first second third"), error.reason)
        }
    }

    /// RFC 7636 appendix B.
    func testPKCEChallengeMatchesRFC7636() {
        XCTAssertEqual(PKCE.challenge(for: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"), "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
    }

    func testGeneratedVerifiers() {
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        let a = PKCE.generate(), b = PKCE.generate()
        XCTAssertNotEqual(a.verifier, b.verifier)
        for length in [10, 43, 64, 128, 500] {
            let v = PKCE.generate(length: length).verifier
            XCTAssertTrue((43...128).contains(v.count))
            XCTAssertTrue(v.allSatisfy { allowed.contains($0) })
        }
        XCTAssertFalse(a.challenge.contains("="))
        XCTAssertEqual(a.challenge.count, 43)
        XCTAssertNotEqual(AuthEncoding.randomToken(), AuthEncoding.randomToken())
    }

    static func jwt(_ claims: [String: Any]) -> String {
        let header = AuthEncoding.base64URLEncode(Array(#"{"alg":"none"}"#.utf8))
        let payload = AuthEncoding.base64URLEncode([UInt8](try! JSONSerialization.data(withJSONObject: claims)))
        return "\(header).\(payload).sig"
    }

    func testJWTAndClassicTokenClaims() throws {
        let classic = "S=s42:U=1e240:E=18bcfe56800:C=18b:P=1cd:A=enlog:V=2:H=h"
        let token = Self.jwt(["mono_authn_token": classic, "exp": 1_900_000_000, "clientId": "c"])
        let claims = try JWTClaims(jwt: token)
        XCTAssertEqual(claims.string("mono_authn_token"), classic)
        XCTAssertEqual(claims.expiry, Date(timeIntervalSince1970: 1_900_000_000))
        let parsed = ClassicToken(classic)
        XCTAssertEqual(parsed.shard, "s42")
        XCTAssertEqual(parsed.userId, 123456)
        XCTAssertEqual(parsed.expires, Date(timeIntervalSince1970: 1_700_000_000))
        XCTAssertThrowsError(try JWTClaims(jwt: "not-a-jwt"))

        let body = try JSONSerialization.data(withJSONObject: ["access_token": token, "refresh_token": Self.jwt(["exp": 1_950_000_000]),
                                                               "expires_in": 3600, "token_type": "Bearer"])
        let set = try OAuth2TokenSet.parse([UInt8](body))
        XCTAssertEqual(set.evernoteToken, classic)
        XCTAssertEqual(set.accessTokenExpires, Date(timeIntervalSince1970: 1_900_000_000))
        XCTAssertEqual(set.refreshTokenExpires, Date(timeIntervalSince1970: 1_950_000_000))
        let noClaim = try JSONSerialization.data(withJSONObject: ["access_token": Self.jwt(["exp": 1])])
        XCTAssertThrowsError(try OAuth2TokenSet.parse([UInt8](noClaim)))
    }

    func testStateCheckAndDenial() throws {
        let good = CallbackParameters(requestTarget: "/oauth_callback?code=C&state=S1")
        XCTAssertEqual(try OAuth2.code(from: good, expectedState: "S1"), "C")
        XCTAssertThrowsError(try OAuth2.code(from: good, expectedState: "S2")) { XCTAssertEqual($0 as? AuthError, .callbackMismatch("state")) }
        let denied = CallbackParameters(requestTarget: "/oauth_callback?error=access_denied&state=S1")
        XCTAssertThrowsError(try OAuth2.code(from: denied, expectedState: "S1")) { XCTAssertEqual($0 as? AuthError, .accessDenied) }
        let forged = CallbackParameters(requestTarget: "/oauth_callback?error=access_denied&state=X")
        XCTAssertEqual(OAuth2.classifyCallback(forged, expectedState: "S1"), .reject("state mismatch"))
    }

    func testNeedsRefreshWithin15Minutes() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        var credentials = Credentials(service: .evernote, host: "https://www.evernote.com", authProtocol: .oauth2, token: "t",
                                      tokenExpires: now.addingTimeInterval(86400), accessTokenExpires: now.addingTimeInterval(3600))
        XCTAssertFalse(AuthFlow.needsRefresh(credentials, now: now))
        credentials.accessTokenExpires = now.addingTimeInterval(14 * 60)
        XCTAssertTrue(AuthFlow.needsRefresh(credentials, now: now))
        credentials.accessTokenExpires = now.addingTimeInterval(3600)
        credentials.tokenExpires = now.addingTimeInterval(60)
        XCTAssertTrue(AuthFlow.needsRefresh(credentials, now: now))
        credentials.authProtocol = .oauth1
        XCTAssertFalse(AuthFlow.needsRefresh(credentials, now: now))
    }

    func testServiceResolution() throws {
        XCTAssertEqual(try AuthService.resolve(.evernote).authorizationServerURL, "https://accounts.evernote.com")
        XCTAssertNil(try AuthService.resolve(.yinxiang).authorizationServerURL)
        XCTAssertEqual(try AuthService.resolve(.custom, host: "http://127.0.0.1:8080/").baseURL, "http://127.0.0.1:8080")
        XCTAssertEqual(try AuthService.resolve(.custom, host: "https://EN.example.com").baseURL, "https://en.example.com")
        XCTAssertThrowsError(try AuthService.resolve(.custom, host: "http://en.example.com"))
        XCTAssertThrowsError(try AuthService.resolve(.custom))
        XCTAssertThrowsError(try AuthService.resolve(.custom, host: "ftp://x"))
    }

    func testPastedURLParsing() throws {
        let p = try CallbackParameters.parsePastedURL("  http://127.0.0.1:4321/oauth_callback?code=a%2Bb&state=s \n")
        XCTAssertEqual(p["code"], "a+b")
        XCTAssertEqual(p["state"], "s")
        XCTAssertEqual(try CallbackParameters.parsePastedURL("?oauth_token=t&oauth_verifier=v")["oauth_verifier"], "v")
        XCTAssertThrowsError(try CallbackParameters.parsePastedURL("http://127.0.0.1:4321/favicon.ico?x=1"))
        XCTAssertThrowsError(try CallbackParameters.parsePastedURL(""))
        XCTAssertThrowsError(try CallbackParameters.parsePastedURL("http://127.0.0.1:4321/oauth_callback"))
    }
}
