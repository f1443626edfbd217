import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Auth
import Capture
import Compose
import Outbox
import Diary

/// The NoteStore URL's host and port, as a sync connects to them.
struct NoteStoreEndpoint: Equatable {
    /// Lowercased; IPv6 without brackets.
    var host: String
    var port: Int
    /// False when the URL names the host by an address literal (nothing to resolve).
    var isName: Bool

    init?(url: String) {
        guard let components = URLComponents(string: url), let rawHost = components.host, !rawHost.isEmpty else { return nil }
        host = rawHost.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased()
        port = components.port ?? (components.scheme?.lowercased() == "http" ? 80 : 443)
        isName = SyncReachability.addressLiteral(of: url) == nil
    }
}

/// How a sync reaches a NoteStore host given by name without ever waiting on DNS for long: one
/// `getaddrinfo` bounded by `network.dns_timeout`, and the transfer pinned (CURLOPT_RESOLVE) to
/// what it found — so libcurl does not resolve again, unbounded — or, when the lookup failed or
/// timed out, to the address remembered from an earlier sync. TLS is still verified against the
/// name: CURLOPT_RESOLVE only replaces the lookup.
package enum NoteStoreAddressing {
    package struct Decision: Sendable, Equatable {
        /// `HTTPConfiguration.resolve` entries ("host:port:addr[,addr…]"); empty: libcurl resolves.
        package var resolve: [String] = []
        /// One line for verbose output: what was decided and why.
        package var note: String?
    }

    /// Resolves the NoteStore host through `NameLookup` (its own thread, abandoned after `timeout`
    /// or when the sync is cancelled), so that no cooperative thread waits on DNS.
    static func decide(endpoint: NoteStoreEndpoint, remembered: String?, timeout: Duration,
                       resolver: @escaping NameLookup.Resolver = NameLookup.system) async throws -> Decision {
        guard endpoint.isName, let port = UInt16(exactly: endpoint.port) else { return Decision() }
        let started = ReachabilityClock.now()
        let answer = try await NameLookup.resolve(endpoint.host, port: port, within: max(timeout, .milliseconds(1)),
                                                  using: resolver)
        let milliseconds = (ReachabilityClock.now() - started) / 1_000_000
        let addresses = answer?.addresses ?? []
        if !addresses.isEmpty {
            let list = addresses.map { $0.family == .ipv6 ? "[\($0.host)]" : $0.host }.joined(separator: ",")
            return Decision(resolve: ["\(endpoint.host):\(endpoint.port):\(list)"],
                            note: "\(endpoint.host) resolved in \(milliseconds) ms to \(list)")
        }
        let why = answer == nil ? "did not resolve within \(milliseconds) ms" : "did not resolve"
        guard let remembered, let address = try? ReachabilityChecker.parse(address: remembered) else {
            return Decision(note: "\(endpoint.host) \(why); no remembered address")
        }
        let literal = address.family == .ipv6 ? "[\(address.host)]" : address.host
        return Decision(resolve: ["\(endpoint.host):\(endpoint.port):\(literal)"],
                        note: "\(endpoint.host) \(why); using the remembered address \(remembered)")
    }
}
