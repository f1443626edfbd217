#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Support
import EvernoteAPI
import Configuration

/// Why a reachability input was refused at the boundary.
package enum ReachabilityError: ENLogError, Equatable, Sendable {
    /// The host part is not an IPv4/IPv6 literal (a host name, typically): reachability never resolves names.
    case notAnAddress(String)
    /// No `:port` (IPv6 literals must be bracketed: `[2606:4700::1111]:443`).
    case missingPort(String)
    /// The port is not a number in 1…65535.
    case invalidPort(String)

    package var reason: String {
        switch self {
        case .notAnAddress(let text):
            return "reachability probe '\(text)' is not an IP address literal (host names are never resolved for probing)"
        case .missingPort(let text):
            return "reachability probe '\(text)' has no port"
        case .invalidPort(let text):
            return "reachability probe '\(text)' has an invalid port"
        }
    }

    package var recoverySuggestion: String? {
        switch self {
        case .notAnAddress:
            return "give an IP literal with a port, e.g. 1.1.1.1:443 or [2606:4700:4700::1111]:443"
        case .missingPort:
            return "add a port, e.g. 1.1.1.1:443 or [2606:4700:4700::1111]:443"
        case .invalidPort:
            return "use a port between 1 and 65535"
        }
    }
}

/// An IP literal plus a TCP port: the only kind of target a reachability probe accepts.
package struct ReachabilityAddress: Hashable, Sendable, CustomStringConvertible {
    package enum Family: String, Sendable { case ipv4, ipv6 }

    package let family: Family
    /// The literal as written (without brackets), validated with `inet_pton`.
    package let host: String
    package let port: UInt16

    /// `1.1.1.1:443` or `[2606:4700::1111]:443`.
    package var description: String {
        family == .ipv6 ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// Validates without any name lookup: `inet_pton` decides whether `host` is a literal.
    package init(host: String, port: UInt16) throws {
        guard port != 0 else { throw ReachabilityError.invalidPort("\(host):\(port)") }
        if ReachabilityAddress.isLiteral(host, family: AF_INET) {
            family = .ipv4
        } else if ReachabilityAddress.isLiteral(host, family: AF_INET6) {
            family = .ipv6
        } else {
            throw ReachabilityError.notAnAddress(host)
        }
        self.host = host
        self.port = port
    }

    /// Parses `a.b.c.d:port` or `[v6]:port`. Anything else — notably `host.name:port` — throws.
    package init(parsing text: String) throws {
        let trimmed = text.reachabilityTrimmed
        let hostPart: Substring
        let portPart: Substring
        if trimmed.hasPrefix("[") {
            guard let close = trimmed.firstIndex(of: "]") else { throw ReachabilityError.notAnAddress(text) }
            hostPart = trimmed[trimmed.index(after: trimmed.startIndex)..<close]
            let rest = trimmed[trimmed.index(after: close)...]
            guard rest.hasPrefix(":"), rest.count > 1 else { throw ReachabilityError.missingPort(text) }
            portPart = rest.dropFirst()
            guard ReachabilityAddress.isLiteral(String(hostPart), family: AF_INET6) else {
                throw ReachabilityError.notAnAddress(text)
            }
        } else {
            let colons = trimmed.filter { $0 == ":" }.count
            if colons > 1 {
                // A bare IPv6 literal: the port cannot be told apart from the last group.
                if ReachabilityAddress.isLiteral(trimmed, family: AF_INET6) { throw ReachabilityError.missingPort(text) }
                throw ReachabilityError.notAnAddress(text)
            }
            guard colons == 1, let colon = trimmed.firstIndex(of: ":") else {
                if ReachabilityAddress.isLiteral(trimmed, family: AF_INET) { throw ReachabilityError.missingPort(text) }
                throw ReachabilityError.notAnAddress(text)
            }
            hostPart = trimmed[..<colon]
            portPart = trimmed[trimmed.index(after: colon)...]
            guard ReachabilityAddress.isLiteral(String(hostPart), family: AF_INET) else {
                throw ReachabilityError.notAnAddress(text)
            }
        }
        guard !portPart.isEmpty, portPart.allSatisfy({ $0.isASCII && $0.isNumber }),
              let port = UInt16(portPart), port != 0 else {
            throw ReachabilityError.invalidPort(text)
        }
        try self.init(host: String(hostPart), port: port)
    }

    static func isLiteral(_ text: String, family: Int32) -> Bool {
        guard !text.isEmpty, !text.contains("%") else { return false }
        var buffer = in6_addr()   // large enough for in_addr too
        return withUnsafeMutableBytes(of: &buffer) { inet_pton(family, text, $0.baseAddress) == 1 }
    }

    /// The socket address, built from the literal only (asserts that it is one: no resolution here).
    func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        switch family {
        case .ipv4:
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            return withLiteral(in: address, at: \.sin_addr, family: AF_INET, body)
        case .ipv6:
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            return withLiteral(in: address, at: \.sin6_addr, family: AF_INET6, body)
        }
    }

    /// `address` with the host literal parsed into its `field`, seen as a `sockaddr`.
    private func withLiteral<Address, Field, R>(in address: Address, at field: WritableKeyPath<Address, Field>, family: Int32,
                                                _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        var address = address
        let converted = withUnsafeMutablePointer(to: &address[keyPath: field]) { inet_pton(family, host, $0) }
        precondition(converted == 1, "reachability: \(host) is not an IPv\(family == AF_INET ? 4 : 6) literal")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<Address>.size)) }
        }
    }

    var addressFamily: Int32 { family == .ipv4 ? AF_INET : AF_INET6 }
}

extension String {
    package var reachabilityTrimmed: String {
        var scalars = Substring(self)
        while let first = scalars.first, first == " " || first == "\t" || first == "\n" { scalars = scalars.dropFirst() }
        while let last = scalars.last, last == " " || last == "\t" || last == "\n" { scalars = scalars.dropLast() }
        return String(scalars)
    }
}

extension ReachabilityError {
    package var category: ErrorCategory { .usage }
}
