import Support
import EvernoteAPI
import Configuration
/// Every way an HTTP exchange can fail below the HTTP status line. Payloads are host names or
/// short curl messages, never URLs' query strings, headers or bodies (they may carry secrets).
package enum HTTPError: ENLogError, Equatable {
    /// `http://` to a host that is not loopback; refused before any connection.
    case insecureURL(String)
    case invalidURL(String)
    case couldNotResolveHost(String)
    case couldNotConnect(String)
    case timedOut
    /// The connection broke after the request may have been sent: the server may have acted on it.
    case connectionLost
    case tls(String)
    case responseTooLarge
    /// A reply header line over libcurl's limit (100 KB), which libcurl reports as out of memory.
    case headerTooLarge
    case cancelled
    /// The server answered, but not in HTTP a client can use: a `Content-Encoding` libcurl
    /// cannot undo (`gzip, gzip`, an unknown coding), a status line or header that is no HTTP,
    /// endless redirects, a range it was not asked for. Something answered, so it is not that
    /// the service "cannot be reached": like an HTML page where JSON belongs, a protocol error.
    case badReply(String)
    /// `network.ca_file` cannot be used: unreadable, not a regular file, or larger than any CA bundle.
    case caFileUnusable(path: String, detail: String)
    case other(code: Int, message: String)

    package var reason: String {
        switch self {
        case .insecureURL(let host):
            return "refusing to send an unencrypted http:// request to \(HTTPText.oneLine(host))"
        case .invalidURL(let what):
            return "not a usable http(s) URL: \(HTTPText.oneLine(what))"
        case .couldNotResolveHost(let host):
            return "could not resolve the host name \(HTTPText.oneLine(host))"
        case .couldNotConnect(let host):
            return "could not connect to \(HTTPText.oneLine(host))"
        case .timedOut:
            return "the network request timed out"
        case .connectionLost:
            return "the connection was lost before the reply was complete (the request may have been processed)"
        case .tls(let message):
            return "the secure (TLS) connection failed: \(HTTPText.oneLine(message))"
        case .responseTooLarge:
            return "the server's reply was larger than the allowed size"
        case .headerTooLarge:
            return "the server's reply has a header line larger than 100 KB (libcurl's limit)"
        case .cancelled:
            return "the network request was cancelled"
        case .badReply(let detail):
            return "the server's reply is not usable HTTP: \(HTTPText.oneLine(detail))"
        case let .caFileUnusable(path, detail):
            return "network.ca_file \(HTTPText.oneLine(path)) cannot be used: \(HTTPText.oneLine(detail))"
        case .other(let code, let message):
            return "network error (curl \(code)): \(HTTPText.oneLine(message))"
        }
    }

    package var recoverySuggestion: String? {
        switch self {
        case .insecureURL:
            return "use an https:// URL; plain http:// is only allowed to loopback test servers (127.0.0.0/8, ::1, localhost)"
        case .invalidURL:
            return "check the configured host or URL"
        case .couldNotResolveHost:
            return "check the network connection and DNS, and the configured host name"
        case .couldNotConnect:
            return "check the network connection, firewall and proxy settings (https_proxy, no_proxy), then retry"
        case .timedOut:
            return "retry later; the network or the server is slow"
        case .connectionLost:
            return "retry later; a note that was being created may already exist"
        case .tls:
            return "check the system clock and the CA certificates (package ca-certificates); a proxy that intercepts TLS is not trusted"
        case .responseTooLarge, .headerTooLarge, .badReply:
            return "check that the configured host is the real service (a proxy or a captive portal may answer in its place)"
        case .cancelled:
            return nil
        case .caFileUnusable:
            return "point network.ca_file at a PEM file of CA certificates, or remove it to trust the system's"
        case .other:
            return "retry later; if it persists, check the network and proxy settings"
        }
    }
}

extension HTTPError {
    /// Something answered, but nothing that can be the service's reply: too much, or not HTTP.
    /// Every user of the client tells these apart from a service out of reach by this.
    package var isBadReply: Bool {
        switch self {
        case .responseTooLarge, .headerTooLarge, .badReply: return true
        default: return false
        }
    }

    package var category: ErrorCategory {
        if isBadReply { return .protocolError }
        switch self {
        case .cancelled: return .temporary
        case .caFileUnusable: return .config
        default: return .unavailable
        }
    }
}
