import Foundation
import Support
import Configuration

extension CABundle {
    /// `network.ca_file` is read (within bounds) when the configuration is read, so that a path
    /// that names no usable bundle is a configuration error whichever command runs, not a
    /// network failure of the first request.
    package static let settingChecks: [Setting: SettingCheck] = [
        .caFile: { path in
            guard case .failure(let error) = bytes(at: path), case .caFileUnusable(_, let detail) = error else { return nil }
            return "cannot be used: \(detail)"
        },
    ]
}
