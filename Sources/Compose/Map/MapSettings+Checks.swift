import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Capture

extension MapSettings {
    /// What the map's settings require of their values, for `Config` to check when it is read.
    package static let settingChecks: [Setting: SettingCheck] = [
        .mapStyle: { MapStyle(rawValue: $0) == nil ? "must be tiles, static or none" : nil },
        .tileURL: { TileURLTemplate.problem($0) },
    ]
}
