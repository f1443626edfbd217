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

struct Reachability: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reachability",
        abstract: "Tell, without any name lookup, whether Evernote could be reached now.",
        discussion: """
            Checks for a route to the probe addresses, then races TCP connections to them within a \
            bounded time. Signed in and without --probe or --remembered, it checks what `enlog sync` \
            checks: the NoteStore's remembered address (or its address) first, then network.probes. \
            It says which targets it used. Exit status: 0 reachable, 75 offline or link up without uplink, \
            69 when the NoteStore's own address refused the connection (the network works, \
            Evernote's server does not: what `enlog sync` then says too).

            Examples:
              enlog reachability                          what sync would check
              enlog reachability --probe 192.0.2.10:443   one address of your own
              enlog reachability --json --budget-ms 500   JSON, within half a second
            """
    )

    @OptionGroup var global: GlobalOptions

    @Option(help: ArgumentHelp("An IP:PORT to probe (repeatable; IPv6 as [addr]:port). Names are refused.", valueName: "ip:port"))
    var probe: [String] = []

    @Option(help: ArgumentHelp("An address the Evernote host was reached at before (repeatable).", valueName: "ip:port"))
    var remembered: [String] = []

    @Option(help: ArgumentHelp("Probe this proxy instead (default: https_proxy).", valueName: "url"))
    var proxy: String?

    @Flag(help: "Ignore https_proxy.") var noProxy = false

    @Option(help: ArgumentHelp("Longest the check may take, milliseconds (default 1500).", valueName: "ms"))
    var budgetMs: Int?

    @Flag(help: "Print the report as JSON.") var json = false
    @Flag(help: "Indent the JSON.") var pretty = false

    func validate() throws {
        try NumericRange.budgetMilliseconds.check(budgetMs, flag: "--budget-ms")
    }

    func run() async throws {
        let config = try global.loadConfig()
        var reachability = try await syncPlan(config) ?? ReachabilityConfiguration()
        if !probe.isEmpty || reachability.probeAddresses.isEmpty {
            let probes = probe.isEmpty ? config.list(.probes) : probe
            if !probes.isEmpty { reachability.probeAddresses = probes }
        }
        if !remembered.isEmpty { reachability.rememberedAddresses = remembered }
        reachability.proxy = noProxy ? nil : (proxy ?? ReachabilityConfiguration.proxy(from: ProcessInfo.processInfo.environment))
        reachability.budget = budgetMs.map { .milliseconds($0) } ?? config.duration(.probeBudget)
        try ReachabilityChecker.validate(reachability)
        let report = await ReachabilityChecker.check(reachability)
        let targets = SyncReachability.targets(of: reachability)
        let serverRefused = Self.serverRefused(report, remembered: targets.remembered)
        if json || pretty {
            var described: [String: Any] = ["remembered": targets.remembered, "probes": targets.probes]
            if let proxy = targets.proxy { described["proxy"] = proxy }
            try Terminal.standardOutput(report.json(pretty: pretty, targets: described))
        } else {
            var used: [String] = []
            if let proxy = targets.proxy { used.append("proxy \(proxy)") }
            if !targets.remembered.isEmpty { used.append("NoteStore address \(targets.remembered.joined(separator: ", "))") }
            if !targets.probes.isEmpty { used.append("probes \(targets.probes.joined(separator: ", "))") }
            try Terminal.standardOutput("targets: " + used.joined(separator: "; "))
            let time = String(format: "%.1f ms", report.elapsedMilliseconds)
            switch report.verdict {
            case .reachable(let address) where serverRefused:
                // A refusal proves the path, not the server: say what `sync` says of it.
                try Terminal.standardOutput("\(SyncSummary.StopReason.networkDown.explanation): nothing listens at \(address) "
                    + "(connection refused in \(time)); the network works")
            case .reachable(let address): try Terminal.standardOutput("reachable: \(address) answered in \(time)")
            case .noUplink: try Terminal.standardOutput("no uplink: a route exists but no probe answered within \(time)")
            case .offline: try Terminal.standardOutput("offline: no route to any probe address (\(time))")
            }
        }
        if serverRefused { throw ExitStatus.unavailable.exitCode }
        if case .reachable = report.verdict { return }
        throw ExitStatus.temporary.exitCode
    }

    /// Whether the answer was the NoteStore's own address refusing the connection: the server
    /// `sync` talks to is not there, however well the network works.
    static func serverRefused(_ report: ReachabilityReport, remembered: [String]) -> Bool {
        guard case .reachable(let address) = report.verdict, remembered.contains(address.description) else { return false }
        return report.attempts.contains { $0.phase == .tcp && $0.address == address.description && $0.outcome == .refused }
            && !report.attempts.contains { $0.address == address.description && $0.outcome == .connected }
    }

    /// Signed in and given no addresses: what `enlog sync` would check. Reads the outbox only
    /// when it exists (this command creates nothing).
    private func syncPlan(_ config: Config) async throws -> ReachabilityConfiguration? {
        guard probe.isEmpty, remembered.isEmpty,
              let credentials = (try? Account.credentialStore().loadIfPresent()) ?? nil,
              let noteStoreURL = credentials.noteStoreUrl else { return nil }
        let outbox = config.string(.database).flatMap { try? OutboxStore(path: $0, access: .read) }
        return try await SyncReachability.plan(config: config, outbox: outbox, noteStoreURL: noteStoreURL,
                                               environment: ProcessInfo.processInfo.environment).configuration
    }
}
