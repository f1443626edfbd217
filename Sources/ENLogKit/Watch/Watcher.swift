import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A fix already in hand, as a `LocationSource`: how `watch` hands its fix to the same
/// `LocationLogger` that `enlog log` uses.
struct GivenFix: LocationSource {
    let fix: Fix
    func currentFix() async throws -> Fix { fix }
}

/// `enlog watch`: follows gpsd, logs a note whenever `MovementDecision` says so (through
/// `LocationLogger`, as `log` does), and uploads when the network allows — woken by the kernel's
/// network events, by each new note, and by a capped backoff timer while notes remain, never
/// by a poll while nothing is pending.
///
/// Everything happens in one loop consuming one stream of inputs (fixes, network changes,
/// timers, signals, finished syncs), so the state needs no lock; the blocking sockets (gpsd,
/// rtnetlink) wait on threads of their own. A sync runs beside the loop, so a fix or a signal is
/// never held up by an upload.
public struct Watcher: Sendable {
    public struct Dependencies: Sendable {
        /// Reads the configuration (again on SIGHUP).
        public var loadConfig: @Sendable () throws -> Config
        /// The signed-in account now, or nil (read at each sync, so `auth login` takes effect without a restart).
        public var account: @Sendable () -> EvernoteAccount?
        public var report: @Sendable (WatchReport) -> Void
        public var notifier: SystemdNotifier

        public init(loadConfig: @escaping @Sendable () throws -> Config, account: @escaping @Sendable () -> EvernoteAccount?,
                    report: @escaping @Sendable (WatchReport) -> Void, notifier: SystemdNotifier = SystemdNotifier()) {
            self.loadConfig = loadConfig
            self.account = account
            self.report = report
            self.notifier = notifier
        }
    }

    /// Sync retry timing while notes remain and nothing else wakes the loop.
    public struct SyncBackoff: Sendable {
        public var first: TimeInterval = 30
        public var cap: TimeInterval = 900
        public init(first: TimeInterval = 30, cap: TimeInterval = 900) {
            self.first = first
            self.cap = cap
        }
        func delay(afterFailures failures: Int) -> TimeInterval {
            min(cap, first * pow(2, Double(max(0, failures - 1))))
        }
    }

    let outbox: OutboxStore
    let dependencies: Dependencies
    var syncBackoff = SyncBackoff()
    /// How long network changes must settle before reachability is checked (a link coming up
    /// sends a burst: link, address, route; one check after the burst is enough).
    var debounce: Duration = .milliseconds(250)

    public init(outbox: OutboxStore, dependencies: Dependencies) {
        self.outbox = outbox
        self.dependencies = dependencies
    }

    // MARK: Replay

    public struct ReplaySummary: Sendable, Codable, Equatable {
        public var fixes = 0
        public var accepted = 0
        public var notes = 0
        /// Fixes kept in the history as the track (`watch.track`).
        public var track = 0
    }

    /// Feeds every fix of an NMEA log through the same filter and decision, at once: notes are
    /// logged where a live watch would have logged them, and the track kept that it would have
    /// kept. No sync, no network wait; the decision and the track start fresh (the log's times
    /// may predate the outbox's last note). Track fixes whose time the history has already are
    /// not stored twice (`importFixes`), so replaying a log twice adds its track once.
    public func replay(nmea path: String, config: Config) async throws -> ReplaySummary {
        let fixes = try await BlockingCall.run("enlog.nmea", onCancel: .abandon) { _ in try NMEALogLocation(path: path).fixes() }
        let logger = try Self.logger(config: config, outbox: outbox, account: dependencies.account())
        let report = dependencies.report, outbox = self.outbox
        var track = TrackThresholds(config: config).map { TrackRecorder(thresholds: $0) }
        var kept = 0
        var summary = try await Self.decide(fixes, config: config, note: { _, fix, verdict in
            let outcome = try await logger.log(from: GivenFix(fix: fix))
            report(Self.notedReport(outcome, verdict: verdict))
            return true
        }, accepted: { fix, noted in
            guard var recorder = track else { return }
            if noted { recorder.noted(fix) } else { recorder.record(fix) }
            if recorder.batchIsFull { kept += try await outbox.importFixes(recorder.takeBatch()).added }
            track = recorder
        })
        if var recorder = track { kept += try await outbox.importFixes(recorder.takeBatch()).added }
        summary.track = kept
        return summary
    }

    /// Recorded fixes through the watch's filter and decision, at once: `note` is called for each
    /// fix (with its index in `fixes`) a live watch would have logged, and returns whether the fix
    /// now has its note (later fixes are then measured from it). The decision starts fresh (the
    /// fixes' times may predate the outbox's last note); the age limit is for live fixes, a
    /// recording is old by nature, but accuracy still counts. `accepted` then sees every fix the
    /// filter accepted, with whether it now has its note.
    public static func decide(_ fixes: [Fix], config: Config,
                              note: (Int, Fix, MovementDecision.Verdict) async throws -> Bool,
                              accepted: (Fix, _ noted: Bool) async throws -> Void = { _, _ in }) async throws -> ReplaySummary {
        let filter = QualityFilter(maxAge: nil, minAccuracy: config.number(.minAccuracy), futureTolerance: .infinity)
        var decision = MovementDecision(thresholds: WatchThresholds(config: config))
        var summary = ReplaySummary()
        for (index, fix) in fixes.enumerated() {
            summary.fixes += 1
            guard filter.accepts(fix) else { continue }
            summary.accepted += 1
            let verdict = decision.verdict(for: fix)
            guard verdict.logs, try await note(index, fix, verdict) else {
                try await accepted(fix, false)
                continue
            }
            decision.logged(fix)
            summary.notes += 1
            try await accepted(fix, true)
        }
        return summary
    }

    static func logger(config: Config, outbox: OutboxStore, account: EvernoteAccount?) throws -> LocationLogger {
        LocationLogger(outbox: outbox, renderer: try NoteRenderer(config: config),
                       lookup: GeocodedPlaces.ifEnabled(config: config, outbox: outbox),
                       lookupBudget: config.duration(.geocodingTimeout), account: account?.accountKey,
                       // One renderer for the whole watch: its memory cache serves every later note.
                       maps: MapRenderer(settings: MapSettings(config: config)), mapBudget: MapSettings.logBudget(config: config))
    }

    static func notedReport(_ outcome: LocationLogger.Outcome, verdict: MovementDecision.Verdict) -> WatchReport {
        let why: String
        switch verdict {
        case .first: why = "first place"
        case .moved(let distance): why = String(format: "moved %.0f m", distance)
        case .heartbeat(let elapsed): why = String(format: "still here after %.0f s", elapsed)
        case .skip: why = "skipped"
        }
        var fields: [String: WatchReport.Value] = [
            "id": .int(Int(outcome.note.id ?? 0)), "title": .string(outcome.note.title), "why": .string(why),
            "latitude": .double(outcome.fix.latitude), "longitude": .double(outcome.fix.longitude),
            "fixTime": .string(InstantText.string(outcome.fix.timestamp)),
        ]
        if let problem = outcome.addressProblem { fields["addressProblem"] = .string(problem) }
        return WatchReport(.event, "noted", "logged note \(outcome.note.id ?? 0) (\(why)): \(outcome.note.title)", fields)
    }

    // MARK: Live

    enum Input: Sendable {
        case gpsd(GPSDStream.Event)
        case network(NetworkEvents.Change)
        case networkSettled(generation: Int)
        case syncDue(trigger: String, generation: Int)
        case syncFinished(SyncResult)
        case signal(Int32)
        case watchdog
        /// Past midnight: time for the previous day's digest (`watch.digest`).
        case digestDue(generation: Int)
        /// The track's pending batch has waited `TrackRecorder.batchAge`: time to write it.
        case trackDue(generation: Int)
    }

    enum SyncResult: Sendable {
        case notSignedIn
        case held(OutboxStore.RateLimitHold)
        case unreachable(ReachabilityReport, waiting: Int)
        case synced(SyncSummary)
        case busy
        case failed(String, stopTrying: Bool)
    }

    /// Runs until SIGTERM or SIGINT (then returns normally: the note being written is finished,
    /// the sync stops at its next safe point).
    public func run(config initial: Config) async throws {
        let (inputs, feed) = AsyncStream.makeStream(of: Input.self)
        let signals = SignalInputs(feed: feed)
        defer { signals.stop() }
        var loop = Loop(watcher: self, config: initial, feed: feed)
        try await loop.start()
        for await input in inputs {
            if await loop.handle(input) == .stop { break }
        }
        await loop.stop()
    }
}

/// SIGTERM, SIGINT and SIGHUP as inputs: their default actions are turned off and a dispatch
/// source for each feeds the loop. Owned by the running loop alone.
private final class SignalInputs {
    private let sources: [any DispatchSourceSignal]

    init(feed: AsyncStream<Watcher.Input>.Continuation) {
        sources = [SIGTERM, SIGINT, SIGHUP].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { feed.yield(.signal(number)) }
            source.resume()
            return source
        }
    }

    func stop() {
        for source in sources { source.cancel() }
    }
}

extension Watcher {
    enum Next { case carryOn, stop }

    /// The loop's state; only ever touched from the loop.
    struct Loop {
        let watcher: Watcher
        var config: Config
        let feed: AsyncStream<Input>.Continuation
        var decision: MovementDecision
        var logger: LocationLogger?
        var gpsdTask: Task<Void, Never>?
        var gpsdDown = false
        var networkTask: Task<Void, Never>?
        var watchdogTask: Task<Void, Never>?
        var timerTask: Task<Void, Never>?
        var debounceTask: Task<Void, Never>?
        var debounceGeneration = 0
        var timerGeneration = 0
        var syncTask: Task<Void, Never>?
        var digestTask: Task<Void, Never>?
        var digestGeneration = 0
        /// The route being kept (`watch.track`); nil when off.
        var track: TrackRecorder?
        var trackTask: Task<Void, Never>?
        var trackGeneration = 0
        var syncRequested: String?
        var syncFailures = 0
        var syncStopped: String?
        var pending = 0
        var lastNote: String?
        var report: @Sendable (WatchReport) -> Void { watcher.dependencies.report }

        init(watcher: Watcher, config: Config, feed: AsyncStream<Input>.Continuation) {
            self.watcher = watcher
            self.config = config
            self.feed = feed
            decision = MovementDecision(thresholds: WatchThresholds(config: config))
        }

        mutating func start() async throws {
            // Distance is measured from the last note logged, whoever logged it, so a restart
            // does not log the place it stopped at again; the track goes on from the last fix
            // the history has, so it does not keep that place again either.
            if let record = try await watcher.outbox.latestNotedFix(), let fix = try? record.fix() {
                decision = MovementDecision(thresholds: decision.thresholds, anchor: fix)
                lastNote = InstantText.string(fix.timestamp)
            }
            if let thresholds = TrackThresholds(config: config) {
                track = TrackRecorder(thresholds: thresholds, anchor: try? await watcher.outbox.latestFix()?.fix())
            }
            logger = try Watcher.logger(config: config, outbox: watcher.outbox, account: watcher.dependencies.account())
            startGPSD()
            report(WatchReport(.event, "started", "watching gpsd at \(config.string(.gpsd) ?? "127.0.0.1:2947"): \(rules())",
                               ["pid": .int(Int(getpid()))]))
            watcher.dependencies.notifier.notify(["READY=1", status()])
            if let interval = watcher.dependencies.notifier.watchdogInterval {
                let feed = self.feed
                watchdogTask = Task {
                    while !Task.isCancelled {
                        try? await Task.sleep(for: interval)
                        feed.yield(.watchdog)
                    }
                }
            }
            // A digest missed while watch was not running is written now; written ones are not.
            await digestIfDue()
            await refreshPending()
            if pending > 0 { requestSync("start") }
        }

        mutating func stop() async {
            report(WatchReport(.event, "stopping", "stopping" + (syncTask != nil ? " (the upload stops after the note in flight)" : "")))
            watcher.dependencies.notifier.notify(["STOPPING=1"])
            for task in [gpsdTask, networkTask, watchdogTask, timerTask, debounceTask, digestTask, trackTask] { task?.cancel() }
            // The track kept since the last batch is written before anything else can go wrong.
            await writeTrack("stopping")
            if let syncTask {
                syncTask.cancel()
                await syncTask.value
            }
            await refreshPending()
            report(WatchReport(.event, "stopped", "stopped; \(counted(pending, "note")) pending", ["pending": .int(pending)]))
        }

        /// "a note every 200 m, at most one per 300 s[, and one per 3600 s when still]; track every 25 m"
        func rules() -> String {
            let thresholds = decision.thresholds
            return "a note every \(Int(thresholds.minDistance)) m, at most one per \(Int(thresholds.minInterval)) s"
                + (thresholds.maxInterval.map { ", and one per \(Int($0)) s when still" } ?? "")
                + (track.map { String(format: "; the track every %g m or %g s moving", $0.thresholds.distance, $0.thresholds.interval) }
                   ?? "; no track")
        }

        func status() -> String {
            "STATUS=last note \(lastNote ?? "none yet"); \(pending) pending"
        }

        mutating func startGPSD() {
            gpsdTask?.cancel()
            let stream: GPSDStream
            do {
                let endpoint = try GPSDLocation.Endpoint(parsing: config.string(.gpsd) ?? "127.0.0.1:2947")
                stream = GPSDStream(endpoint: endpoint,
                                    filter: QualityFilter(maxAge: config.number(.maxAge), minAccuracy: config.number(.minAccuracy)),
                                    connectTimeout: config.number(.locationTimeout))
            } catch {
                report(WatchReport(.problem, "config", "\(error.reason); fix location.gpsd and send SIGHUP"))
                return
            }
            let feed = self.feed
            gpsdTask = Task {
                for await event in stream.events() { feed.yield(.gpsd(event)) }
            }
        }

        mutating func handle(_ input: Input) async -> Next {
            switch input {
            case .gpsd(let event):
                await handleGPSD(event)
            case .network(let change):
                report(WatchReport(.detail, "network-change", "network changed (\(change))", ["kinds": .string(change.description)]))
                debounceGeneration += 1
                debounceTask?.cancel()
                let feed = self.feed, generation = debounceGeneration, debounce = watcher.debounce
                debounceTask = Task {
                    try? await Task.sleep(for: debounce)
                    if !Task.isCancelled { feed.yield(.networkSettled(generation: generation)) }
                }
            case .networkSettled(let generation):
                if generation == debounceGeneration { requestSync("network") }
            case .syncDue(let trigger, let generation):
                if generation == timerGeneration { requestSync(trigger) }
            case .syncFinished(let result):
                syncTask = nil
                await finishSync(result)
            case .watchdog:
                watcher.dependencies.notifier.notify(["WATCHDOG=1"])
            case .digestDue(let generation):
                if generation == digestGeneration {
                    await digestIfDue()
                    await refreshPending()
                    if pending > 0 { requestSync("digest") }
                }
            case .trackDue(let generation):
                if generation == trackGeneration { await writeTrack("age") }
            case .signal(let number):
                if number == SIGHUP {
                    await reload()
                } else {
                    report(WatchReport(.event, "signal", number == SIGINT ? "interrupted" : "terminated", ["signal": .int(Int(number))]))
                    return .stop
                }
            }
            return .carryOn
        }

        mutating func handleGPSD(_ event: GPSDStream.Event) async {
            switch event {
            case .connected(let endpoint):
                gpsdDown = false
                report(WatchReport(.event, "gpsd-connected", "following gpsd at \(endpoint)", ["endpoint": .string(endpoint)]))
            case .lost(let error, let retryIn):
                // Once per outage: a gpsd that stays away is not news every 30 s.
                if !gpsdDown {
                    report(WatchReport(.event, "gpsd-lost", "\(error.reason); reconnecting (every \(Int(GPSDStream.Backoff().cap)) s at most)",
                                       ["retryIn": .double(retryIn)]))
                } else {
                    report(WatchReport(.detail, "gpsd-retry", "gpsd still away: \(error.reason); next try in \(Int(retryIn)) s"))
                }
                gpsdDown = true
            case .rejected(let fix, let rejection):
                report(WatchReport(.detail, "fix-rejected", "fix \(fix.latitude),\(fix.longitude) rejected: \(rejection)"))
            case .accepted(let fix):
                let verdict = decision.verdict(for: fix)
                guard verdict.logs, let logger else {
                    report(WatchReport(.detail, "fix", "fix \(fix.latitude),\(fix.longitude): \(verdict)"))
                    await keepOnTrack(fix)
                    return
                }
                // The route up to the note is written first, in time order, and the note's own
                // transaction does not wait for it.
                await writeTrack("note")
                do {
                    let outcome = try await logger.log(from: GivenFix(fix: fix))
                    decision.logged(fix)
                    track?.noted(fix)
                    lastNote = "\(outcome.note.id ?? 0) at \(InstantText.string(fix.timestamp))"
                    report(Watcher.notedReport(outcome, verdict: verdict))
                    syncStopped = nil
                    await refreshPending()
                    requestSync("note")
                } catch {
                    // The fix stays unlogged and the anchor where it was: the next fix tries again.
                    report(WatchReport(.problem, "note-failed", "could not log a note: \((error as? any ENLogError)?.reason ?? "\(error)")"))
                    await keepOnTrack(fix)
                }
            }
        }

        mutating func reload() async {
            do {
                let fresh = try watcher.dependencies.loadConfig()
                let gpsdChanged = [Setting.gpsd, .maxAge, .minAccuracy, .locationTimeout].contains { fresh.string($0) != config.string($0) }
                config = fresh
                decision.thresholds = WatchThresholds(config: fresh)
                if let thresholds = TrackThresholds(config: fresh) {
                    if track == nil { track = TrackRecorder(thresholds: thresholds) } else { track?.thresholds = thresholds }
                } else if track != nil {
                    await writeTrack("track off")
                    track = nil
                }
                logger = try Watcher.logger(config: fresh, outbox: watcher.outbox, account: watcher.dependencies.account())
                if gpsdChanged { startGPSD() }
                scheduleDigest()
                syncStopped = nil
                report(WatchReport(.event, "reloaded", "configuration reloaded: \(rules())" + (gpsdChanged ? "; reconnecting to gpsd" : "")))
                if pending > 0 { requestSync("reload") }
            } catch {
                report(WatchReport(.problem, "reload-failed", "configuration not reloaded, the previous one stays: \((error as? any ENLogError)?.reason ?? "\(error)")"))
            }
        }

        mutating func refreshPending() async {
            if let counts = try? await watcher.outbox.counts() {
                pending = (counts[.pending] ?? 0) + (counts[.failed] ?? 0) + (counts[.sending] ?? 0)
            }
            watcher.dependencies.notifier.notify([status()])
            updateNetworkSubscription()
        }

        /// Subscribed to network changes exactly while notes wait and uploading can help.
        mutating func updateNetworkSubscription() {
            let wanted = pending > 0 && syncStopped == nil
            if wanted, networkTask == nil {
                do {
                    let changes = try NetworkEvents.subscribe()
                    let feed = self.feed
                    networkTask = Task { for await change in changes { feed.yield(.network(change)) } }
                    report(WatchReport(.detail, "network-watch", "listening for network changes (\(counted(pending, "note")) pending)"))
                } catch {
                    report(WatchReport(.problem, "network-watch", "\(error.reason); uploads wait for new notes and the retry timer"))
                }
            } else if !wanted, let task = networkTask {
                task.cancel()
                networkTask = nil
                timerTask?.cancel()
                timerGeneration += 1
                report(WatchReport(.detail, "network-watch", "nothing pending: no longer listening for network changes"))
            }
        }

        mutating func requestSync(_ trigger: String) {
            guard syncStopped == nil || trigger == "note" || trigger == "reload" else { return }
            guard syncTask == nil else {
                syncRequested = trigger   // once the running one ends
                return
            }
            timerTask?.cancel()
            timerGeneration += 1
            let outbox = watcher.outbox, config = self.config, feed = self.feed
            let account = watcher.dependencies.account(), report = self.report
            syncTask = Task {
                let result = await Watcher.attemptSync(outbox: outbox, config: config, account: account, trigger: trigger, report: report)
                feed.yield(.syncFinished(result))
            }
        }

        mutating func finishSync(_ result: SyncResult) async {
            var retryAfter: TimeInterval?
            switch result {
            case .notSignedIn:
                syncStopped = "not signed in"
                report(WatchReport(.event, "sync-waits", "not signed in: notes stay queued (run `enlog auth login`, then send SIGHUP)"))
            case .held(let hold):
                retryAfter = max(1, hold.until.timeIntervalSinceNow)
                report(WatchReport(.event, "sync-held", "the service asked to wait: \(hold.reason)",
                                   ["notBefore": .string(InstantText.string(hold.until))]))
            case .unreachable(_, let waiting):
                syncFailures += 1
                if waiting > 0 { retryAfter = watcher.syncBackoff.delay(afterFailures: syncFailures) }
            case .synced(let summary):
                report(WatchReport(.event, "synced", "uploaded \(summary.uploaded), \(summary.remaining) remaining"
                                   + (summary.stoppedBecause == .completed ? "" : "; stopped: \(summary.stoppedBecause.rawValue)"),
                                   ["uploaded": .int(summary.uploaded), "remaining": .int(summary.remaining),
                                    "stoppedBecause": .string(summary.stoppedBecause.rawValue)]))
                if summary.uploaded > 0 || summary.alreadyPresent > 0 { syncFailures = 0 } else { syncFailures += 1 }
                if summary.remaining > 0 {
                    // No sooner than the service's "not before", nor before the notes' own retry time.
                    var delay = watcher.syncBackoff.delay(afterFailures: max(1, syncFailures))
                    for later in [summary.notBefore, summary.nextRetryAt].compactMap({ $0 }) {
                        delay = max(delay, later.timeIntervalSinceNow)
                    }
                    retryAfter = delay
                }
            case .busy:
                syncFailures += 1
                retryAfter = watcher.syncBackoff.delay(afterFailures: syncFailures)
                report(WatchReport(.detail, "sync-busy", "another sync is running; trying again later"))
            case .failed(let reason, let stopTrying):
                syncFailures += 1
                report(WatchReport(.problem, "sync-failed", reason + (stopTrying ? "; notes stay queued until the next note or SIGHUP" : "")))
                if stopTrying { syncStopped = reason } else { retryAfter = watcher.syncBackoff.delay(afterFailures: syncFailures) }
            }
            await refreshPending()
            if let again = syncRequested {
                syncRequested = nil
                requestSync(again)
                return
            }
            guard pending > 0, let retryAfter else { return }
            timerGeneration += 1
            let feed = self.feed, generation = timerGeneration
            report(WatchReport(.detail, "sync-timer", "next upload attempt in \(Int(retryAfter.rounded())) s unless the network changes first",
                               ["in": .double(retryAfter)]))
            timerTask = Task {
                try? await Task.sleep(for: .milliseconds(Int64(retryAfter * 1000)))
                if !Task.isCancelled { feed.yield(.syncDue(trigger: "backoff", generation: generation)) }
            }
        }
    }

    /// One sync as `enlog sync` does it (`SyncSession`: reachability by address, then the engine),
    /// turned into what the loop needs to decide what comes next.
    static func attemptSync(outbox: OutboxStore, config: Config, account: EvernoteAccount?, trigger: String,
                            report: @Sendable (WatchReport) -> Void) async -> SyncResult {
        guard let account else { return .notSignedIn }
        if let hold = try? await outbox.rateLimitHold(), hold.until > Date() {
            return .held(hold)
        }
        do {
            let outcome = try await SyncSession(config: config, outbox: outbox, account: account).run()
            switch outcome {
            case .unreachable(let reachability, let summary):
                let waiting = summary.remaining
                report(WatchReport(.event, "reachability", "\(reachability.verdict.name) (checked in \(Int(reachability.elapsedMilliseconds)) ms "
                                   + "after \(trigger)); \(waiting == 1 ? "1 note stays" : "\(waiting) notes stay") queued",
                                   ["trigger": .string(trigger), "verdict": .string(reachability.verdict.name)]))
                return .unreachable(reachability, waiting: waiting)
            case .synced(let summary):
                report(WatchReport(.event, "reachability", "reachable (after \(trigger))",
                                   ["trigger": .string(trigger), "verdict": .string("reachable")]))
                return .synced(summary)
            }
        } catch SyncError.syncInProgress {
            return .busy
        } catch let error as SyncError {
            return .failed(error.reason, stopTrying: true)
        } catch let error as AuthError {
            return .failed(error.reason, stopTrying: true)
        } catch let error as EvernoteError where error.requiresReauthentication {
            return .failed(error.reason, stopTrying: true)
        } catch {
            return .failed((error as? any ENLogError)?.reason ?? "\(error)", stopTrying: false)
        }
    }
}
