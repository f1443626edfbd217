import Foundation

/// Which addresses `enlog sync` probes before it tries to upload: configured probes, else the
/// NoteStore host itself when its URL names it by address, and for a host name the address an
/// earlier sync reached it at (`remembered`, from `SyncState`); never a name, so the check
/// cannot hang on DNS.
public enum SyncReachability {
    public static func configuration(noteStoreURL: String, probes: [String], budget: Duration,
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
