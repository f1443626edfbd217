import ArgumentParser
import ENLogKit
import Foundation

/// Options every command that touches configuration or the outbox accepts.
struct GlobalOptions: ParsableArguments {
    @Option(help: "Config file (default: $XDG_CONFIG_HOME/enlog/config.toml).")
    var config: String?

    @Option(help: ArgumentHelp("Outbox database (default: $XDG_DATA_HOME/enlog/enlog.sqlite; env ENLOG_DB).", valueName: "path"))
    var db: String?

    func loadConfig(flags: [Setting: String?] = [:]) throws -> Config {
        var values: [String: String] = [:]
        for (setting, value) in flags { if let value { values[setting.name] = value } }
        if let db { values[Setting.database.name] = db }
        return try Config(path: config, flags: values)
    }

    /// Reading and changing commands never create an outbox: a mistyped --db says so instead.
    func openOutbox(_ config: Config, for access: OutboxStore.Access = .create) throws -> OutboxStore {
        try OutboxStore(path: config.string(.database)!, access: access)
    }
}
