import Foundation
import TOMLKit

public enum ConfigError: ENLogError, Equatable {
    case unreadable(path: String, reason: String)
    case syntax(path: String, line: Int, column: Int, message: String)
    case unknownSetting(path: String, name: String)
    case wrongType(source: String, name: String, expected: Setting.Kind)
    case invalidValue(source: String, name: String, reason: String)

    public var reason: String {
        switch self {
        case .unreadable(let path, let reason):
            return "cannot read config \(path): \(reason)"
        case .syntax(let path, let line, let column, let message):
            return "\(path):\(line):\(column): \(message)"
        case .unknownSetting(let path, let name):
            return "\(path): unknown setting '\(name)'"
        case .wrongType(let source, let name, let expected):
            return "\(source): '\(name)' must be \(expected == .list ? "a list of strings" : "a \(expected.rawValue)")"
        case .invalidValue(let source, let name, let reason):
            return "\(source): '\(name)' \(reason)"
        }
    }

    public var recoverySuggestion: String? {
        switch self {
        case .unknownSetting:
            return "`enlog config show` lists every setting"
        default:
            return "fix the setting, or point --config elsewhere"
        }
    }
}

/// Where a setting's effective value came from.
public enum SettingSource: String, Sendable, Codable {
    case defaultValue = "default"
    case file
    case environment
    case flag
}

/// The effective settings: defaults, then config.toml, then `ENLOG_*` variables, then flags.
public struct Config: Sendable {
    public struct Resolved: Sendable {
        public var value: String?
        public var source: SettingSource
    }

    public private(set) var resolved: [String: Resolved] = [:]
    public let filePath: String

    /// - Parameters:
    ///   - path: config file; nil means `$XDG_CONFIG_HOME/enlog/config.toml`, which may be absent.
    ///   - flags: values given on the command line, by setting name.
    public init(path: String?, environment: [String: String] = ProcessInfo.processInfo.environment,
                flags: [String: String] = [:]) throws(ConfigError) {
        let paths = XDGPaths(environment: environment)
        filePath = path ?? paths.configFile
        for setting in Setting.all {
            resolved[setting.name] = Resolved(value: setting.defaultValue, source: .defaultValue)
        }
        if path != nil || FileManager.default.fileExists(atPath: filePath) {
            for (name, value) in try Self.readFile(filePath) {
                resolved[name] = Resolved(value: value, source: .file)
            }
        }
        for setting in Setting.all {
            if let name = setting.environmentNames.first(where: { environment[$0] != nil }) {
                resolved[setting.name] = Resolved(value: environment[name], source: .environment)
            }
        }
        for (name, value) in flags {
            resolved[name] = Resolved(value: value, source: .flag)
        }
        for setting in Setting.all {
            try Self.check(setting, resolved[setting.name]!)
        }
        if resolved[Setting.database.name]?.value == nil {
            resolved[Setting.database.name] = Resolved(value: paths.defaultDatabase, source: .defaultValue)
        }
    }

    public func string(_ setting: Setting) -> String? { resolved[setting.name]?.value }

    public func number(_ setting: Setting) -> Double {
        string(setting).flatMap(Double.init) ?? setting.defaultValue.flatMap(Double.init) ?? 0
    }

    /// A setting in seconds, as a Duration (millisecond precision).
    public func duration(_ setting: Setting) -> Duration {
        .milliseconds(Int(number(setting) * 1000))
    }

    public func boolean(_ setting: Setting) -> Bool { string(setting).flatMap(Self.parseBoolean) ?? false }

    public func list(_ setting: Setting) -> [String] {
        (string(setting) ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    // MARK: - Reading and checking

    /// Lists are flattened to comma-separated text, the same form the environment uses.
    private static func readFile(_ path: String) throws(ConfigError) -> [(String, String)] {
        let contents: String
        do {
            contents = String(decoding: try FileBytes.read(path), as: UTF8.self)
        } catch {
            throw .unreadable(path: path, reason: (error as? FileBytes.ReadError)?.reason ?? "\(error)")
        }
        let table: TOMLTable
        do {
            table = try TOMLTable(string: contents)
        } catch let error as TOMLParseError {
            throw .syntax(path: path, line: error.source.begin.line, column: error.source.begin.column, message: error.description)
        } catch {
            throw .syntax(path: path, line: 0, column: 0, message: "\(error)")
        }
        var values: [(String, String)] = []
        for (section, content) in table {
            guard let sectionTable = content.table else { throw .unknownSetting(path: path, name: section) }
            for (key, value) in sectionTable {
                let name = "\(section).\(key)"
                guard let setting = Setting.named(name) else { throw .unknownSetting(path: path, name: name) }
                values.append((name, try text(of: value, for: setting, in: path)))
            }
        }
        return values
    }

    private static func text(of value: TOMLValueConvertible, for setting: Setting, in path: String) throws(ConfigError) -> String {
        let converted: String?
        switch setting.kind {
        case .string: converted = value.string
        case .integer: converted = value.int.map(String.init)
        case .number: converted = value.double.map { String($0) } ?? value.int.map(String.init)
        case .boolean: converted = value.bool.map { $0 ? "true" : "false" }
        case .list:
            let items = value.array.map { array in array.compactMap { $0.string } }
            converted = (items != nil && items!.count == value.array!.count) ? items!.joined(separator: ",") : nil
        }
        guard let converted else { throw .wrongType(source: path, name: setting.name, expected: setting.kind) }
        return converted
    }

    private static func check(_ setting: Setting, _ resolved: Resolved) throws(ConfigError) {
        guard let value = resolved.value else { return }
        let source = resolved.source.rawValue
        switch setting.kind {
        case .number, .integer:
            guard let number = Double(value), number.isFinite, number > 0 else {
                throw .invalidValue(source: source, name: setting.name, reason: "must be a positive number, not '\(value)'")
            }
        case .boolean:
            guard parseBoolean(value) != nil else { throw .wrongType(source: source, name: setting.name, expected: .boolean) }
        case .string, .list:
            break
        }
        switch setting {
        case .timeZone where TimeZone(identifier: value) == nil:
            throw .invalidValue(source: source, name: setting.name, reason: "'\(value)' is not a time zone (e.g. Europe/Paris, UTC)")
        case .map where !["openstreetmap", "google"].contains(value):
            throw .invalidValue(source: source, name: setting.name, reason: "must be openstreetmap or google")
        case .geocodingURL where !(value.hasPrefix("https://") || value.hasPrefix("http://")):
            throw .invalidValue(source: source, name: setting.name, reason: "must be an http(s) URL")
        default:
            break
        }
    }

    static func parseBoolean(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "true", "yes", "1", "on": return true
        case "false", "no", "0", "off": return false
        default: return nil
        }
    }
}

/// The XDG base directories enlog uses.
public struct XDGPaths: Sendable {
    public let configHome: String
    public let dataHome: String

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let home = environment["HOME"] ?? NSHomeDirectory()
        func absolute(_ name: String, _ fallback: String) -> String {
            // The spec says relative values are invalid and must be ignored.
            if let value = environment[name], value.hasPrefix("/") { return value }
            return home + "/" + fallback
        }
        configHome = absolute("XDG_CONFIG_HOME", ".config")
        dataHome = absolute("XDG_DATA_HOME", ".local/share")
    }

    public var configFile: String { configHome + "/enlog/config.toml" }
    public var credentialsFile: String { configHome + "/enlog/credentials.json" }
    public var defaultDatabase: String { dataHome + "/enlog/enlog.sqlite" }
}
