import Foundation
import Support

package enum ConfigError: ENLogError, Equatable {
    case unreadable(path: String, reason: String)
    case syntax(path: String, line: Int, column: Int, message: String)
    case unknownSetting(path: String, name: String)
    case wrongType(origin: SettingOrigin, name: String, expected: Setting.Kind)
    case invalidValue(origin: SettingOrigin, name: String, reason: String)

    /// One line whatever the file or the environment holds: a value, a key or the parser's words
    /// quote it, line breaks and all (`\x0A` here).
    package var reason: String { TerminalText.oneLine(unflattenedReason) }

    private var unflattenedReason: String {
        switch self {
        case .unreadable(let path, let reason):
            return "cannot read config \(path): \(reason)"
        case .syntax(let path, let line, let column, let message):
            return "\(path):\(line):\(column): \(message)"
        case .unknownSetting(let path, let name):
            return "\(path): unknown setting '\(name)'"
        case .wrongType(let origin, let name, let expected):
            return "\(origin.subject(name)) must be \(expected == .list ? "a list of strings" : withArticle(expected.rawValue))"
        case .invalidValue(let origin, let name, let reason):
            return "\(origin.subject(name)) \(reason)"
        }
    }

    package var recoverySuggestion: String? {
        switch self {
        case .unknownSetting:
            return "`enlog config show` lists every setting"
        case .wrongType(let origin, _, _), .invalidValue(let origin, _, _):
            switch origin {
            case .flag: return nil   // the command line says which command's --help to read
            case .environment(let variable): return "fix or unset \(variable)"
            case .file(let path): return "fix the setting in \(path)"
            case .defaultValue: return nil
            }
        default:
            return "fix the file, or point --config elsewhere"
        }
    }

    /// A bad command-line flag is a usage error; the rest is configuration.
    package var isUsageError: Bool {
        switch self {
        case .wrongType(.flag, _, _), .invalidValue(.flag, _, _): return true
        default: return false
        }
    }
}

/// Where a setting's effective value came from.
package enum SettingSource: String, Sendable, Codable {
    case defaultValue = "default"
    case file
    case environment
    case flag
}

/// Where a value came from, precisely enough to name it in a message: the file, the variable
/// actually set (`ENLOG_DB`, not the setting's canonical name), or the flag.
package enum SettingOrigin: Sendable, Equatable {
    case defaultValue
    case file(String)
    case environment(String)
    case flag(String)

    package var source: SettingSource {
        switch self {
        case .defaultValue: return .defaultValue
        case .file: return .file
        case .environment: return .environment
        case .flag: return .flag
        }
    }

    /// What a message names: "/home/me/.config/enlog/config.toml: 'geocoding.timeout'",
    /// "ENLOG_GEOCODING_TIMEOUT", "--timeout".
    func subject(_ name: String) -> String {
        switch self {
        case .defaultValue: return "'\(name)'"
        case .file(let path): return "\(path): '\(name)'"
        case .environment(let variable): return variable
        case .flag(let flag): return flag
        }
    }
}

/// A rule a setting's value must follow, beyond its type and range: nil when the value is
/// fine, else what is wrong with it ("must be tiles, static or none").
package typealias SettingCheck = @Sendable (String) -> String?

/// The effective settings: defaults, then config.toml, then `ENLOG_*` variables, then flags.
package struct Config: Sendable {
    package struct Resolved: Sendable {
        package var value: String?
        package var origin: SettingOrigin
        package var source: SettingSource { origin.source }
    }

    /// A value given on the command line, with the flag that gave it (for messages).
    package struct Flag: Sendable {
        package var flag: String
        package var value: String
        package init(_ flag: String, _ value: String) {
            self.flag = flag
            self.value = value
        }
    }

    package private(set) var resolved: [String: Resolved] = [:]
    package let filePath: String
    /// `ENLOG_*` variables set in the environment that enlog does not know (typos), sorted.
    package private(set) var unknownEnvironment: [String] = []
    /// The XDG directories the environment named (the tile cache lives under its cache home).
    package let paths: XDGPaths
    /// The zone notes are written in and days are counted in: `note.time_zone`, else `TZ` read
    /// as the C library reads it (`TimeZoneName`), else the system's (/etc/localtime).
    package private(set) var timeZone = TimeZone.current
    /// Why `TZ` could not be followed, when it could not (times are then in UTC, as `date`'s).
    package private(set) var timeZoneWarning: String?

    /// - Parameters:
    ///   - path: config file; nil means `$XDG_CONFIG_HOME/enlog/config.toml`, which may be absent.
    ///   - flags: values given on the command line, by setting name.
    ///   - checks: what each concern requires of its settings' values beyond type and range
    ///     (a tile URL's placeholders, gpsd's HOST:PORT): the concerns own those rules, so the
    ///     configuration knows none of them and is handed them by whoever builds it.
    package init(path: String?, environment: [String: String] = ProcessInfo.processInfo.environment,
                flags: [String: Flag] = [:], checks: [Setting: SettingCheck] = [:]) throws(ConfigError) {
        let paths = XDGPaths(environment: environment)
        if path?.isEmpty == true { throw .invalidValue(origin: .flag("--config"), name: "config", reason: "is empty; it must be a path") }
        let filePath = path ?? paths.configFile
        let contents = path != nil || FileManager.default.fileExists(atPath: filePath) ? try Self.readFile(filePath) : nil
        try self.init(filePath: filePath, fileContents: contents, paths: paths, environment: environment, flags: flags, checks: checks)
    }

    /// The configuration with `fileContents` as the bytes of the file at `filePath` (nil: there
    /// is none): everything `init(path:)` does but the reading, so that any bytes can be given.
    package init(filePath: String, fileContents: [UInt8]?, paths: XDGPaths, environment: [String: String],
                 flags: [String: Flag] = [:], checks: [Setting: SettingCheck] = [:]) throws(ConfigError) {
        self.paths = paths
        self.filePath = filePath
        for setting in Setting.all {
            resolved[setting.name] = Resolved(value: setting.defaultValue, origin: .defaultValue)
        }
        if let fileContents {
            for (name, value) in try Self.settings(fromTOML: fileContents, path: filePath) {
                resolved[name] = Resolved(value: value, origin: .file(filePath))
            }
        }
        for setting in Setting.all {
            if let name = setting.environmentNames.first(where: { environment[$0] != nil }) {
                resolved[setting.name] = Resolved(value: environment[name], origin: .environment(name))
            }
        }
        for (name, flag) in flags {
            resolved[name] = Resolved(value: flag.value, origin: .flag(flag.flag))
        }
        // Flags first: a usage error is reported before a configuration one.
        for setting in Setting.all.sorted(by: { resolved[$0.name]!.source == .flag && resolved[$1.name]!.source != .flag }) {
            try Self.check(setting, resolved[setting.name]!, checks: checks)
        }
        if resolved[Setting.database.name]?.value == nil {
            resolved[Setting.database.name] = Resolved(value: paths.defaultDatabase, origin: .defaultValue)
        }
        (timeZone, timeZoneWarning) = Self.zone(configured: resolved[Setting.timeZone.name]?.value, tz: environment["TZ"])
        let known = Set(Setting.all.flatMap(\.environmentNames)).union(Setting.otherEnvironmentNames)
        unknownEnvironment = environment.keys.filter { $0.hasPrefix("ENLOG_") && !known.contains($0) }.sorted()
    }

    package func string(_ setting: Setting) -> String? { resolved[setting.name]?.value }

    private static func zone(configured: String?, tz: String?) -> (TimeZone, String?) {
        let utc = TimeZone(identifier: "UTC")!
        if let configured { return (TimeZoneName.resolve(configured) ?? utc, nil) }
        guard let tz else { return (.current, nil) }
        if tz.isEmpty { return (utc, nil) }   // glibc: TZ set but empty is UTC
        if let zone = TimeZoneName.resolve(tz) { return (zone, nil) }
        let why = TimeZoneName.isPosixRule(tz)
            ? "TZ '\(tz)' has daylight-saving rules no zone of the tz database keeps"
            : "TZ '\(tz)' is neither a zone of the tz database nor a POSIX rule"
        return (utc, why + "; times are written in UTC, as `date` does (set note.time_zone, e.g. Europe/Paris)")
    }

    /// A numeric setting's value; always within the setting's range (checked when read).
    package func number(_ setting: Setting) -> Double {
        let range = setting.range ?? NumericRange(0, 0, unit: "")
        return string(setting).flatMap(range.value(of:)) ?? setting.defaultValue.flatMap(range.value(of:)) ?? range.lowest
    }

    /// A setting in seconds, as a Duration (millisecond precision).
    package func duration(_ setting: Setting) -> Duration {
        .milliseconds(Int64((number(setting) * 1000).rounded()))
    }

    /// A whole-number setting (range-checked when the configuration was read).
    package func integer(_ setting: Setting) -> Int {
        let value = number(setting)
        return value.isFinite && abs(value) < 1e15 ? Int(value) : 0
    }

    package func boolean(_ setting: Setting) -> Bool { string(setting).flatMap(Self.parseBoolean) ?? false }

    package func list(_ setting: Setting) -> [String] {
        (string(setting) ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    // MARK: - Reading and checking

    private static func readFile(_ path: String) throws(ConfigError) -> [UInt8] {
        do {
            return try FileBytes.read(path, limit: .smallText)
        } catch {
            throw .unreadable(path: path, reason: error.reason)
        }
    }

    /// The settings a config file's bytes give, by name. Lists are flattened to comma-separated
    /// text, the same form the environment uses.
    static func settings(fromTOML bytes: [UInt8], path: String) throws(ConfigError) -> [(String, String)] {
        guard let contents = String(validating: bytes, as: UTF8.self) else {
            throw .unreadable(path: path, reason: "not UTF-8 text (a TOML file is expected)")
        }
        let entries: [TOMLEntry]
        do {
            entries = try TOMLReader.read(contents)
        } catch {
            throw .syntax(path: path, line: error.position.line, column: error.position.column, message: error.message)
        }
        var values: [(String, String)] = []
        for entry in entries {
            // A setting is `section.key`: its first two parts name it, or name what is none.
            let name = entry.path.prefix(2).joined(separator: ".")
            if entry.path.count == 1 {
                if case .table = entry.content, Setting.all.contains(where: { $0.section == entry.path[0] }) { continue }
                throw .unknownSetting(path: path, name: name)
            }
            guard let setting = Setting.named(name) else { throw .unknownSetting(path: path, name: name) }
            guard entry.path.count == 2, case .value(let value) = entry.content else {
                throw .wrongType(origin: .file(path), name: setting.name, expected: setting.kind)
            }
            values.append((name, try text(of: value, for: setting, in: path)))
        }
        return values
    }

    private static func text(of value: TOMLValue, for setting: Setting, in path: String) throws(ConfigError) -> String {
        switch (setting.kind, value) {
        case (.string, .string(let text)):
            return text
        case (.integer, .integer(let number)), (.number, .integer(let number)):
            return String(number)
        case (.number, .float(let number)):
            return String(number)
        case (.boolean, .boolean(let truth)):
            return truth ? "true" : "false"
        case (.list, .array(let items)):
            let strings = items.compactMap { item -> String? in if case .string(let text) = item { text } else { nil } }
            guard strings.count == items.count else { break }
            // The list's items travel comma-joined, so a comma inside one would split it.
            if let item = strings.first(where: { $0.contains(",") }) {
                throw .invalidValue(origin: .file(path), name: setting.name, reason: "item '\(item)' must not contain a comma")
            }
            return strings.joined(separator: ",")
        default:
            break
        }
        throw .wrongType(origin: .file(path), name: setting.name, expected: setting.kind)
    }

    private static func check(_ setting: Setting, _ resolved: Resolved, checks: [Setting: SettingCheck]) throws(ConfigError) {
        // Built-in defaults are not checked at every start (DefaultSettingsTests checks them once): the
        // URL checks parse with libcurl, and loading it costs a run that sends nothing its start-up.
        guard let value = resolved.value, resolved.source != .defaultValue else { return }
        let origin = resolved.origin
        switch setting.kind {
        case .number, .integer:
            let range = setting.range!
            guard range.value(of: value) != nil else {
                throw .invalidValue(origin: origin, name: setting.name, reason: "is '\(value)'; it must be \(range.accepted)")
            }
        case .boolean:
            guard parseBoolean(value) != nil else { throw .wrongType(origin: origin, name: setting.name, expected: .boolean) }
        case .string, .list:
            break
        }
        // An empty path is no path: SQLite would take "" for a temporary database and the
        // outbox's lock file would land in the working directory.
        if value.isEmpty && [Setting.database, .caFile, .template].contains(setting) {
            throw .invalidValue(origin: origin, name: setting.name, reason: "is empty; it must be a path")
        }
        if let check = checks[setting], let problem = check(value) {
            throw .invalidValue(origin: origin, name: setting.name, reason: problem)
        }
        // No setting (a path, a URL, a name, a zone, an address) means anything with a control
        // character: a line break in a multi-line string, an escape, a variable set by a script.
        if setting.kind == .string || setting.kind == .list,
           let control = value.unicodeScalars.first(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) {
            let hex = String(control.value, radix: 16, uppercase: true)
            throw .invalidValue(origin: origin, name: setting.name,
                                reason: "is '\(TerminalText.escaped(value))', which holds a control character "
                                    + "(U+\(String(repeating: "0", count: 4 - hex.count) + hex)); no setting takes one")
        }
    }

    /// 19, 0.5, 100000: no trailing ".0", no exponent.
    private static func text(_ number: Double) -> String {
        number.rounded() == number && abs(number) < 1e15 ? String(Int(number)) : String(number)
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
package struct XDGPaths: Sendable {
    package let configHome: String
    package let dataHome: String
    package let cacheHome: String

    package init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        func absolute(_ name: String, _ fallback: String) -> String {
            // The spec says relative values are invalid and must be ignored.
            if let value = environment[name], value.hasPrefix("/") { return value }
            return home + "/" + fallback
        }
        configHome = absolute("XDG_CONFIG_HOME", ".config")
        dataHome = absolute("XDG_DATA_HOME", ".local/share")
        cacheHome = absolute("XDG_CACHE_HOME", ".cache")
    }

    package var configFile: String { configHome + "/enlog/config.toml" }
    package var credentialsFile: String { configHome + "/enlog/credentials.json" }
    package var defaultDatabase: String { dataHome + "/enlog/enlog.sqlite" }
    /// Map tiles: a cache, safe to delete, so under XDG_CACHE_HOME and never in the outbox.
    package var tileCache: String { cacheHome + "/enlog/tiles.sqlite" }
}

extension ConfigError {
    package var category: ErrorCategory { isUsageError ? .usage : .config }
}
