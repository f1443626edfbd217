import CCurl
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Support
import EvernoteAPI
import Configuration

/// The parts of a URL the client decides on, parsed by libcurl's own URL parser so that the
/// policy and the transfer can never disagree about the host.
package struct HTTPTarget: Equatable, Sendable {
    package var scheme: String      // "http" or "https"
    package var host: String        // as libcurl normalises it; IPv6 in brackets
    package var port: Int
    package var isLoopback: Bool
    /// Pool key: one keep-alive handle per scheme+host+port.
    var poolKey: String { "\(scheme)://\(host):\(port)" }
}

package enum HTTPURLPolicy {
    /// Parses `url` and applies the transport-security rule: https anywhere, http only to a
    /// loopback host (also after CURLOPT_RESOLVE overrides). Throws before any I/O.
    package static func check(_ url: String, resolve: [String]) throws(HTTPError) -> HTTPTarget {
        guard let handle = curl_url() else { throw .other(code: Int(CURLE_OUT_OF_MEMORY.rawValue), message: "out of memory") }
        defer { curl_url_cleanup(handle) }
        // Described only for an error: `describe` costs more than the parse (it ran per request).
        guard !url.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7f }) else { throw .invalidURL(describe(url)) }
        guard curl_url_set(handle, CURLUPART_URL, url, 0) == CURLUE_OK else { throw .invalidURL(describe(url)) }
        guard let scheme = part(handle, CURLUPART_SCHEME, 0)?.lowercased(),
              let host = part(handle, CURLUPART_HOST, 0), !host.isEmpty,
              let portText = part(handle, CURLUPART_PORT, UInt32(CURLU_DEFAULT_PORT)),
              let port = Int(portText)
        else { throw .invalidURL(describe(url)) }
        guard scheme == "http" || scheme == "https" else { throw .invalidURL(describe(url)) }
        let loopback = isLoopback(host)
        let target = HTTPTarget(scheme: scheme, host: host.lowercased(), port: port, isLoopback: loopback)
        if scheme == "http" {
            guard loopback else { throw .insecureURL(target.host) }
            // A resolve override could send a loopback name elsewhere: check the address too.
            for entry in resolve {
                guard let address = resolvedAddress(entry, host: target.host, port: port) else { continue }
                if !isLoopback(address) { throw .insecureURL(target.host) }
            }
        }
        return target
    }

    /// A short, secret-free description of a URL for errors: scheme and authority only.
    package static func describe(_ url: String) -> String {
        var text = Substring(url)
        if let cut = text.firstIndex(where: { $0 == "?" || $0 == "#" }) { text = text[..<cut] }
        if let schemeEnd = text.range(of: "://") {
            let rest = text[schemeEnd.upperBound...]
            let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
            var authority = rest[..<authorityEnd]
            if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
            text = text[..<schemeEnd.upperBound] + authority
        }
        return HTTPText.oneLine(String(text), limit: 80)
    }

    static func isLoopback(_ rawHost: String) -> Bool {
        var host = rawHost.lowercased()
        if host.hasSuffix(".") { host.removeLast() }
        if host == "localhost" { return true }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if let percent = host.firstIndex(of: "%") { host = String(host[..<percent]) }
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { $0[0] } == 127
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, host, &v6) == 1 {
            let bytes = withUnsafeBytes(of: &v6) { Array($0) }
            if bytes[0..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return true }           // ::1
            if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff {  // ::ffff:a.b.c.d
                return bytes[12] == 127
            }
        }
        return false
    }

    /// For a CURLOPT_RESOLVE entry "[+]host:port:addr[,addr…]" matching host/port, the first address.
    private static func resolvedAddress(_ entry: String, host: String, port: Int) -> String? {
        var text = Substring(entry)
        if text.hasPrefix("+") { text = text.dropFirst() }
        if text.hasPrefix("-") { return nil }
        let fields = text.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        guard fields.count == 3, Int(fields[1]) == port else { return nil }
        var entryHost = fields[0].lowercased()
        if entryHost.hasPrefix("["), entryHost.hasSuffix("]") { entryHost = String(entryHost.dropFirst().dropLast()) }
        var targetHost = host
        if targetHost.hasPrefix("["), targetHost.hasSuffix("]") { targetHost = String(targetHost.dropFirst().dropLast()) }
        guard entryHost == targetHost || entryHost == "*" else { return nil }
        var address = String(fields[2].split(separator: ",").first ?? "")
        if address.hasPrefix("["), address.hasSuffix("]") { address = String(address.dropFirst().dropLast()) }
        return address
    }

    private static func part(_ handle: OpaquePointer, _ what: CURLUPart, _ flags: UInt32) -> String? {
        var pointer: UnsafeMutablePointer<CChar>?
        guard curl_url_get(handle, what, &pointer, flags) == CURLUE_OK, let pointer else { return nil }
        defer { curl_free(pointer) }
        return String(cString: pointer)
    }
}
