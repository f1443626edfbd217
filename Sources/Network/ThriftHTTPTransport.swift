import Foundation
import Support
import EvernoteAPI
import Configuration

/// The HTTP side of a Thrift call failed although the connection worked: the service (or
/// something in front of it) answered with something other than a Thrift reply.
package enum ThriftHTTPError: ENLogError, Equatable {
    /// Any status but 200. `snippet` is a short, one-line, secret-redacted extract of the body
    /// (an HTML page's title or text), nil when there was nothing readable.
    case unexpectedStatus(status: Int, snippet: String?)
    /// HTTP 200 but an HTML/text page instead of Thrift (a captive portal or a wrong URL).
    case unexpectedContent(contentType: String, snippet: String?)

    package var reason: String {
        switch self {
        case .unexpectedStatus(let status, let snippet):
            return "Evernote answered HTTP \(status)" + (snippet.map { ": \($0)" } ?? "")
        case .unexpectedContent(let contentType, let snippet):
            return "Evernote answered with \(HTTPText.oneLine(contentType, limit: 60)) instead of a Thrift reply"
                + (snippet.map { ": \($0)" } ?? "")
        }
    }

    package var recoverySuggestion: String? {
        switch self {
        case .unexpectedStatus(let status, _):
            switch status {
            case 429, 502, 503, 504:
                return "the service is busy or down; retry later (queued notes are kept)"
            case 401, 403:
                return "check the configured Evernote host and any proxy in between, then sign in again with `enlog auth login`"
            case 404, 410:
                return "check the configured Evernote host; the service URL was not found"
            case 500...599:
                return "retry later; the Evernote service is having trouble"
            default:
                return "check the configured Evernote host and any proxy in between"
            }
        case .unexpectedContent:
            return "check the network (a captive portal or proxy may be answering) and the configured Evernote host"
        }
    }

    /// At most `limit` characters of readable text from a reply body: an HTML page's <title>
    /// (else its text without tags), whitespace collapsed, anything token-shaped redacted.
    static func snippet(of body: [UInt8], limit: Int = 120) -> String? {
        let prefix = body.prefix(16 * 1024)
        let text = String(decoding: prefix, as: UTF8.self)
        guard !text.isEmpty else { return nil }
        // Binary (e.g. a Thrift message): not worth showing.
        let controls = text.unicodeScalars.filter { $0.value < 0x20 && $0 != "\n" && $0 != "\r" && $0 != "\t" }.count
        if controls > 0 { return nil }
        var readable = text
        if let open = text.range(of: "<title", options: .caseInsensitive),
           let close = text.range(of: "</title>", options: .caseInsensitive, range: open.upperBound..<text.endIndex),
           let tagEnd = text[open.upperBound..<close.lowerBound].firstIndex(of: ">") {
            readable = String(text[text.index(after: tagEnd)..<close.lowerBound])
        } else if text.contains("<") {
            readable = stripTags(text)
        }
        let line = HTTPText.oneLine(redactTokens(readable), limit: limit)
        return line.isEmpty ? nil : line
    }

    private static func stripTags(_ text: String) -> String {
        var out = ""
        var inTag = false
        for ch in text {
            if ch == "<" { inTag = true; out.append(" "); continue }
            if ch == ">" { inTag = false; continue }
            if !inTag { out.append(ch) }
        }
        return out
    }

    /// Replaces anything shaped like an Evernote token (`S=s1:U=…`) or a long opaque string.
    static func redactTokens(_ text: String) -> String {
        text.split(separator: " ", omittingEmptySubsequences: false).map { word -> String in
            let w = String(word)
            if w.contains("S=s") && w.contains(":U=") { return "[redacted]" }
            if w.count >= 32 && w.allSatisfy({ $0.isLetter || $0.isNumber || "-_.=:+/%".contains($0) })
                && w.contains(where: { $0.isNumber }) { return "[redacted]" }
            return w
        }.joined(separator: " ")
    }
}

/// Thrift binary protocol over HTTP POST (PROTOCOL.md §3.1): one unframed CALL message per
/// request, HTTP 200 with one REPLY/EXCEPTION message back.
package struct ThriftHTTPTransport: ThriftTransport {
    package let url: String
    package let client: HTTPClient
    /// Called with `HTTPResponse.primaryIP` after each successful round trip (a Thrift reply
    /// came back), so a caller can remember the address that worked for when DNS does not.
    package let onConnected: (@Sendable (_ primaryIP: String) -> Void)?
    /// Called when a reply came back to a request that went out twice (`HTTPResponse.resent`),
    /// whatever the reply says: the service may have processed both copies.
    package let onResent: (@Sendable () -> Void)?

    package init(url: String, client: HTTPClient = HTTPClient(),
                onConnected: (@Sendable (_ primaryIP: String) -> Void)? = nil,
                onResent: (@Sendable () -> Void)? = nil) {
        self.url = url
        self.client = client
        self.onConnected = onConnected
        self.onResent = onResent
    }

    package func roundTrip(_ request: [UInt8]) async throws -> [UInt8] {
        let response = try await client.send(HTTPRequest(
            method: "POST", url: url,
            headers: [(name: "Content-Type", value: "application/x-thrift"),
                      (name: "Accept", value: "application/x-thrift")],
            body: request))
        if response.resent { onResent?() }
        guard response.status == 200 else {
            throw ThriftHTTPError.unexpectedStatus(status: response.status,
                                                   snippet: ThriftHTTPError.snippet(of: response.body))
        }
        if let contentType = response.headers["content-type"]?.lowercased(),
           contentType.hasPrefix("text/html") || contentType.hasPrefix("text/plain") {
            throw ThriftHTTPError.unexpectedContent(contentType: contentType,
                                                    snippet: ThriftHTTPError.snippet(of: response.body))
        }
        if let ip = response.primaryIP { onConnected?(ip) }
        return response.body
    }
}

extension ThriftHTTPError {
    package var category: ErrorCategory {
        switch self {
        case .unexpectedStatus(let status, _): return .ofHTTPStatus(status)
        case .unexpectedContent: return .protocolError
        }
    }
}
