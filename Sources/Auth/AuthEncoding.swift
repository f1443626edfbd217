import Foundation
import Support
import EvernoteAPI
import Configuration
import Network

/// Percent-encoding, form and query handling, base64url and randomness shared by both OAuth flows.
package enum AuthEncoding {
    /// RFC 3986 / RFC 5849 §3.6 percent-encoding: only `A-Z a-z 0-9 - . _ ~` stay as they are;
    /// every other UTF-8 byte becomes `%XX` with upper-case hex.
    package static func percentEncode(_ string: String) -> String {
        var out = ""
        out.reserveCapacity(string.utf8.count)
        for byte in string.utf8 {
            if isUnreserved(byte) {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += "%"
                out += hexDigit(byte >> 4)
                out += hexDigit(byte & 0x0f)
            }
        }
        return out
    }

    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
             UInt8(ascii: "_"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    private static func hexDigit(_ nibble: UInt8) -> String {
        String(UnicodeScalar(nibble < 10 ? nibble + 48 : nibble + 55))
    }

    /// Decodes `%XX` sequences (and `+` as a space when `plusIsSpace`). Invalid escapes are kept literally.
    package static func percentDecode(_ string: String, plusIsSpace: Bool = true) -> String {
        var bytes = [UInt8]()
        bytes.reserveCapacity(string.utf8.count)
        let utf8 = Array(string.utf8)
        var index = 0
        while index < utf8.count {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%"), index + 2 < utf8.count,
               let high = hexValue(utf8[index + 1]), let low = hexValue(utf8[index + 2]) {
                bytes.append(high << 4 | low)
                index += 3
            } else if byte == UInt8(ascii: "+") && plusIsSpace {
                bytes.append(UInt8(ascii: " "))
                index += 1
            } else {
                bytes.append(byte)
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - 48
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - 87
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - 55
        default: return nil
        }
    }

    /// `application/x-www-form-urlencoded` encoding with RFC 3986 escaping (what both OAuth specs accept).
    package static func formEncode(_ pairs: [(String, String)]) -> String {
        pairs.map { percentEncode($0.0) + "=" + percentEncode($0.1) }.joined(separator: "&")
    }

    /// Parses `a=1&b=2` (a query string or a form body) into ordered, decoded pairs.
    package static func parseForm(_ string: String) -> [(String, String)] {
        guard !string.isEmpty else { return [] }
        return string.split(separator: "&", omittingEmptySubsequences: true).map { part in
            if let eq = part.firstIndex(of: "=") {
                return (percentDecode(String(part[..<eq])), percentDecode(String(part[part.index(after: eq)...])))
            }
            return (percentDecode(String(part)), "")
        }
    }

    /// First value for each name.
    package static func firstValues(_ pairs: [(String, String)]) -> [String: String] {
        var result = [String: String]()
        for (name, value) in pairs where result[name] == nil { result[name] = value }
        return result
    }

    package static func base64URLEncode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    package static func base64URLDecode(_ string: String) -> [UInt8]? {
        var text = string.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        switch text.count % 4 {
        case 0: break
        case 2: text += "=="
        case 3: text += "="
        default: return nil
        }
        return Data(base64Encoded: text).map { [UInt8]($0) }
    }

    /// Bytes from the system CSPRNG (`SystemRandomNumberGenerator` reads getrandom(2) on Linux).
    package static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    /// A random string of unreserved characters carrying `byteCount` bytes of entropy.
    package static func randomToken(byteCount: Int = 24) -> String {
        base64URLEncode(randomBytes(byteCount))
    }
}

/// The pieces of an absolute http(s) URL the auth code needs.
package struct AuthURL: Sendable, Equatable {
    package var scheme: String
    package var host: String
    package var port: Int?
    package var path: String
    package var query: String?

    package init?(_ string: String) {
        guard let components = URLComponents(string: string),
              let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = components.host, !host.isEmpty else { return nil }
        self.scheme = scheme
        self.host = host.lowercased()
        self.port = components.port
        self.path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        self.query = components.percentEncodedQuery
    }

    /// `host` with brackets for IPv6 literals, plus a port when it is not the scheme's default.
    package var authority: String {
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        if let port, !(scheme == "http" && port == 80), !(scheme == "https" && port == 443) {
            return "\(bracketed):\(port)"
        }
        return bracketed
    }

    /// `scheme://authority` — no path, no trailing slash.
    package var origin: String { "\(scheme)://\(authority)" }

    package var queryPairs: [(String, String)] { AuthEncoding.parseForm(query ?? "") }

    package var isLoopback: Bool {
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        return bare == "localhost" || bare == "::1" || bare.hasPrefix("127.")
    }
}
