import Foundation
#if canImport(Glibc)
import Glibc
#endif
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

    /// Feeds every fix of an NMEA log through the same filter and decision, at once: notes are
    /// logged where a live watch would have logged them, and the track kept that it would have
    /// kept. No sync, no network wait; the decision and the track start fresh (the log's times
    /// may predate the outbox's last note). Track fixes whose time the history has already are
    /// not stored twice (`importFixes`), so replaying a log twice adds its track once.
    public func replay(nmea path: String, context: RunContext) async throws -> MovementReplay.Summary {
        let config = context.config
        let fixes = try await BlockingCall.run("enlog.nmea", onCancel: .abandon) { _ in try NMEALogLocation(path: path).fixes() }
        let logger = try context.logger(outbox: outbox, accountKey: dependencies.account()?.accountKey)
        let report = dependencies.report, outbox = self.outbox
        var track = TrackThresholds(config: config).map { TrackRecorder(thresholds: $0) }
        var kept = 0
        var summary = try await MovementReplay.decide(fixes, config: config, note: { _, fix, verdict in
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
            "fixTime": .string(ISO8601DateFormatter().string(from: outcome.fix.timestamp)),
        ]
        if let problem = outcome.addressProblem { fields["addressProblem"] = .string(problem) }
        return WatchReport(.event, "noted", "logged note \(outcome.note.id ?? 0) (\(why)): \(outcome.note.title)", fields)
    }

    // MARK: Live

    enum Input: Sendable {
        case gpsd(GPSDStream.Event)
        case network(NetworkEvents.Change)
        /// A wake-up the loop set (`LoopTimer`), with the generation it was scheduled with.
        case timerFired(WatchTimer, generation: Int)
        case syncFinished(SyncResult)
        case signal(Int32)
        case watchdog
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
    public func run(context initial: RunContext) async throws {
        let (inputs, feed) = AsyncStream.makeStream(of: Input.self)
        let signals = SignalInputs(feed: feed)
        defer { signals.stop() }
        var loop = Loop(watcher: self, context: initial, feed: feed)
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
        /// The services of the configuration in force, built again from a new one on SIGHUP.
        var context: RunContext
        var config: Config { context.config }
        let feed: AsyncStream<Input>.Continuation
        var decision: MovementDecision
        var logger: LocationLogger?
        var gpsdTask: Task<Void, Never>?
        var gpsdDown = false
        var networkTask: Task<Void, Never>?
        var watchdogTask: Task<Void, Never>?
        var syncTask: Task<Void, Never>?
        var timers: [WatchTimer: LoopTimer] = [:]
        /// The task sleeping for each pending wake-up.
        var wakeTasks: [WatchTimer: Task<Void, Never>] = [:]
        /// The route being kept (`watch.track`); nil when off.
        var track: TrackRecorder?
        var syncRequested: String?
        var syncFailures = 0
        var syncStopped: String?
        var pending = 0
        var lastNote: String?
        var report: @Sendable (WatchReport) -> Void { watcher.dependencies.report }

        init(watcher: Watcher, context: RunContext, feed: AsyncStream<Input>.Continuation) {
            self.watcher = watcher
            self.context = context
            self.feed = feed
            decision = MovementDecision(thresholds: WatchThresholds(config: context.config))
        }

        mutating func start() async throws {
            // Distance is measured from the last note logged, whoever logged it, so a restart
            // does not log the place it stopped at again; the track goes on from the last fix
            // the history has, so it does not keep that place again either.
            if let record = try await watcher.outbox.latestNotedFix(), let fix = try? record.fix() {
                decision = MovementDecision(thresholds: decision.thresholds, anchor: fix)
                lastNote = ISO8601DateFormatter().string(from: fix.timestamp)
            }
            if let thresholds = TrackThresholds(config: config) {
                track = TrackRecorder(thresholds: thresholds, anchor: try? await watcher.outbox.latestFix()?.fix())
            }
            logger = try context.logger(outbox: watcher.outbox, accountKey: watcher.dependencies.account()?.accountKey)
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
            for task in [gpsdTask, networkTask, watchdogTask] + Array(wakeTasks.values) { task?.cancel() }
            // The track kept since the last batch is written before anything else can go wrong.
            await writeTrack("stopping")
            if let syncTask {
                syncTask.cancel()
                await syncTask.value
            }
            await refreshPending()
            report(WatchReport(.event, "stopped", "stopped; \(pending) notes pending", ["pending": .int(pending)]))
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
                schedule(.networkSettled, .after(watcher.debounce))
            case .timerFired(let timer, let generation):
                guard timers[timer, default: LoopTimer()].fire(generation) else { break }
                switch timer {
                case .networkSettled:
                    requestSync("network")
                case .syncRetry:
                    requestSync("backoff")
                case .digest:
                    await digestIfDue()
                    await refreshPending()
                    if pending > 0 { requestSync("digest") }
                case .trackWrite:
                    await writeTrack("age")
                }
            case .syncFinished(let result):
                syncTask = nil
                await finishSync(result)
            case .watchdog:
                watcher.dependencies.notifier.notify(["WATCHDOG=1"])
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
                    lastNote = "\(outcome.note.id ?? 0) at \(ISO8601DateFormatter().string(from: fix.timestamp))"
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
                context = RunContext(config: fresh)
                decision.thresholds = WatchThresholds(config: fresh)
                if let thresholds = TrackThresholds(config: fresh) {
                    if track == nil { track = TrackRecorder(thresholds: thresholds) } else { track?.thresholds = thresholds }
                } else if track != nil {
                    await writeTrack("track off")
                    track = nil
                }
                logger = try context.logger(outbox: watcher.outbox, accountKey: watcher.dependencies.account()?.accountKey)
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
                    report(WatchReport(.detail, "network-watch", "listening for network changes (\(pending) notes pending)"))
                } catch {
                    report(WatchReport(.problem, "network-watch", "\(error.reason); uploads wait for new notes and the retry timer"))
                }
            } else if !wanted, let task = networkTask {
                task.cancel()
                networkTask = nil
                cancel(.syncRetry)
                report(WatchReport(.detail, "network-watch", "nothing pending: no longer listening for network changes"))
            }
        }

        mutating func requestSync(_ trigger: String) {
            guard syncStopped == nil || trigger == "note" || trigger == "reload" else { return }
            guard syncTask == nil else {
                syncRequested = trigger   // once the running one ends
                return
            }
            cancel(.syncRetry)
            let outbox = watcher.outbox, context = self.context, feed = self.feed
            let account = watcher.dependencies.account(), report = self.report
            syncTask = Task {
                let result = await Watcher.attemptSync(outbox: outbox, context: context, account: account, trigger: trigger, report: report)
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
                                   ["notBefore": .string(ISO8601DateFormatter().string(from: hold.until))]))
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
            report(WatchReport(.detail, "sync-timer", "next upload attempt in \(Int(retryAfter.rounded())) s unless the network changes first",
                               ["in": .double(retryAfter)]))
            schedule(.syncRetry, .after(.milliseconds(Int64(retryAfter * 1000))))
        }

        /// Sets `timer` to wake the loop, replacing its pending wake-up.
        mutating func schedule(_ timer: WatchTimer, _ wake: LoopTimer.Wake) {
            let generation = timers[timer, default: LoopTimer()].schedule(wake)
            wakeTasks[timer]?.cancel()
            let feed = self.feed
            wakeTasks[timer] = Task {
                await wake.sleep()
                if !Task.isCancelled { feed.yield(.timerFired(timer, generation: generation)) }
            }
        }

        mutating func cancel(_ timer: WatchTimer) {
            timers[timer, default: LoopTimer()].cancel()
            wakeTasks.removeValue(forKey: timer)?.cancel()
        }
    }

    /// One sync as `enlog sync` does it (`SyncSession`: reachability by address, then the engine),
    /// turned into what the loop needs to decide what comes next.
    static func attemptSync(outbox: OutboxStore, context: RunContext, account: EvernoteAccount?, trigger: String,
                            report: @Sendable (WatchReport) -> Void) async -> SyncResult {
        guard let account else { return .notSignedIn }
        if let hold = try? await outbox.rateLimitHold(), hold.until > Date() {
            return .held(hold)
        }
        do {
            let outcome = try await SyncSession(context: context, outbox: outbox, account: account).run()
            switch outcome {
            case .unreachable(let reachability, let summary):
                let waiting = summary.remaining
                report(WatchReport(.event, "reachability", "\(reachability.verdict.name) (checked in \(Int(reachability.elapsedMilliseconds)) ms "
                                   + "after \(trigger)); \(waiting) notes stay queued",
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
