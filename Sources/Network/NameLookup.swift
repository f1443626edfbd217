#if canImport(Glibc)
import Glibc
#endif
import Support
import EvernoteAPI
import Configuration

/// A name lookup (`getaddrinfo`) that never waits longer than its caller allows: it runs on a thread
/// of its own (not the cooperative pool) and is abandoned — left to finish in the background, its
/// answer dropped — when its budget passes or the calling task is cancelled. Nothing can interrupt
/// `getaddrinfo` itself, which waits as long as resolv.conf says (seconds per server, per try).
package enum NameLookup {
    /// One address `getaddrinfo` returned, as a copy of its socket address.
    package struct Entry: Sendable, Equatable {
        package var family: Int32
        package var socketType: Int32
        package var protocolNumber: Int32
        var socketAddress: [UInt8]

        /// The address as an IP literal with its port (nil for a family other than IPv4/IPv6).
        var reachabilityAddress: ReachabilityAddress? {
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
            var port: UInt16 = 0
            let converted: Bool = socketAddress.withUnsafeBytes { raw in
                switch family {
                case AF_INET where raw.count >= MemoryLayout<sockaddr_in>.size:
                    var address = raw.loadUnaligned(as: sockaddr_in.self)
                    port = UInt16(bigEndian: address.sin_port)
                    return inet_ntop(AF_INET, &address.sin_addr, &text, socklen_t(text.count)) != nil
                case AF_INET6 where raw.count >= MemoryLayout<sockaddr_in6>.size:
                    var address = raw.loadUnaligned(as: sockaddr_in6.self)
                    port = UInt16(bigEndian: address.sin6_port)
                    return inet_ntop(AF_INET6, &address.sin6_addr, &text, socklen_t(text.count)) != nil
                default:
                    return false
                }
            }
            guard converted else { return nil }
            let literal = text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            return try? ReachabilityAddress(host: literal, port: port)
        }

        package func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
            socketAddress.withUnsafeBytes { raw in
                body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
            }
        }
    }

    /// What `getaddrinfo` returned: its status (0, or an `EAI_*` code for `gai_strerror`) and the addresses.
    package struct Answer: Sendable, Equatable {
        package var status: Int32
        package var entries: [Entry]

        package var failureDescription: String { String(cString: gai_strerror(status)) }

        /// The distinct IP literals with their ports, in the resolver's order.
        package var addresses: [ReachabilityAddress] {
            var found: [ReachabilityAddress] = []
            for address in entries.compactMap(\.reachabilityAddress) where !found.contains(address) {
                found.append(address)
            }
            return found
        }
    }

    /// The blocking lookup for TCP addresses of `name` and `port`, with `getaddrinfo` flags (`AI_*`).
    /// A seam: tests give one that blocks until they release it.
    package typealias Resolver = @Sendable (_ name: String, _ port: UInt16, _ flags: Int32) -> Answer

    /// Flags for a lookup that only wants addresses this host can use (numeric port, configured families).
    package static let configuredAddresses = AI_NUMERICSERV | AI_ADDRCONFIG

    package static let system: Resolver = { name, port, flags in
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = flags
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(name, String(port), &hints, &list)
        defer { if list != nil { freeaddrinfo(list) } }
        var entries: [Entry] = []
        var cursor = list
        while let entry = cursor?.pointee {
            if let address = entry.ai_addr {
                entries.append(Entry(family: entry.ai_family, socketType: entry.ai_socktype, protocolNumber: entry.ai_protocol,
                                     socketAddress: Array(UnsafeRawBufferPointer(start: address, count: Int(entry.ai_addrlen)))))
            }
            cursor = entry.ai_next
        }
        return Answer(status: status, entries: entries)
    }

    /// The answer for `name`, or nil when none came within `budget` (the lookup is then abandoned).
    /// Throws `CancellationError` at once when the calling task is cancelled.
    package static func resolve(_ name: String, port: UInt16, flags: Int32 = configuredAddresses, within budget: Duration,
                        using resolver: @escaping Resolver = system) async throws -> Answer? {
        do {
            return try await withDeadline(max(budget, .zero)) {
                try await BlockingCall.run("enlog.dns", onCancel: .abandon) { _ in resolver(name, port, flags) }
            }
        } catch is DeadlineExceeded {
            return nil
        }
    }
}
