import Foundation

/// `enlog config show`: every setting with its effective value and where it came from.
/// Secrets are never printed, only whether they are set.
public enum ConfigReport {
    static let hidden = "(set, hidden)"

    static func shown(_ setting: Setting, in config: Config) -> String? {
        guard let value = config.string(setting) else { return nil }
        return setting.secret ? hidden : value
    }

    public static func text(_ config: Config) -> String {
        var lines = ["# \(config.filePath)"]
        for setting in Setting.all {
            let source = config.resolved[setting.name]?.source ?? .defaultValue
            let value = shown(setting, in: config).map { "\"\($0)\"" } ?? "(unset)"
            lines.append("\(setting.name) = \(value)  # \(source.rawValue); \(setting.environmentNames[0])")
        }
        return lines.joined(separator: "\n")
    }

    public static func json(_ config: Config) throws -> String {
        struct Entry: Encodable {
            var value: String?
            var source: SettingSource
            var environment: String
        }
        var entries: [String: Entry] = [:]
        for setting in Setting.all {
            entries[setting.name] = Entry(value: shown(setting, in: config),
                                          source: config.resolved[setting.name]?.source ?? .defaultValue,
                                          environment: setting.environmentNames[0])
        }
        return try JSONOutput.encode(entries)
    }
}
