import Capture
import Compose
import Configuration
import Network

/// Every concern's rules for its settings' values, handed to `Config` when it is read, so that a
/// bad value is refused at once whichever command runs, while the configuration itself knows
/// nothing of maps, gpsd or notes.
package enum SettingChecks {
    package static let all: [Setting: SettingCheck] = MapSettings.settingChecks
        .merging(NoteStyle.settingChecks) { first, _ in first }
        .merging(GPSDLocation.settingChecks) { first, _ in first }
        .merging(ReachabilityAddress.settingChecks) { first, _ in first }
        .merging(CABundle.settingChecks) { first, _ in first }
        .merging(ListenAddress.settingChecks) { first, _ in first }
        .merging(MQTTBroker.settingChecks) { first, _ in first }
}
