import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import Network
import Capture
import Outbox
import Diary
import Sync
@testable import Watch

/// `watch`'s decisions as a value: sequences of inputs and the exact actions they give. The
/// `Driver` plays the loop: it hands each action's result back at once, as `Watcher.Loop` does,
/// with the outbox's answers set by the test.
@Suite("watch: what the loop is told to do")
struct WatchStateMachineTests {
    typealias Machine = WatchStateMachine
    static let t0 = Date(timeIntervalSince1970: 1_795_000_000)   // 2026-11-18T11:06:40Z

    /// A fix `north` metres north of a fixed point, `seconds` after `t0`, accurate to 5 m.
    static func fix(north: Double, at seconds: TimeInterval) -> Fix {
        try! Fix(latitude: 48 + north / 111_195, longitude: 11, horizontalAccuracy: 5,
                 timestamp: t0.addingTimeInterval(seconds), source: .gpsd)
    }

    static func iso(_ date: Date) -> String { ISO8601DateFormatter().string(from: date) }

    final class Driver {
        var machine: Machine
        var now = WatchStateMachineTests.t0
        /// What the outbox counts when asked.
        var pending = 0
        var trackWriteFails = false
        var reloadGives: Machine.Input = .reloaded(Machine.Settings(), gpsdChanged: false)
        /// The generation of each timer's last scheduled wake-up.
        var generations: [WatchTimer: Int] = [:]
        /// Every action performed, in order.
        var performed: [Machine.Action] = []
        private var nextNoteID: Int64 = 1

        init(_ machine: Machine, pending: Int = 0) {
            self.machine = machine
            self.pending = pending
        }

        func start() -> [String] {
            perform(machine.start(processID: 4242, now: now))
        }

        func send(_ input: Machine.Input) -> [String] {
            perform(machine.handle(input, now: now))
        }

        /// The timer's last wake-up arrives.
        func fire(_ timer: WatchTimer) -> [String] {
            send(.timerFired(timer, generation: generations[timer] ?? 0))
        }

        private func perform(_ actions: [Machine.Action]) -> [String] {
            var lines: [String] = []
            for action in actions {
                performed.append(action)
                lines.append(WatchStateMachineTests.line(action))
                switch action {
                case .schedule(let timer, _, let generation):
                    generations[timer] = generation
                case .countPending(let then):
                    lines += send(.pendingCounted(pending, then: then))
                case .subscribeNetwork:
                    lines += send(.networkSubscribed)
                case .logNote(let fix, let verdict):
                    pending += 1
                    let note = Machine.LoggedNote(id: nextNoteID, title: "note \(nextNoteID)", fix: fix)
                    nextNoteID += 1
                    lines += send(.noteLogged(note, verdict: verdict))
                case .writeTrack(let batch, let reason):
                    lines += send(trackWriteFails ? .trackWriteFailed(batch, reason, reason: "disk full")
                                                  : .trackWritten(added: batch.count, alreadyThere: 0, reason))
                case .reload:
                    lines += send(reloadGives)
                default:
                    break
                }
            }
            return lines
        }

        /// The reports among the actions performed so far.
        var reports: [WatchReport] {
            performed.compactMap { if case .report(let report) = $0 { report } else { nil } }
        }
    }

    /// One short line per action, so that whole sequences compare at a glance.
    static func line(_ action: Machine.Action) -> String {
        switch action {
        case .report(let report): "report \(report.event)"
        case .notify(let fields): "notify " + fields.joined(separator: " | ")
        case .connectGPSD: "connect gpsd"
        case .subscribeNetwork: "subscribe network"
        case .unsubscribeNetwork: "unsubscribe network"
        case .schedule(let timer, .after(let duration), _): "schedule \(timer) after \(duration)"
        case .schedule(let timer, .at(let date), _): "schedule \(timer) at \(iso(date))"
        case .cancel(let timer): "cancel \(timer)"
        case .startSync(let trigger): "sync \(trigger.rawValue)"
        case .stopSync: "stop sync"
        case .logNote(_, let verdict): "log note (\(verdict))"
        case .writeTrack(let batch, let reason): "write track \(batch.count) (\(reason.rawValue))"
        case .writeDigest: "write digest"
        case .countPending(.syncIfPending(let trigger)): "count pending, then sync if pending (\(trigger.rawValue))"
        case .countPending(.sync(let trigger)): "count pending, then sync (\(trigger.rawValue))"
        case .countPending(.syncAgainOrRetry(let after, _)): "count pending, then sync again or retry" + (after.map { " in \($0) s" } ?? " never")
        case .countPending(.reportStopped): "count pending, then report stopped"
        case .reload: "reload"
        case .stopInputs: "stop inputs"
        case .stop: "stop"
        }
    }

    static func synced(uploaded: Int, remaining: Int, nextRetryAt: Date? = nil) -> Machine.SyncResult {
        var summary = SyncSummary()
        summary.uploaded = uploaded
        summary.remaining = remaining
        summary.nextRetryAt = nextRetryAt
        return .synced(summary)
    }

    @Test func startSaysReadyAndUploadsOnlyWhenNotesWait() {
        let idle = Driver(Machine(settings: Machine.Settings()))
        #expect(idle.start() == [
            "connect gpsd", "report started", "notify READY=1 | STATUS=last note none yet; 0 pending",
            "count pending, then sync if pending (start)", "notify STATUS=last note none yet; 0 pending",
        ])
        #expect(idle.reports.first?.message == "watching gpsd at 127.0.0.1:2947: a note every 200 m, at most one per 300 s; no track")
        #expect(idle.reports.first?.fields["pid"] == .int(4242))

        let lastNoted = Self.fix(north: 0, at: -600)
        let waiting = Driver(Machine(settings: Machine.Settings(), lastNoted: lastNoted), pending: 2)
        #expect(waiting.start() == [
            "connect gpsd", "report started", "notify READY=1 | STATUS=last note \(Self.iso(lastNoted.timestamp)); 0 pending",
            "count pending, then sync if pending (start)", "notify STATUS=last note \(Self.iso(lastNoted.timestamp)); 2 pending",
            "subscribe network", "report network-watch", "sync start",
        ])
        // The anchor is the last note's place: a fix there, later, logs nothing.
        #expect(waiting.send(.gpsd(.accepted(Self.fix(north: 10, at: 0)))) == ["report fix"])
    }

    /// `watch -v` says why a fix logs no note in words, never as Swift's dump of the case
    /// (`skip(Diary.MovementDecision.Skip.tooSoon(distance: 55.597540117328855, …`).
    @Test func everySkippedFixIsReportedInWords() {
        let driver = Driver(Machine(settings: Machine.Settings()))
        _ = driver.start()
        _ = driver.send(.gpsd(.accepted(Self.fix(north: 0, at: 0))))
        _ = driver.send(.gpsd(.accepted(Self.fix(north: 731, at: 17))))   // far, too soon
        _ = driver.send(.gpsd(.accepted(Self.fix(north: 3, at: 20))))     // not moved
        _ = driver.send(.gpsd(.accepted(Self.fix(north: 0, at: -5))))     // older than the note
        let skips = driver.reports.filter { $0.event == "fix" }.map(\.message)
        #expect(skips == [
            "fix \(Self.fix(north: 731, at: 17).latitude),11.0: skipped: moved 731 m, but only 17 s after the last note",
            "fix \(Self.fix(north: 3, at: 20).latitude),11.0: skipped: not moved (3 m from the last note; the fixes' accuracy allows 10 m)",
            "fix 48.0,11.0: skipped: older than the last note (an old fix replayed)",
        ])
        for report in driver.reports {
            #expect(!report.message.contains("Diary.") && !report.message.contains("distance:") && !report.message.contains("MovementDecision"),
                    "\(report.event): \(report.message)")
        }
        #expect(driver.reports.first { $0.event == "noted" }?.message == "logged note 1 (first place): note 1")
    }

    @Test func aNoteWhileASyncRunsRequestsOneMoreSyncAfterIt() {
        let driver = Driver(Machine(settings: Machine.Settings()), pending: 1)
        _ = driver.start()
        #expect(driver.machine.uploading.isRunning)
        let fix = Self.fix(north: 0, at: 0)
        #expect(driver.send(.gpsd(.accepted(fix))) == [
            "log note (first place)", "report noted", "count pending, then sync (note)",
            "notify STATUS=last note 1 at \(Self.iso(fix.timestamp)); 2 pending",
        ])
        // The running sync ends with a note left: the requested sync starts at once, no timer.
        driver.pending = 1
        #expect(driver.send(.syncFinished(Self.synced(uploaded: 1, remaining: 1))) == [
            "report synced", "count pending, then sync again or retry in 30.0 s",
            "notify STATUS=last note 1 at \(Self.iso(fix.timestamp)); 1 pending", "sync note",
        ])
        // Only one: the next end with nothing left stops listening to the network.
        driver.pending = 0
        #expect(driver.send(.syncFinished(Self.synced(uploaded: 1, remaining: 0))) == [
            "report synced", "count pending, then sync again or retry never",
            "notify STATUS=last note 1 at \(Self.iso(fix.timestamp)); 0 pending",
            "unsubscribe network", "report network-watch",
        ])
        #expect(driver.machine.uploading == .idle(failures: 0))
    }

    @Test func aStaleTimerGenerationDoesNothing() {
        let driver = Driver(Machine(settings: Machine.Settings()), pending: 1)
        _ = driver.start()
        _ = driver.send(.syncFinished(.unreachable(waiting: 1)))
        let retry = try! #require(driver.generations[.syncRetry])
        // Two changes in a burst: the first one's settling is stale, the second's is live.
        let change = NetworkEvents.Change(kinds: ["newlink"])
        #expect(driver.send(.network(change)) == ["report network-change", "schedule networkSettled after 0.25 seconds"])
        let first = try! #require(driver.generations[.networkSettled])
        _ = driver.send(.network(change))
        #expect(driver.send(.timerFired(.networkSettled, generation: first)) == [])
        #expect(driver.fire(.networkSettled) == ["cancel syncRetry", "sync network"])
        // Fired once: the same wake-up again does nothing.
        #expect(driver.fire(.networkSettled) == [])
        // The retry timer was cancelled by that sync: its wake-up, already on its way, is stale.
        #expect(driver.send(.syncFinished(.unreachable(waiting: 1))).contains("schedule syncRetry after 60.0 seconds"))
        #expect(driver.send(.timerFired(.syncRetry, generation: retry)) == [])
        #expect(driver.fire(.syncRetry) == ["sync backoff"])
    }

    /// The delay of each retry timer while every sync finds the network down.
    static func retryDelays(_ results: [Machine.SyncResult], backoff: Watcher.SyncBackoff = Watcher.SyncBackoff()) -> [String] {
        let driver = Driver(Machine(settings: Machine.Settings(), backoff: backoff), pending: 3)
        _ = driver.start()
        var delays: [String] = []
        for result in results {
            let lines = driver.send(.syncFinished(result))
            delays.append(lines.first { $0.hasPrefix("schedule syncRetry") }?.replacingOccurrences(of: "schedule syncRetry after ", with: "") ?? "none")
            _ = driver.fire(.syncRetry)
        }
        return delays
    }

    @Test func syncBackoffGrowsAndCapsAndAnUploadResetsIt() {
        let down = Array(repeating: Machine.SyncResult.unreachable(waiting: 3), count: 7)
        #expect(Self.retryDelays(down) == ["30.0 seconds", "60.0 seconds", "120.0 seconds", "240.0 seconds",
                                           "480.0 seconds", "900.0 seconds", "900.0 seconds"])
        #expect(Self.retryDelays(down, backoff: Watcher.SyncBackoff(first: 5, cap: 12))
                == ["5.0 seconds", "10.0 seconds", "12.0 seconds", "12.0 seconds", "12.0 seconds", "12.0 seconds", "12.0 seconds"])
        // An upload starts the count again; a busy outbox and a transient failure count as failures.
        let mixed: [Machine.SyncResult] = [.unreachable(waiting: 3), .unreachable(waiting: 3), Self.synced(uploaded: 1, remaining: 2),
                                           .busy, .failed("HTTP 503", stopTrying: false), .unreachable(waiting: 0)]
        #expect(Self.retryDelays(mixed) == ["30.0 seconds", "60.0 seconds", "30.0 seconds", "30.0 seconds", "60.0 seconds", "none"])
    }

    @Test func aRetryWaitsForTheServiceAndTheNotesOwnRetryTime() {
        let driver = Driver(Machine(settings: Machine.Settings()), pending: 2)
        _ = driver.start()
        let hold = OutboxStore.RateLimitHold(until: driver.now.addingTimeInterval(700), reason: "rate limit")
        #expect(driver.send(.syncFinished(.held(hold))).contains("schedule syncRetry after 700.0 seconds"))
        _ = driver.fire(.syncRetry)
        let past = OutboxStore.RateLimitHold(until: driver.now.addingTimeInterval(-5), reason: "rate limit")
        #expect(driver.send(.syncFinished(.held(past))).contains("schedule syncRetry after 1.0 seconds"))
        _ = driver.fire(.syncRetry)
        let later = Self.synced(uploaded: 0, remaining: 2, nextRetryAt: driver.now.addingTimeInterval(500))
        #expect(driver.send(.syncFinished(later)).contains("schedule syncRetry after 500.0 seconds"))
    }

    @Test func afterNotSignedInSyncsStopUntilANoteOrAReload() {
        let driver = Driver(Machine(settings: Machine.Settings()), pending: 2)
        _ = driver.start()
        #expect(driver.send(.syncFinished(.notSignedIn)) == [
            "report sync-waits", "count pending, then sync again or retry never",
            "notify STATUS=last note none yet; 2 pending", "unsubscribe network", "report network-watch",
        ])
        // Neither a settled network nor a digest uploads now.
        _ = driver.send(.network(NetworkEvents.Change(kinds: ["newaddr"])))
        #expect(driver.fire(.networkSettled) == [])
        #expect(driver.machine.uploading == .stopped(reason: "not signed in", failures: 0))
        // SIGHUP (after `auth login`) does.
        #expect(driver.send(.signal(SIGHUP)) == ["reload", "report reloaded", "sync reload"])
        #expect(driver.send(.syncFinished(.notSignedIn)).contains("report sync-waits"))
        // So does a note.
        #expect(driver.send(.gpsd(.accepted(Self.fix(north: 0, at: 0)))) == [
            "log note (first place)", "report noted", "count pending, then sync (note)",
            "notify STATUS=last note 1 at \(Self.iso(Self.t0)); 3 pending",
            "subscribe network", "report network-watch", "sync note",
        ])
        // Refused credentials stop it the same way.
        #expect(driver.send(.syncFinished(.failed("the token was revoked", stopTrying: true))) == [
            "report sync-failed", "count pending, then sync again or retry never",
            "notify STATUS=last note 1 at \(Self.iso(Self.t0)); 3 pending", "unsubscribe network", "report network-watch",
        ])
        #expect(driver.reports.last { $0.event == "sync-failed" }?.message == "the token was revoked; notes stay queued until the next note or SIGHUP")
    }

    @Test func sighupReloadsAndKeepsTheOldSettingsWhenTheNewOnesFail() {
        let driver = Driver(Machine(settings: Machine.Settings()))
        _ = driver.start()
        driver.reloadGives = .reloadFailed(reason: "min_distance is '5'")
        #expect(driver.send(.signal(SIGHUP)) == ["reload", "report reload-failed"])
        #expect(driver.machine.settings == Machine.Settings())
        let fresh = Machine.Settings(thresholds: WatchThresholds(minDistance: 500), track: TrackThresholds(),
                                     digestTimeZone: TimeZone(identifier: "UTC"), gpsd: "gps.example:2947")
        driver.reloadGives = .reloaded(fresh, gpsdChanged: true)
        #expect(driver.send(.signal(SIGHUP)) == ["reload", "connect gpsd", "schedule digest at 2026-11-19T00:01:00Z", "report reloaded"])
        #expect(driver.reports.last?.message == "configuration reloaded: a note every 500 m, at most one per 300 s; "
                + "the track every 25 m or 60 s moving; reconnecting to gpsd")
        #expect(driver.machine.decision.thresholds.minDistance == 500)
        // Digest and track off again: the timer goes, and the track kept so far is written first.
        _ = driver.send(.gpsd(.accepted(Self.fix(north: 0, at: 0))))
        _ = driver.send(.gpsd(.accepted(Self.fix(north: 100, at: 10))))
        driver.reloadGives = .reloaded(Machine.Settings(), gpsdChanged: false)
        #expect(driver.send(.signal(SIGHUP)) == ["reload", "cancel trackWrite", "write track 1 (track off)", "report track-saved",
                                                 "cancel digest", "report reloaded"])
        #expect(driver.machine.track == nil)
    }

    @Test func sigtermWritesTheTrackStopsTheSyncAndStops() {
        let driver = Driver(Machine(settings: Machine.Settings(track: TrackThresholds())))
        _ = driver.start()
        _ = driver.send(.gpsd(.accepted(Self.fix(north: 0, at: 0))))
        #expect(driver.machine.uploading.isRunning)
        // 100 m on after 30 s: too soon for a note, far enough for the track.
        #expect(driver.send(.gpsd(.accepted(Self.fix(north: 100, at: 30)))) == [
            "report fix", "report track", "schedule trackWrite after 120.0 seconds",
        ])
        #expect(driver.send(.signal(SIGTERM)) == [
            "report signal", "report stopping", "notify STOPPING=1", "stop inputs",
            "write track 1 (stopping)", "report track-saved", "stop sync",
            "count pending, then report stopped", "notify STATUS=last note 1 at \(Self.iso(Self.t0)); 1 pending",
            "report stopped", "stop",
        ])
        let reports = driver.reports.suffix(4).map(\.message)
        #expect(reports == ["terminated", "stopping (the upload stops after the note in flight)", "wrote 1 track fix (stopping)",
                            "stopped; 1 note pending"])
        // Every timer is stale after the stop.
        #expect(driver.fire(.trackWrite) == [])

        let interrupted = Driver(Machine(settings: Machine.Settings(track: TrackThresholds())))
        _ = interrupted.start()
        _ = interrupted.send(.gpsd(.accepted(Self.fix(north: 0, at: 0))))
        interrupted.pending = 0
        _ = interrupted.send(.syncFinished(Self.synced(uploaded: 1, remaining: 0)))
        _ = interrupted.send(.gpsd(.accepted(Self.fix(north: 100, at: 30))))
        interrupted.trackWriteFails = true
        // A failed write while stopping is not tried again.
        #expect(interrupted.send(.signal(SIGINT)) == [
            "report signal", "report stopping", "notify STOPPING=1", "stop inputs",
            "write track 1 (stopping)", "report track-failed",
            "count pending, then report stopped", "notify STATUS=last note 1 at \(Self.iso(Self.t0)); 0 pending",
            "report stopped", "stop",
        ])
        #expect(interrupted.reports.suffix(3).first?.message == "stopping")
        #expect(interrupted.reports.first { $0.event == "signal" }?.message == "interrupted")
    }

    @Test func theTrackIsWrittenInBatchesBeforeEachNoteAndAgainAfterAFailure() {
        let lastNoted = Self.fix(north: 0, at: -10)
        let driver = Driver(Machine(settings: Machine.Settings(track: TrackThresholds()), lastNoted: lastNoted, lastTracked: lastNoted))
        _ = driver.start()
        // 40 m apart, a second apart: each kept (40 m less both 5 m radii), none a note (too soon).
        #expect(driver.send(.gpsd(.accepted(Self.fix(north: 40, at: 1)))) == ["report fix", "report track", "schedule trackWrite after 120.0 seconds"])
        let firstBatchTimer = try! #require(driver.generations[.trackWrite])
        for step in 2..<TrackRecorder.batchSize {
            #expect(driver.send(.gpsd(.accepted(Self.fix(north: 40 * Double(step), at: Double(step))))) == ["report fix", "report track"])
        }
        #expect(driver.send(.gpsd(.accepted(Self.fix(north: 40 * 32, at: 32)))) == [
            "report fix", "report track", "cancel trackWrite", "write track 32 (batch)", "report track-saved",
        ])
        #expect(driver.send(.timerFired(.trackWrite, generation: firstBatchTimer)) == [])

        // A failed write keeps the fixes and tries again when the timer comes round.
        driver.trackWriteFails = true
        _ = driver.send(.gpsd(.accepted(Self.fix(north: 40 * 33, at: 33))))
        #expect(driver.fire(.trackWrite) == ["write track 1 (age)", "report track-failed", "schedule trackWrite after 120.0 seconds"])
        #expect(driver.machine.track?.pending.count == 1)
        driver.trackWriteFails = false
        _ = driver.send(.gpsd(.accepted(Self.fix(north: 40 * 34, at: 34))))
        // A note: the route up to it is written first.
        let departure = Self.fix(north: 40 * 35, at: 300)
        let verdict = driver.machine.decision.verdict(for: departure)
        guard case .moved = verdict else { return #expect(Bool(false), "\(verdict)") }
        #expect(driver.send(.gpsd(.accepted(departure))) == [
            "cancel trackWrite", "write track 2 (note)", "report track-saved", "log note (\(verdict))",
            "report noted", "count pending, then sync (note)", "notify STATUS=last note 1 at \(Self.iso(departure.timestamp)); 1 pending",
            "subscribe network", "report network-watch", "sync note",
        ])
        #expect(driver.machine.track?.anchor == departure)
    }

    @Test func aNoteThatFailsLeavesTheAnchorAndTheFixGoesOnTheTrack() {
        let driver = Driver(Machine(settings: Machine.Settings(track: TrackThresholds())))
        _ = driver.start()
        let fix = Self.fix(north: 0, at: 0)
        #expect(driver.machine.handle(.noteFailed(fix, reason: "the template does not render"), now: driver.now).map(Self.line)
                == ["report note-failed", "report track", "schedule trackWrite after 120.0 seconds"])
        #expect(driver.machine.decision.anchor == nil)
        #expect(driver.machine.decision.verdict(for: Self.fix(north: 0, at: 1)) == .first)
    }

    @Test func gpsdsAbsenceIsNewsOncePerOutage() {
        let driver = Driver(Machine(settings: Machine.Settings()))
        _ = driver.start()
        let refused = LocationError.gpsdUnreachable(endpoint: "127.0.0.1:2947", detail: "connection refused")
        #expect(driver.send(.gpsd(.lost(refused, retryIn: 1))) == ["report gpsd-lost"])
        #expect(driver.send(.gpsd(.lost(refused, retryIn: 2))) == ["report gpsd-retry"])
        #expect(driver.reports.last?.level == .detail)
        #expect(driver.send(.gpsd(.connected(endpoint: "127.0.0.1:2947"))) == ["report gpsd-connected"])
        #expect(driver.send(.gpsd(.lost(refused, retryIn: 1))) == ["report gpsd-lost"])
        #expect(driver.reports.last?.level == .event)
        #expect(driver.send(.watchdog) == ["notify WATCHDOG=1"])
    }

    @Test func theDigestIsWrittenAtStartAndAMinutePastEachMidnight() {
        let driver = Driver(Machine(settings: Machine.Settings(digestTimeZone: TimeZone(identifier: "UTC"))), pending: 1)
        #expect(driver.start() == [
            "connect gpsd", "report started", "notify READY=1 | STATUS=last note none yet; 0 pending",
            "write digest", "schedule digest at 2026-11-19T00:01:00Z",
            "count pending, then sync if pending (start)", "notify STATUS=last note none yet; 1 pending",
            "subscribe network", "report network-watch", "sync start",
        ])
        _ = driver.send(.syncFinished(.unreachable(waiting: 1)))
        driver.now = Self.t0.addingTimeInterval(13 * 3600)   // 00:06:40 the next day
        #expect(driver.fire(.digest) == [
            "write digest", "schedule digest at 2026-11-20T00:01:00Z",
            "count pending, then sync if pending (digest)", "notify STATUS=last note none yet; 1 pending",
            "cancel syncRetry", "sync digest",
        ])
    }
}

@Suite("watch: a loop timer")
struct LoopTimerTests {
    @Test func onlyTheLastScheduledWakeUpFiresAndOnlyOnce() {
        var timer = LoopTimer()
        let first = timer.schedule(.after(.seconds(1)))
        let second = timer.schedule(.after(.seconds(2)))
        #expect(timer.pending == .after(.seconds(2)))
        #expect(!timer.isCurrent(first))
        let staleFired = timer.fire(first)
        #expect(!staleFired)
        #expect(timer.isCurrent(second))
        let fired = timer.fire(second)
        let firedAgain = timer.fire(second)
        #expect(fired && !firedAgain)
        #expect(timer.pending == nil)
    }

    @Test func aCancelledWakeUpIsStale() {
        var timer = LoopTimer()
        let cancelledNothing = timer.cancel()
        #expect(!cancelledNothing, "nothing was pending")
        let generation = timer.schedule(.at(Date(timeIntervalSince1970: 0)))
        let cancelled = timer.cancel()
        #expect(cancelled)
        #expect(!timer.isCurrent(generation))
        let staleFired = timer.fire(generation)
        #expect(!staleFired)
        let again = timer.schedule(.after(.milliseconds(250)))
        #expect(again != generation)
        let fired = timer.fire(again)
        #expect(fired)
    }
}
