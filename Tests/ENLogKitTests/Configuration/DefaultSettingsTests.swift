import Foundation
import XCTest
@testable import Configuration
@testable import Diary

/// Reading the configuration checks the values a user gave, not the built-in defaults (their
/// URL checks would load libcurl at every start): the defaults are checked here, once.
final class DefaultSettingsTests: XCTestCase {
    func testEveryDefaultPassesTheChecksAUserValueWould() throws {
        let home = try TemporaryDirectory()
        for setting in Setting.all {
            guard let value = setting.defaultValue, let variable = setting.environmentNames.first else { continue }
            // Given as a variable, the same value is the user's and goes through every check.
            XCTAssertNoThrow(try Config(path: nil, environment: ["HOME": home.url.path, "XDG_CONFIG_HOME": home.url.path, variable: value],
                                        checks: SettingChecks.all), setting.name)
        }
    }

    func testADefaultIsNotCheckedButTheSameValueGivenIs() throws {
        let home = try TemporaryDirectory()
        let environment = ["HOME": home.url.path, "XDG_CONFIG_HOME": home.url.path]
        let refusing: [Setting: SettingCheck] = [.tileURL: { _ in "is refused by this test" }]
        XCTAssertNoThrow(try Config(path: nil, environment: environment, checks: refusing))
        XCTAssertThrowsError(try Config(path: nil, environment: environment.merging(["ENLOG_MAP_TILE_URL": Setting.tileURL.defaultValue!]) { $1 },
                                        checks: refusing))
    }
}
