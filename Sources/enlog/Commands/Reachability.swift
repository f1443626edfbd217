import ArgumentParser
import ENLogKit
import Foundation

struct Reachability: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reachability",
        abstract: "Tell, without any name lookup, whether Evernote could be reached now.",
        discussion: """
            Checks for a route to the probe addresses, then races TCP connections to them within a \
            bounded time. Exit status: 0 reachable, 75 offline or link up without uplink.

            Examples:
              enlog reachability                          configured or well-known probes
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
        var reachability = ReachabilityConfiguration()
        let probes = probe.isEmpty ? config.list(.probes) : probe
        if !probes.isEmpty { reachability.probeAddresses = probes }
        reachability.rememberedAddresses = remembered
        reachability.proxy = noProxy ? nil : (proxy ?? ReachabilityConfiguration.proxy(from: ProcessInfo.processInfo.environment))
        reachability.budget = budgetMs.map { .milliseconds($0) } ?? config.duration(.probeBudget)
        try ReachabilityChecker.validate(reachability)
        let report = await ReachabilityChecker.check(reachability)
        if json || pretty {
            Terminal.standardOutput(report.json(pretty: pretty))
        } else {
            let time = String(format: "%.1f ms", report.elapsedMilliseconds)
            switch report.verdict {
            case .reachable(let address): Terminal.standardOutput("reachable: \(address) answered in \(time)")
            case .noUplink: Terminal.standardOutput("no uplink: a route exists but no probe answered within \(time)")
            case .offline: Terminal.standardOutput("offline: no route to any probe address (\(time))")
            }
        }
        if case .reachable = report.verdict { return }
        throw ExitStatus.temporary.exitCode
    }
}
