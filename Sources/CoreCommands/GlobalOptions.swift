import ArgumentParser
import Foundation
import Support
import Configuration
import Diary

/// Options every command that touches configuration or the outbox accepts.
package struct GlobalOptions: ParsableArguments {
    package init() {}

    @Option(help: "Config file (default: $XDG_CONFIG_HOME/enlog/config.toml).")
    package var config: String?

    @Option(help: ArgumentHelp("Outbox database (default: $XDG_DATA_HOME/enlog/enlog.sqlite; env ENLOG_DB).", valueName: "path"))
    package var db: String?

    /// The effective configuration; `flags` are the command's own flags for settings, with the
    /// flag's name for messages (`[.locationTimeout: ("--timeout", "30")]`). Warns about
    /// `ENLOG_*` variables enlog does not know, as the config file refuses unknown keys.
    package func loadConfig(flags: [Setting: (flag: String, value: String?)] = [:]) throws -> Config {
        var values: [String: Config.Flag] = [:]
        for (setting, given) in flags { if let value = given.value { values[setting.name] = Config.Flag(given.flag, value) } }
        if let db { values[Setting.database.name] = Config.Flag("--db", db) }
        let loaded = try Config(path: config, flags: values, checks: SettingChecks.all)
        for variable in loaded.unknownEnvironment {
            Terminal.standardError("enlog: warning: ignoring unknown environment variable \(variable) (`enlog config show` lists the known ones)")
        }
        if let warning = loaded.timeZoneWarning { Terminal.standardError("enlog: warning: \(warning)") }
        return loaded
    }

    /// The run's services, built from the effective configuration (see `loadConfig`) once: every
    /// command builds one and hands it down. Warnings of the services, and notices such as how
    /// to start on a machine where nothing was logged yet, go to standard error.
    package func context(flags: [Setting: (flag: String, value: String?)] = [:]) throws -> RunContext {
        RunContext(config: try loadConfig(flags: flags), warn: { Terminal.standardError("enlog: warning: \($0)") },
                   notice: { Terminal.standardError("enlog: \($0)") })
    }
}
