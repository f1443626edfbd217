import ArgumentParser
import Configuration

extension ArgumentHelp {
    /// Help for a flag that overrides a setting, its default named from the settings table
    /// ("Width in pixels (default: map.width, 600)."), so help, docs and code cannot disagree.
    package init(_ text: String, overriding setting: Setting, valueName: String) {
        let value = setting.defaultValue ?? "none"
        self.init("\(text) (default: \(setting.name), \(value)).", valueName: valueName)
    }
}
