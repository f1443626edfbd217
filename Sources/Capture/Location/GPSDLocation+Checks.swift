import Foundation
import Support
import Configuration
import Network

extension GPSDLocation {
    /// gpsd's address must be HOST:PORT, checked when the configuration is read.
    package static let settingChecks: [Setting: SettingCheck] = [
        .gpsd: { (try? Endpoint(parsing: $0)) == nil ? "is '\($0)'; it must be HOST:PORT with a port from 1 to 65535" : nil },
    ]
}
