import Foundation

/// One `enlog sync`, as a whole: reachability by address first, then the engine. Shared by the
/// `sync` command and the opportunistic sync after `log`.
public struct SyncSession: Sendable {
    public enum Outcome: Sendable {
        /// Not reachable: nothing was sent. `waiting` notes stay queued.
        case unreachable(ReachabilityReport, waiting: Int)
        case synced(SyncSummary)
    }

    let config: Config
    let outbox: OutboxStore
    let account: EvernoteAccount

    public init(config: Config, outbox: OutboxStore, account: EvernoteAccount) {
        self.config = config
        self.outbox = outbox
        self.account = account
    }

    public func run(maxNotes: Int? = nil, dryRun: Bool = false,
                    environment: [String: String] = ProcessInfo.processInfo.environment,
                    observer: (@Sendable (SyncEvent) -> Void)? = nil) async throws -> Outcome {
        guard let noteStoreURL = account.credentials.noteStoreUrl else {
            throw AuthError.credentialsMissing(path: "the NoteStore URL of the stored account")
        }
        let endpoint = NoteStoreEndpoint(url: noteStoreURL)
        // Through a proxy, the proxy resolves the host and is the address connected to: neither
        // a local lookup nor a remembered NoteStore address applies.
        let proxied = ReachabilityConfiguration.proxy(from: environment) != nil
        let state = try await SyncState(writer: outbox.databaseWriter)
        var remembered: String?
        if let endpoint, endpoint.isName, !proxied {
            remembered = try await state.rememberedAddress(host: endpoint.host)
        }
        let reachability = SyncReachability.configuration(
            noteStoreURL: noteStoreURL, probes: config.list(.probes),
            budget: config.duration(.probeBudget), environment: environment,
            remembered: remembered.map { [$0] } ?? [])
        try ReachabilityChecker.validate(reachability)
        let report = await ReachabilityChecker.check(reachability)
        let counts = try await outbox.counts()
        let waiting = (counts[.pending] ?? 0) + (counts[.failed] ?? 0) + (counts[.sending] ?? 0)
        guard case .reachable = report.verdict else {
            return .unreachable(report, waiting: waiting)
        }
        var http = HTTPConfiguration(caFile: config.string(.caFile))
        // Nothing queued: no NoteStore call will be made, so no lookup to wait for either.
        if let endpoint, !proxied, !dryRun, waiting > 0 {
            let decision = try await NoteStoreAddressing.decide(
                endpoint: endpoint, remembered: remembered,
                timeout: max(.milliseconds(100), config.duration(.dnsTimeout)))
            http.resolve = decision.resolve
            if let note = decision.note { observer?(.notice(note)) }
        }
        let places = GeocodedPlaces.ifEnabled(config: config, outbox: outbox)
        let renderer = try NoteRenderer(config: config)
        let engine = SyncEngine(outbox: outbox, noteStoreURL: noteStoreURL, token: account.credentials.token,
                                http: http, rememberAddress: !proxied,
                                placeLookup: places, renderer: renderer,
                                options: SyncOptions(maxNotes: maxNotes, dryRun: dryRun, account: account.accountKey,
                                                     observer: observer))
        return .synced(try await engine.run())
    }

    /// The sync after `log`: a few notes within a bounded time, and no error ever surfaces — the
    /// logged note is already stored, and the next `enlog sync` does the rest. nil when nothing ran.
    public func runOpportunistically(maxNotes: Int = 20, budget: Duration = .seconds(10)) async -> SyncSummary? {
        let outcome = try? await withDeadline(budget) { try await self.run(maxNotes: maxNotes) }
        guard case .synced(let summary)? = outcome else { return nil }
        return summary
    }
}
