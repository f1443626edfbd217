import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Support
import Configuration
import Network
import Capture
import Compose
import Outbox
import Diary
import Sync

/// What `watch` decides, as a value: no I/O, no task, no clock (the time comes with each input).
/// Each input — a fix, a network change, a timer, a finished sync, a signal, or the result of an
/// action — gives the actions to perform, in order; the loop (`Watcher.Loop`) performs them and
/// hands their results back as inputs, before it performs the next action.
struct WatchStateMachine: Sendable {
    /// Sync retry timing while notes remain and nothing else wakes the loop.
    let backoff: Watcher.SyncBackoff
    /// How long network changes must settle before reachability is checked (a link coming up
    /// sends a burst: link, address, route; one check after the burst is enough).
    let debounce: Duration
    private(set) var settings: Settings
    private(set) var decision: MovementDecision
    /// The route being kept (`watch.track`); nil when off.
    private(set) var track: TrackRecorder?
    private(set) var timers: [WatchTimer: LoopTimer] = [:]
    /// Where uploading stands: idle, one sync running, or stopped until a note or SIGHUP.
    private(set) var uploading = Uploading.idle(failures: 0)
    // Independent of uploading and of each other (every combination is a state watch can be in):
    /// gpsd lost and not back yet (its absence is said once per outage).
    private(set) var gpsdDown = false
    /// Listening to network changes (`updateNetworkSubscription`).
    private(set) var networkSubscribed = false
    /// Notes waiting, as last counted.
    private(set) var pending = 0
    private(set) var lastNote: String?
    /// What is wrong with the clocks, while it is: said once at default verbosity and kept in
    /// systemd's STATUS= (`GPSClockCheck` decides what a disagreement means).
    private(set) var clockProblem: String?

    /// - Parameters:
    ///   - lastNoted: the fix of the last note logged, whoever logged it: distance is measured
    ///     from it, so a restart does not log the place it stopped at again.
    ///   - lastTracked: the last fix in the history: the track goes on from it.
    init(settings: Settings, backoff: Watcher.SyncBackoff = Watcher.SyncBackoff(), debounce: Duration = Watcher.networkSettleTime,
         lastNoted: Fix? = nil, lastTracked: Fix? = nil) {
        self.settings = settings
        self.backoff = backoff
        self.debounce = debounce
        decision = MovementDecision(thresholds: settings.thresholds, anchor: lastNoted)
        lastNote = lastNoted.map { InstantText.string($0.timestamp) }
        track = settings.track.map { TrackRecorder(thresholds: $0, anchor: lastTracked) }
    }

    /// The actions one input gives, in order, and the time they are decided at.
    struct Output {
        let now: Date
        private(set) var actions: [Action] = []

        mutating func append(_ action: Action) { actions.append(action) }

        mutating func report(_ level: WatchReport.Level, _ event: String, _ message: String, _ fields: [String: WatchReport.Value] = [:]) {
            actions.append(.report(WatchReport(level, event, message, fields, time: now)))
        }
    }

    mutating func start(processID: Int32, now: Date) -> [Action] {
        var out = Output(now: now)
        out.append(.connectGPSD)
        out.report(.event, "started", "watching gpsd at \(settings.gpsd): \(rules)", ["pid": .int(Int(processID))])
        out.append(.notify(["READY=1", status]))
        // A digest missed while watch was not running is written now; written ones are not.
        digestDue(&out, then: .start)
        return out.actions
    }

    mutating func handle(_ input: Input, now: Date) -> [Action] {
        var out = Output(now: now)
        switch input {
        case .gpsd(let event):
            gpsd(event, &out)
        case .network(let change):
            out.report(.detail, "network-change", "network changed (\(change))", ["kinds": .string(change.description)])
            schedule(.networkSettled, .after(debounce), &out)
        case .timerFired(let timer, let generation):
            guard timers[timer, default: LoopTimer()].fire(generation) else { break }
            switch timer {
            case .networkSettled: requestSync(.network, &out)
            case .syncRetry: requestSync(.backoff, &out)
            case .digest: digestDue(&out, then: .digest)
            case .trackWrite: writeTrack(.age, &out)
            }
        case .syncFinished(let result):
            syncFinished(result, &out)
        case .signal(let number):
            guard number != SIGHUP else {
                out.append(.reload)
                break
            }
            out.report(.event, "signal", number == SIGINT ? "interrupted" : "terminated", ["signal": .int(Int(number))])
            stop(&out)
        case .outboxReplaced:
            stop(&out)
        case .watchdog:
            out.append(.notify(["WATCHDOG=1"]))
        case .noteLogged(let note, let verdict):
            decision.logged(note.fix)
            track?.noted(note.fix)
            lastNote = "\(note.id) at \(InstantText.string(note.fix.timestamp))"
            out.append(.report(Watcher.notedReport(note, verdict: verdict, time: now)))
            uploading = uploading.resumed
            out.append(.countPending(then: .sync(.note)))
        case .noteFailed(let fix, let reason):
            // The fix stays unlogged and the anchor where it was: the next fix tries again.
            out.report(.problem, "note-failed", "could not log a note: \(reason)")
            keepOnTrack(fix, &out)
        case .trackWritten(let added, let alreadyThere, let reason):
            out.report(.detail, "track-saved", "wrote \(counted(added, "track fix", plural: "track fixes")) (\(reason.rawValue))",
                       ["added": .int(added), "alreadyThere": .int(alreadyThere), "reason": .string(reason.rawValue)])
        case .trackWriteFailed(let batch, let reason, let problem):
            track?.putBack(batch)
            out.report(.problem, "track-failed", "could not write \(counted(batch.count, "track fix", plural: "track fixes")), keeping them to try again: \(problem)")
            if reason != .stopping { scheduleTrackWrite(&out) }
        case .pendingCounted(let count, let then):
            if let count { pending = count }
            out.append(.notify([status]))
            updateNetworkSubscription(&out)
            afterCount(then, &out)
        case .networkSubscribed:
            out.report(.detail, "network-watch", "listening for network changes (\(counted(pending, "note")) pending)")
        case .networkSubscriptionFailed(let reason):
            networkSubscribed = false
            out.report(.problem, "network-watch", "\(reason); uploads wait for new notes and the retry timer")
        case .reloaded(let fresh, let gpsdChanged):
            reloaded(fresh, gpsdChanged: gpsdChanged, &out)
        case .reloadFailed(let reason):
            out.report(.problem, "reload-failed", "configuration not reloaded, the previous one stays: \(reason)")
        }
        return out.actions
    }

    /// "a note every 200 m, at most one per 300 s[, and one per 3600 s when still]; the track every 25 m or 60 s moving"
    var rules: String {
        let thresholds = decision.thresholds
        return "a note every \(Int(thresholds.minDistance)) m, at most one per \(Int(thresholds.minInterval)) s"
            + (thresholds.maxInterval.map { ", and one per \(Int($0)) s when still" } ?? "")
            + (track.map { String(format: "; the track every %g m or %g s moving", $0.thresholds.distance, $0.thresholds.interval) }
               ?? "; no track")
    }

    var status: String {
        "STATUS=" + (clockProblem.map { "\($0); " } ?? "") + "last note \(lastNote ?? "none yet"); \(pending) pending"
    }

    // MARK: Fixes

    private mutating func gpsd(_ event: GPSDStream.Event, _ out: inout Output) {
        switch event {
        case .connected(let endpoint):
            gpsdDown = false
            out.report(.event, "gpsd-connected", "following gpsd at \(endpoint)", ["endpoint": .string(endpoint)])
        case .lost(let error, let retryIn):
            // Once per outage: a gpsd that stays away is not news every 30 s.
            if !gpsdDown {
                out.report(.event, "gpsd-lost", "\(error.reason); reconnecting (every \(Int(GPSDStream.Backoff().cap)) s at most)",
                           ["retryIn": .double(retryIn)])
            } else {
                out.report(.detail, "gpsd-retry", "gpsd still away: \(error.reason); next try in \(Int(retryIn)) s")
            }
            gpsdDown = true
        case .clockBehind(let ahead):
            // Fixes go on being recorded at GPS time (GPSClockCheck says why); the user learns
            // once, without -v, that the clock is wrong and what to do.
            clockProblem = "system clock \(QualityFilter.span(ahead)) behind GPS time"
            out.report(.problem, "clock-behind",
                       "the system clock is \(QualityFilter.span(ahead)) behind GPS time (not yet set by NTP?): fixes are recorded at GPS time, but the queue and digests run on the wrong clock; wait for NTP, or set the clock (timedatectl set-time)",
                       ["seconds": .double(ahead)])
            out.append(.notify([status]))
        case .clockAgrees:
            clockProblem = nil
            out.report(.event, "clock-set", "the system clock agrees with GPS time again")
            out.append(.notify([status]))
        case .rejected(let fix, let rejection):
            if case .tooOld(let age, _) = rejection, age > QualityFilter.clockDisagreement, clockProblem == nil {
                // GPS time far behind the clock: stale fixes, a receiver with a wrong date (GPS
                // week rollover), or a clock set ahead. Nothing is recorded (no time can be
                // trusted); said once, not per fix, until a fix is accepted again.
                clockProblem = "GPS time \(QualityFilter.span(age)) behind the system clock, no fixes recorded"
                out.report(.problem, "clock-ahead",
                           "GPS time is \(QualityFilter.span(age)) behind the system clock: no fix is recorded until they agree; check the system clock (timedatectl) and the receiver's date (gpsmon)",
                           ["seconds": .double(age)])
                out.append(.notify([status]))
            }
            out.report(.detail, "fix-rejected", "fix \(fix.latitude),\(fix.longitude) rejected: \(rejection)")
        case .accepted(let fix):
            if let problem = clockProblem, problem.hasPrefix("GPS time") {
                clockProblem = nil
                out.report(.event, "clock-set", "GPS time and the system clock agree again; fixes are recorded")
                out.append(.notify([status]))
            }
            let verdict = decision.verdict(for: fix)
            guard verdict.logs else {
                out.report(.detail, "fix", "fix \(fix.latitude),\(fix.longitude): \(verdict)")
                return keepOnTrack(fix, &out)
            }
            // The route up to the note is written first, in time order, and the note's own
            // transaction does not wait for it.
            writeTrack(.note, &out)
            out.append(.logNote(fix, verdict: verdict))
        }
    }

    /// An accepted fix without a note: into the pending batch when the track keeps it; the batch
    /// is written when full, or by a timer once its first fix has waited `TrackRecorder.batchAge`.
    private mutating func keepOnTrack(_ fix: Fix, _ out: inout Output) {
        guard var recorder = track, recorder.record(fix) else { return }
        track = recorder
        out.report(.detail, "track", "kept \(fix.latitude),\(fix.longitude) on the track; \(recorder.pending.count) to write",
                   ["latitude": .double(fix.latitude), "longitude": .double(fix.longitude), "waiting": .int(recorder.pending.count)])
        if recorder.batchIsFull {
            writeTrack(.batch, &out)
        } else if recorder.pending.count == 1 {
            scheduleTrackWrite(&out)
        }
    }

    /// Hands the pending batch to be written (one transaction); a failed write gives it back.
    private mutating func writeTrack(_ reason: TrackWriteReason, _ out: inout Output) {
        guard var recorder = track, !recorder.pending.isEmpty else { return }
        let batch = recorder.takeBatch()
        track = recorder
        cancel(.trackWrite, &out)
        out.append(.writeTrack(batch, reason))
    }

    private mutating func scheduleTrackWrite(_ out: inout Output) {
        schedule(.trackWrite, .after(.seconds(TrackRecorder.batchAge)), &out)
    }

    // MARK: Digest, reload, stop

    /// Writes the previous day's digest when enabled, sets the timer for the next, and uploads
    /// what waits.
    private mutating func digestDue(_ out: inout Output, then trigger: SyncTrigger) {
        if settings.digestTimeZone != nil { out.append(.writeDigest) }
        scheduleDigest(&out)
        out.append(.countPending(then: .syncIfPending(trigger)))
    }

    /// A minute past the coming midnight; no timer when the setting is off.
    private mutating func scheduleDigest(_ out: inout Output) {
        guard let zone = settings.digestTimeZone else { return cancel(.digest, &out) }
        schedule(.digest, .at(Watcher.nextDigestTime(after: out.now, timeZone: zone)), &out)
    }

    private mutating func reloaded(_ fresh: Settings, gpsdChanged: Bool, _ out: inout Output) {
        settings = fresh
        decision.thresholds = fresh.thresholds
        if let thresholds = fresh.track {
            if track == nil { track = TrackRecorder(thresholds: thresholds) } else { track?.thresholds = thresholds }
        } else if track != nil {
            writeTrack(.trackOff, &out)
            track = nil
        }
        if gpsdChanged { out.append(.connectGPSD) }
        scheduleDigest(&out)
        uploading = uploading.resumed
        out.report(.event, "reloaded", "configuration reloaded: \(rules)" + (gpsdChanged ? "; reconnecting to gpsd" : ""))
        if pending > 0 { requestSync(.reload, &out) }
    }

    /// The note being written is finished (the loop is between inputs), the track kept since
    /// the last batch written before anything else can go wrong, and the sync stopped at its
    /// next safe point.
    private mutating func stop(_ out: inout Output) {
        out.report(.event, "stopping", "stopping" + (uploading.isRunning ? " (the upload stops after the note in flight)" : ""))
        out.append(.notify(["STOPPING=1"]))
        for timer in WatchTimer.allCases { timers[timer]?.cancel() }
        out.append(.stopInputs)
        writeTrack(.stopping, &out)
        if uploading.isRunning { out.append(.stopSync) }
        out.append(.countPending(then: .reportStopped))
        out.append(.stop)
    }

    // MARK: Sync: at start, after each note, when the network has settled after a change, after the
    // day's digest, on SIGHUP, and by a capped backoff timer while notes remain; one at a time.

    private mutating func requestSync(_ trigger: SyncTrigger, _ out: inout Output) {
        switch uploading {
        case .stopped where trigger != .note && trigger != .reload:
            return
        case .running(let failures, _):
            uploading = .running(failures: failures, next: trigger)   // once the running one ends
        case .idle(let failures), .stopped(_, let failures):
            cancel(.syncRetry, &out)
            uploading = .running(failures: failures, next: nil)
            out.append(.startSync(trigger))
        }
    }

    private mutating func syncFinished(_ result: SyncResult, _ out: inout Output) {
        var (failures, next) = (0, SyncTrigger?.none)
        if case .running(let before, let requested) = uploading { (failures, next) = (before, requested) }
        var stopReason: String?
        var retryAfter: TimeInterval?
        switch result {
        case .notSignedIn:
            stopReason = "not signed in"
            out.report(.event, "sync-waits", "not signed in: notes stay queued (run `enlog auth login`, then send SIGHUP)")
        case .held(let hold):
            retryAfter = max(1, hold.until.timeIntervalSince(out.now))
            out.report(.event, "sync-held", "the service asked to wait: \(hold.reason)",
                       ["notBefore": .string(InstantText.string(hold.until))])
        case .unreachable(let waiting):
            failures += 1
            if waiting > 0 { retryAfter = backoff.delay(afterFailures: failures) }
        case .synced(let summary):
            out.report(.event, "synced", "uploaded \(summary.uploaded), \(summary.remaining) remaining"
                       + (summary.stoppedBecause == .completed ? "" : "; stopped: \(summary.stoppedBecause.explanation)"),
                       ["uploaded": .int(summary.uploaded), "remaining": .int(summary.remaining),
                        "stoppedBecause": .string(summary.stoppedBecause.rawValue)])
            if summary.uploaded > 0 || summary.alreadyPresent > 0 { failures = 0 } else { failures += 1 }
            if summary.remaining > 0 {
                // No sooner than the service's "not before", nor before the notes' own retry time.
                var delay = backoff.delay(afterFailures: max(1, failures))
                for later in [summary.notBefore, summary.nextRetryAt].compactMap({ $0 }) {
                    delay = max(delay, later.timeIntervalSince(out.now))
                }
                retryAfter = delay
            }
        case .busy:
            failures += 1
            retryAfter = backoff.delay(afterFailures: failures)
            out.report(.detail, "sync-busy", "another sync is running; trying again later")
        case .failed(let reason, let stopTrying):
            failures += 1
            out.report(.problem, "sync-failed", reason + (stopTrying ? "; notes stay queued until the next note or SIGHUP" : ""))
            if stopTrying { stopReason = reason } else { retryAfter = backoff.delay(afterFailures: failures) }
        }
        uploading = stopReason.map { .stopped(reason: $0, failures: failures) } ?? .idle(failures: failures)
        out.append(.countPending(then: .syncAgainOrRetry(after: retryAfter, requested: next)))
    }

    private mutating func afterCount(_ then: AfterCount, _ out: inout Output) {
        switch then {
        case .syncIfPending(let trigger):
            if pending > 0 { requestSync(trigger, &out) }
        case .sync(let trigger):
            requestSync(trigger, &out)
        case .syncAgainOrRetry(let retryAfter, let requested):
            if let requested {
                requestSync(requested, &out)
            } else if pending > 0, let retryAfter {
                out.report(.detail, "sync-timer", "next upload attempt in \(Int(retryAfter.rounded())) s unless the network changes first",
                           ["in": .double(retryAfter)])
                schedule(.syncRetry, .after(.milliseconds(Int64(retryAfter * 1000))), &out)
            }
        case .reportStopped:
            out.report(.event, "stopped", "stopped; \(counted(pending, "note")) pending", ["pending": .int(pending)])
        }
    }

    /// Subscribed to network changes exactly while notes wait and uploading can help.
    private mutating func updateNetworkSubscription(_ out: inout Output) {
        let wanted = pending > 0 && uploading.stopReason == nil
        if wanted, !networkSubscribed {
            networkSubscribed = true
            out.append(.subscribeNetwork)
        } else if !wanted, networkSubscribed {
            networkSubscribed = false
            out.append(.unsubscribeNetwork)
            cancel(.syncRetry, &out)
            out.report(.detail, "network-watch", "nothing pending: no longer listening for network changes")
        }
    }

    // MARK: Timers

    private mutating func schedule(_ timer: WatchTimer, _ wake: LoopTimer.Wake, _ out: inout Output) {
        let generation = timers[timer, default: LoopTimer()].schedule(wake)
        out.append(.schedule(timer, wake, generation: generation))
    }

    private mutating func cancel(_ timer: WatchTimer, _ out: inout Output) {
        if timers[timer, default: LoopTimer()].cancel() { out.append(.cancel(timer)) }
    }
}
