import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Support
import EvernoteAPI
import Configuration

/// What to probe. Every address is an IP literal with a port: reachability never resolves a host
/// name, so a dead uplink cannot make it wait for a DNS timeout. The one exception is a proxy
/// given by name (see `proxy`).
package struct ReachabilityConfiguration: Sendable, Equatable {
    /// Well-known anycast literals, used only when nothing else is configured. Tests never use these.
    package static let defaultProbeAddresses = [
        "1.1.1.1:443", "8.8.8.8:443", "9.9.9.9:443", "[2606:4700:4700::1111]:443",
    ]
    package static let defaultBudget: Duration = .milliseconds(1500)

    /// `"1.1.1.1:443"`, `"[2606:4700::1111]:443"`.
    package var probeAddresses: [String]
    /// Where the NoteStore host was last reached (`ip:port`); probed first.
    package var rememberedAddresses: [String]
    /// From `https_proxy` when set: the proxy is probed instead of everything else. An IP literal,
    /// or a host name — then resolved only by a `getaddrinfo` bounded by the same budget, on its own thread.
    package var proxy: String?
    /// The whole check, route check and name lookup included.
    package var budget: Duration

    package init(probeAddresses: [String] = [], rememberedAddresses: [String] = [], proxy: String? = nil,
                budget: Duration = ReachabilityConfiguration.defaultBudget) {
        self.probeAddresses = probeAddresses
        self.rememberedAddresses = rememberedAddresses
        self.proxy = proxy
        self.budget = budget
    }

    /// `https_proxy` / `HTTPS_PROXY` from `environment`, empty values ignored.
    package static func proxy(from environment: [String: String]) -> String? {
        for key in ["https_proxy", "HTTPS_PROXY"] {
            if let value = environment[key]?.reachabilityTrimmed, !value.isEmpty { return value }
        }
        return nil
    }
}

/// One probe step against one address.
package struct ReachabilityAttempt: Sendable, Equatable {
    package enum Phase: String, Sendable { case route, tcp }
    package enum Outcome: String, Sendable {
        /// Route check: the kernel has a route (nothing was sent).
        case routed
        /// TCP handshake completed.
        case connected
        /// RST: no listener, but something on the far side answered — the network works.
        case refused
        /// ENETUNREACH/EHOSTUNREACH: no route (locally, or an ICMP unreachable on the way).
        case noRoute
        /// No answer within the budget.
        case timedOut
        /// Still pending when another address answered first.
        case abandoned
        /// Any other socket error (see `errorCode`).
        case failed

        /// Something answered: the network path works.
        package var isAnswer: Bool { self == .connected || self == .refused }
    }

    package let address: String
    package let phase: Phase
    package let outcome: Outcome
    package let errorCode: Int32?
    package let milliseconds: Double
}

package enum ReachabilityVerdict: Sendable, Equatable {
    /// Something at `address` answered (handshake or RST).
    case reachable(ReachabilityAddress)
    /// A route exists (the link is up) but no probe answered within the budget: no uplink.
    case noUplink
    /// No route to any probe address: no network at all.
    case offline

    package var name: String {
        switch self {
        case .reachable: return "reachable"
        case .noUplink: return "noUplink"
        case .offline: return "offline"
        }
    }
}

package struct ReachabilityReport: Sendable {
    package let verdict: ReachabilityVerdict
    /// Route checks first, then TCP attempts (none when the route check decided).
    package let attempts: [ReachabilityAttempt]
    package let elapsed: Duration
    /// Set when a proxy host name had to be resolved (the one case a name is involved).
    package let resolvedProxyName: String?
    /// Remarks for the user (proxy lookup, skipped inputs).
    package let notes: [String]

    /// True when no TCP attempt was made: the route check alone gave the verdict.
    package var decidedByRouteCheck: Bool { !attempts.isEmpty && !attempts.contains { $0.phase == .tcp } }

    package var elapsedMilliseconds: Double {
        let parts = elapsed.components
        return Double(parts.seconds) * 1000 + Double(parts.attoseconds) / 1e15
    }

    /// The report as one JSON object (keys sorted), the `enlog reachability --json` output.
    /// - Parameter targets: what was probed and why (`enlog reachability` adds it).
    package func json(pretty: Bool = false, targets: [String: Any]? = nil) -> String {
        var object: [String: Any] = [
            "verdict": verdict.name,
            "elapsedMilliseconds": (elapsedMilliseconds * 10).rounded() / 10,
            "decidedByRouteCheck": decidedByRouteCheck,
            "attempts": attempts.map { attempt -> [String: Any] in
                var entry: [String: Any] = [
                    "address": attempt.address, "phase": attempt.phase.rawValue,
                    "outcome": attempt.outcome.rawValue,
                    "milliseconds": (attempt.milliseconds * 10).rounded() / 10,
                ]
                if let code = attempt.errorCode {
                    entry["errno"] = Int(code)
                    entry["error"] = String(cString: strerror(code))
                }
                return entry
            },
        ]
        if case .reachable(let address) = verdict { object["address"] = address.description }
        if let name = resolvedProxyName { object["resolvedProxyName"] = name }
        if !notes.isEmpty { object["notes"] = notes }
        if let targets { object["targets"] = targets }
        var options: JSONSerialization.WritingOptions = [.sortedKeys, .withoutEscapingSlashes]
        if pretty { options.insert(.prettyPrinted) }
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: options) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}

/// Tells "reachable" from "link up, no uplink" from "offline" within a fixed budget, by IP address only.
package enum ReachabilityChecker {
    /// Validates one `ip:port` / `[ipv6]:port` literal. Host names throw `ReachabilityError.notAnAddress`.
    package static func parse(address: String) throws -> ReachabilityAddress {
        try ReachabilityAddress(parsing: address)
    }

    /// Parses every configured address up front, so a bad one fails before anything is probed.
    package static func validate(_ configuration: ReachabilityConfiguration) throws {
        for text in configuration.rememberedAddresses + configuration.probeAddresses {
            _ = try parse(address: text)
        }
        if let proxy = configuration.proxy { _ = try ProxyTarget(parsing: proxy) }
    }

    /// Runs the check: a proxy given by name is resolved first (a lookup bounded by the budget), then
    /// the probes block in `poll()` for up to the rest of the budget, on a thread of their own.
    package static func check(_ configuration: ReachabilityConfiguration) async -> ReachabilityReport {
        let start = ReachabilityClock.now()
        var proxyLookup: ProxyLookup?
        if let proxyText = configuration.proxy, case .name(let name, let port)? = try? ProxyTarget(parsing: proxyText) {
            let answer = try? await NameLookup.resolve(name, port: port, within: configuration.budget)
            proxyLookup = ProxyLookup(addresses: answer?.addresses ?? [], timedOut: answer == nil)
        }
        return await BlockingCall.run("enlog.reachability") { [proxyLookup] _ in
            probe(configuration, start: start, proxyLookup: proxyLookup)
        }
    }

    /// The lookup of a proxy given by name: what it found, and whether it ran out of budget.
    struct ProxyLookup: Sendable {
        var addresses: [ReachabilityAddress]
        var timedOut: Bool
    }

    /// The check after the proxy lookup, on the calling thread (it blocks).
    static func probe(_ configuration: ReachabilityConfiguration, start: UInt64, proxyLookup: ProxyLookup?) -> ReachabilityReport {
        let parts = max(configuration.budget, .zero).components
        let budgetNanos = UInt64(parts.seconds) * 1_000_000_000 + UInt64(parts.attoseconds / 1_000_000_000)
        let deadline = start + budgetNanos
        var notes: [String] = []
        var resolvedProxyName: String?

        func report(_ verdict: ReachabilityVerdict, _ attempts: [ReachabilityAttempt]) -> ReachabilityReport {
            let elapsed = ReachabilityClock.now() - start
            return ReachabilityReport(verdict: verdict, attempts: attempts,
                                      elapsed: .nanoseconds(Int64(elapsed)),
                                      resolvedProxyName: resolvedProxyName, notes: notes)
        }

        // 1. Targets: the proxy alone when there is one, else remembered addresses then probes (or defaults).
        var targets: [ReachabilityAddress] = []
        if let proxyText = configuration.proxy {
            do {
                switch try ProxyTarget(parsing: proxyText) {
                case .address(let address):
                    targets = [address]
                case .name(let name, _):
                    resolvedProxyName = name
                    notes.append("proxy \(name) is a host name: resolved with a lookup bounded by the budget")
                    let lookup = proxyLookup ?? ProxyLookup(addresses: [], timedOut: false)
                    if lookup.timedOut {
                        notes.append("proxy name \(name) did not resolve within the budget")
                    } else if lookup.addresses.isEmpty {
                        notes.append("proxy name \(name) did not resolve")
                    }
                    targets = lookup.addresses
                    if targets.isEmpty { return report(.noUplink, []) }
                }
            } catch {
                notes.append("ignored proxy: \((error as? ReachabilityError)?.reason ?? "\(error)")")
            }
        }
        if targets.isEmpty, configuration.proxy == nil || !notes.isEmpty {
            var texts = configuration.rememberedAddresses + configuration.probeAddresses
            if texts.isEmpty { texts = ReachabilityConfiguration.defaultProbeAddresses }
            for text in texts {
                do {
                    let address = try parse(address: text)
                    if !targets.contains(address) { targets.append(address) }
                } catch {
                    notes.append("ignored: \((error as? ReachabilityError)?.reason ?? "\(error)")")
                }
            }
        }
        if targets.isEmpty { return report(.offline, []) }

        // 2. Route check: UDP connect() sends nothing and fails at once when there is no route.
        let routeAttempts = targets.map(ReachabilityProbe.routeCheck)
        let routable = zip(targets, routeAttempts).filter { $0.1.outcome == .routed }.map(\.0)
        if routable.isEmpty { return report(.offline, routeAttempts) }

        // 3. TCP connect to every routable address in parallel; the first answer wins.
        let race = ReachabilityProbe.race(routable, deadline: deadline)
        if let winner = race.winner {
            return report(.reachable(routable[winner]), routeAttempts + race.attempts)
        }
        return report(.noUplink, routeAttempts + race.attempts)
    }
}

/// A proxy from `https_proxy`: `http://[user:pw@]host[:port][/]`, the host an IP literal or a name.
enum ProxyTarget: Equatable {
    case address(ReachabilityAddress)
    case name(String, UInt16)

    init(parsing text: String) throws {
        var rest = Substring(text.reachabilityTrimmed)
        var defaultPort: UInt16 = 1080   // curl's default proxy port
        if let scheme = rest.range(of: "://") {
            if rest[..<scheme.lowerBound].lowercased() == "https" { defaultPort = 443 }
            rest = rest[scheme.upperBound...]
        }
        if let slash = rest.firstIndex(of: "/") { rest = rest[..<slash] }
        if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
        guard !rest.isEmpty else { throw ReachabilityError.notAnAddress(text) }

        var host: Substring
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw ReachabilityError.notAnAddress(text) }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if after.hasPrefix(":") { portText = after.dropFirst() }
        } else if let colon = rest.lastIndex(of: ":"), rest.filter({ $0 == ":" }).count == 1 {
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        } else {
            host = rest
        }
        var port = defaultPort
        if let portText {
            guard let value = UInt16(portText), value != 0 else { throw ReachabilityError.invalidPort(text) }
            port = value
        }
        if let address = try? ReachabilityAddress(host: String(host), port: port) {
            self = .address(address)
            return
        }
        let valid = host.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == ".") }
        guard valid, !host.isEmpty else { throw ReachabilityError.notAnAddress(text) }
        self = .name(String(host), port)
    }
}
