import Foundation
import Support

/// `enlog config show`: every setting with its effective value and where it came from.
/// Secrets are never printed, only whether they are set.
package enum ConfigReport {
    static let hidden = "(set, hidden)"

    static func shown(_ setting: Setting, in config: Config) -> String? {
        guard let value = config.string(setting) else { return nil }
        return setting.secret ? hidden : value
    }

    /// Where a value came from, for a comment: "default", "file", "environment ENLOG_DB", "flag --db".
    static func origin(_ origin: SettingOrigin) -> String {
        switch origin {
        case .defaultValue: return "default"
        case .file: return "file"
        case .environment(let variable): return "environment \(variable)"
        case .flag(let flag): return "flag \(flag)"
        }
    }

    /// Valid TOML that can be pasted into config.toml as it is: sections, numbers as numbers,
    /// booleans as booleans, lists as lists. Unset settings and secrets are commented out, so
    /// pasting never sets a secret to "(set, hidden)". Each line ends with where the value came
    /// from and the variable that overrides it.
    package static func text(_ config: Config) -> String {
        var lines = ["# effective settings; config file: \(config.filePath)"]
        var section: Substring = ""
        for setting in Setting.all {
            if setting.section != section {
                section = setting.section
                lines.append("")
                lines.append("[\(section)]")
            }
            let resolved = config.resolved[setting.name] ?? Config.Resolved(value: nil, origin: .defaultValue)
            // Where it came from, and the variable that would override it (unless that is where).
            var where_ = origin(resolved.origin)
            if case .environment = resolved.origin {} else { where_ += "; \(setting.environmentNames[0])" }
            if let value = resolved.value, !setting.secret {
                lines.append("\(setting.key) = \(tomlValue(value, for: setting))  # \(where_)")
            } else {
                lines.append("# \(setting.key) = \(resolved.value == nil ? "(unset)" : hidden)  # \(where_)")
            }
        }
        return lines.joined(separator: "\n")
    }

    static func tomlValue(_ value: String, for setting: Setting) -> String {
        switch setting.kind {
        case .number, .integer:
            guard let number = setting.range?.value(of: value) else { return tomlString(value) }
            return number.rounded() == number ? String(Int64(number)) : String(number)
        case .boolean:
            return Config.parseBoolean(value).map { $0 ? "true" : "false" } ?? tomlString(value)
        case .list:
            return "[" + value.split(separator: ",").map { tomlString($0.trimmingCharacters(in: .whitespaces)) }
                .joined(separator: ", ") + "]"
        case .string:
            return tomlString(value)
        }
    }

    /// A TOML basic string: quotes, backslashes and control characters escaped.
    static func tomlString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    out += String(format: "\\u%04X", scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    package static func json(_ config: Config) throws -> String {
        struct Entry: Encodable {
            var value: String?
            var source: SettingSource
            var environment: String
        }
        var entries: [String: Entry] = [:]
        for setting in Setting.all {
            let origin = config.resolved[setting.name]?.origin ?? .defaultValue
            let variable: String
            if case .environment(let name) = origin { variable = name } else { variable = setting.environmentNames[0] }
            entries[setting.name] = Entry(value: shown(setting, in: config), source: origin.source, environment: variable)
        }
        return try JSONOutput.encode(entries)
    }
}
