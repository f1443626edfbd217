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

/// Which addresses `enlog sync` probes before it tries to upload: configured probes, else the
/// NoteStore host itself when its URL names it by address, and for a host name the address an
/// earlier sync reached it at (`remembered`, from `OutboxStore.noteStoreAddress`); never a name, so the check
/// cannot hang on DNS.
package enum SyncReachability {
    /// What a sync checks for an account, and what it needs to connect afterwards.
    package struct Plan: Sendable {
        package var configuration: ReachabilityConfiguration
        /// The address an earlier sync reached the NoteStore host at (host names only, no proxy).
        package var remembered: String?
        /// `https_proxy` is set: the proxy is probed and resolves the host.
        package var proxied: Bool
    }

    /// The reachability check `enlog sync` makes before uploading for the NoteStore at
    /// `noteStoreURL`: the one `enlog reachability` also makes when signed in.
    /// - Parameter outbox: where the remembered address is kept; nil (no outbox yet): none.
    package static func plan(config: Config, outbox: OutboxStore?, noteStoreURL: String,
                            environment: [String: String]) async throws -> Plan {
        // Through a proxy, the proxy resolves the host and is the address connected to: neither
        // a local lookup nor a remembered NoteStore address applies.
        let proxied = ReachabilityConfiguration.proxy(from: environment) != nil
        var remembered: String?
        if let outbox, let endpoint = NoteStoreEndpoint(url: noteStoreURL), endpoint.isName, !proxied {
            remembered = try await outbox.noteStoreAddress(host: endpoint.host)
        }
        let reachability = configuration(noteStoreURL: noteStoreURL, probes: config.list(.probes),
                                         budget: config.duration(.probeBudget), environment: environment,
                                         remembered: remembered.map { [$0] } ?? [])
        try ReachabilityChecker.validate(reachability)
        return Plan(configuration: reachability, remembered: remembered, proxied: proxied)
    }

    /// The targets a check uses, for `enlog reachability` to show: the proxy alone when set,
    /// else the NoteStore's remembered address (or its address literal) first, then the probes.
    package static func targets(of configuration: ReachabilityConfiguration) -> (proxy: String?, remembered: [String], probes: [String]) {
        if let proxy = configuration.proxy { return (proxy, [], []) }
        let probes = configuration.probeAddresses.isEmpty ? ReachabilityConfiguration.defaultProbeAddresses
            : configuration.probeAddresses
        return (nil, configuration.rememberedAddresses, probes.filter { !configuration.rememberedAddresses.contains($0) })
    }

    package static func configuration(noteStoreURL: String, probes: [String], budget: Duration,
                                     environment: [String: String],
                                     remembered: [String] = []) -> ReachabilityConfiguration {
        var configuration = ReachabilityConfiguration()
        configuration.budget = budget
        configuration.proxy = ReachabilityConfiguration.proxy(from: environment)
        if !probes.isEmpty {
            configuration.probeAddresses = probes
        }
        if let literal = addressLiteral(of: noteStoreURL) {
            configuration.rememberedAddresses = [literal]
            if probes.isEmpty { configuration.probeAddresses = [literal] }
        } else {
            // Only literals: a bad stored value must not turn into a name lookup or a failure.
            configuration.rememberedAddresses = remembered.filter { (try? ReachabilityChecker.parse(address: $0)) != nil }
        }
        return configuration
    }

    /// `http://127.0.0.1:8080/x` → `127.0.0.1:8080`, `https://[::1]/x` → `[::1]:443`; nil for names.
    static func addressLiteral(of url: String) -> String? {
        guard let components = URLComponents(string: url), let host = components.host else { return nil }
        let port = components.port ?? (components.scheme == "http" ? 80 : 443)
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        let candidate = bare.contains(":") ? "[\(bare)]:\(port)" : "\(bare):\(port)"
        return (try? ReachabilityChecker.parse(address: candidate)) != nil ? candidate : nil
    }
}
