import ArgumentParser
import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Auth
import Capture
import Compose
import Outbox
import Diary
import Sync
import Watch
import CoreCommands

struct Watch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Follow gpsd, log a note whenever you have moved, upload when the network returns.",
        discussion: """
            Runs in the foreground until SIGTERM or SIGINT (exit 0); SIGHUP reloads the configuration.
            A note is logged after moving watch.min_distance metres (beyond the fixes' accuracy) once
            watch.min_interval seconds have passed, or after watch.max_interval seconds when set.
            It also keeps the route in the history (watch.track, thinned by watch.track_distance and
            watch.track_interval), written in batches of up to 32 fixes or 2 minutes.
            Under systemd (Type=notify) it reports READY, STATUS and WATCHDOG.
            """
    )

    @OptionGroup var global: GlobalOptions

    @Option(name: [.customLong("nmea"), .customLong("replay")],
            help: ArgumentHelp("Replay an NMEA 0183 log through the same decision at once, then exit.", valueName: "file"))
    var nmea: String?

    @Option(help: ArgumentHelp("gpsd address", overriding: .gpsd, valueName: "host:port"))
    var gpsd: String?

    @Option(help: ArgumentHelp("Metres moved before another note", overriding: .watchMinDistance, valueName: "metres"))
    var minDistance: String?

    @Option(help: ArgumentHelp("Seconds between notes at least", overriding: .watchMinInterval, valueName: "seconds"))
    var minInterval: String?

    @Option(help: ArgumentHelp("Log a note after this many seconds even when still", overriding: .watchMaxInterval, valueName: "seconds"))
    var maxInterval: String?

    @Flag(help: "One JSON object per event on stderr.") var json = false
    @Flag(name: .shortAndLong, help: "Also report every fix, network change and timer.") var verbose = false

    func run() async throws {
        // Numbers stay text here: the configuration checks them against their ranges (exit 78).
        let flags: [Setting: (flag: String, value: String?)] = [
            .gpsd: ("--gpsd", gpsd), .watchMinDistance: ("--min-distance", minDistance),
            .watchMinInterval: ("--min-interval", minInterval), .watchMaxInterval: ("--max-interval", maxInterval),
        ]
        let global = self.global
        let context = try global.context(flags: flags)
        let config = context.config
        let outbox = try context.outbox()
        let lock = try WatchLock(databasePath: config.string(Setting.database)!)
        defer { lock.release() }
        let json = self.json, verbose = self.verbose
        let watcher = Watcher(outbox: outbox, dependencies: Watcher.Dependencies(
            loadConfig: { try global.loadConfig(flags: flags) },
            account: { (try? Account.credentialStore().loadIfPresent()).flatMap { $0 }.map { EvernoteAccount(credentials: $0) } },
            report: { report in
                guard report.level != .detail || verbose else { return }
                Terminal.standardError(json ? report.json : report.line)
            }))
        if let nmea {
            let summary = try await watcher.replay(nmea: nmea, context: context)
            let line = "replayed \(counted(summary.fixes, "fix", plural: "fixes")) (\(summary.accepted) accepted): "
                + "\(counted(summary.notes, "note")) logged, \(counted(summary.track, "track fix", plural: "track fixes")) kept"
            Terminal.standardError(json ? WatchReport(.event, "replayed", line, ["fixes": .int(summary.fixes),
                                                      "accepted": .int(summary.accepted), "notes": .int(summary.notes),
                                                      "track": .int(summary.track)]).json
                                        : "enlog: " + line)
            return
        }
        try await watcher.run(context: context)
    }
}
