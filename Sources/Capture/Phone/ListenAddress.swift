import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Support
import Configuration
import Network

/// Where `enlog serve` listens: an IP literal and a port (`serve.listen`, `--listen`). A name is
/// refused: which interface it means would depend on a lookup at each start.
package struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    package var host: String
    /// 0: a free port the kernel picks (printed once listening).
    package var port: Int

    package init?(parsing text: String) {
        let text = text.trimmingCharacters(in: .whitespaces)
        let host: Substring, port: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[close...].hasPrefix("]:") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            port = text[text.index(close, offsetBy: 2)...]
            var address = in6_addr()
            guard inet_pton(AF_INET6, String(host), &address) == 1 else { return nil }
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            host = text[..<colon]
            port = text[text.index(after: colon)...]
            var address = in_addr()
            guard inet_pton(AF_INET, String(host), &address) == 1 else { return nil }
        }
        guard port.allSatisfy(\.isASCII), let number = Int(port), (0...65_535).contains(number) else { return nil }
        self.host = String(host)
        self.port = number
    }

    package var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    package static let settingChecks: [Setting: SettingCheck] = [
        .serveListen: { ListenAddress(parsing: $0) == nil ? "is '\($0)'; it must be an IP address and a port, ADDR:PORT or [IPv6]:PORT (port 0 to 65535)" : nil },
        .serveURL: { text in
            guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host?.isEmpty == false,
                  url.query == nil, url.fragment == nil else {
                return "is '\(text)'; it must be an http:// or https:// URL without a query, such as https://example.org/enlog"
            }
            return nil
        },
    ]
}
