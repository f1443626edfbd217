import Foundation
import Support
import EvernoteAPI
import Configuration

extension ReachabilityAddress {
    /// The reachability probes must be IP:PORT literals (never names), checked when the
    /// configuration is read.
    package static let settingChecks: [Setting: SettingCheck] = [
        .probes: { value in
            for item in value.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
                do {
                    _ = try ReachabilityAddress(parsing: item)
                } catch {
                    let detail = (error as? any ENLogError)?.reason ?? "\(error)"
                    return "is wrong: \(detail) (IP:PORT literals, port 1 to 65535)"
                }
            }
            return nil
        },
    ]
}
