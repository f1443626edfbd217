import Foundation
import Support
import Configuration
import Network
import Capture
import Compose
import Outbox
import Diary
import Sync

/// What `WatchStateMachine` is told and what it tells the loop to do.
extension WatchStateMachine {
    /// What the configuration in force says, as far as decisions go.
    struct Settings: Sendable, Equatable {
        var thresholds: WatchThresholds
        /// nil when `watch.track = false`.
        var track: TrackThresholds?
        /// The zone whose midnight ends a digest's day; nil when `watch.digest = false`.
        var digestTimeZone: TimeZone?
        /// gpsd's address as configured, for the reports.
        var gpsd: String

        init(thresholds: WatchThresholds = WatchThresholds(), track: TrackThresholds? = nil,
             digestTimeZone: TimeZone? = nil, gpsd: String = "127.0.0.1:2947") {
            self.thresholds = thresholds
            self.track = track
            self.digestTimeZone = digestTimeZone
            self.gpsd = gpsd
        }

        init(config: Config) {
            self.init(thresholds: WatchThresholds(config: config), track: TrackThresholds(config: config),
                      digestTimeZone: config.boolean(.watchDigest) ? TrackDay.timeZone(config: config) : nil,
                      gpsd: config.string(.gpsd) ?? "127.0.0.1:2947")
        }
    }

    enum SyncTrigger: String, Sendable, Equatable {
        case start, note, network, backoff, digest, reload
    }

    /// Where uploading stands: one value where four flags had to agree (running, a sync asked
    /// for meanwhile, the failures in a row, stopped and why).
    enum Uploading: Sendable, Equatable {
        /// No sync running. `failures`: syncs in a row that moved nothing (the backoff's count).
        case idle(failures: Int)
        /// One sync running; `next`: a sync asked for meanwhile, started once this one is over.
        case running(failures: Int, next: SyncTrigger?)
        /// Waits for the next note or SIGHUP: not signed in, credentials refused (`reason`).
        case stopped(reason: String, failures: Int)

        var isRunning: Bool {
            if case .running = self { true } else { false }
        }

        /// Why uploading waits for a note or SIGHUP; nil unless stopped.
        var stopReason: String? {
            if case .stopped(let reason, _) = self { reason } else { nil }
        }

        /// After a note or SIGHUP: a stopped upload may go again (the failures still count).
        var resumed: Uploading {
            if case .stopped(_, let failures) = self { .idle(failures: failures) } else { self }
        }
    }

    /// How one sync ended, as far as what comes next goes.
    enum SyncResult: Sendable, Equatable {
        case notSignedIn
        case held(OutboxStore.RateLimitHold)
        case unreachable(waiting: Int)
        case synced(SyncSummary)
        case busy
        case failed(String, stopTrying: Bool)
    }

    enum TrackWriteReason: String, Sendable, Equatable {
        case note, batch, age, stopping
        case trackOff = "track off"
    }

    /// A note the loop logged.
    struct LoggedNote: Sendable, Equatable {
        var id: Int64
        var title: String
        var fix: Fix
        var addressProblem: String?

        init(id: Int64, title: String, fix: Fix, addressProblem: String? = nil) {
            self.id = id
            self.title = title
            self.fix = fix
            self.addressProblem = addressProblem
        }

        init(_ outcome: LocationLogger.Outcome) {
            self.init(id: outcome.note.id ?? 0, title: outcome.note.title, fix: outcome.fix, addressProblem: outcome.addressProblem)
        }
    }

    /// What waits for the count of pending notes.
    enum AfterCount: Sendable, Equatable {
        case syncIfPending(SyncTrigger)
        case sync(SyncTrigger)
        /// After a sync: the one asked for meanwhile (`requested`), else the retry timer while notes remain.
        case syncAgainOrRetry(after: TimeInterval?, requested: SyncTrigger?)
        case reportStopped
    }

    enum Input: Sendable {
        case gpsd(GPSDStream.Event)
        case network(NetworkEvents.Change)
        /// A wake-up the loop set (`LoopTimer`), with the generation it was scheduled with.
        case timerFired(WatchTimer, generation: Int)
        case syncFinished(SyncResult)
        case signal(Int32)
        case watchdog
        // The results of the loop's actions.
        case noteLogged(LoggedNote, verdict: MovementDecision.Verdict)
        case noteFailed(Fix, reason: String)
        case trackWritten(added: Int, alreadyThere: Int, TrackWriteReason)
        case trackWriteFailed([Fix], TrackWriteReason, reason: String)
        /// nil when the outbox could not count: the last count stands.
        case pendingCounted(Int?, then: AfterCount)
        case networkSubscribed
        case networkSubscriptionFailed(reason: String)
        case reloaded(Settings, gpsdChanged: Bool)
        case reloadFailed(reason: String)
        /// The outbox file was replaced under watch; its notes went beside it (`OutboxFile`).
        case outboxReplaced
    }

    enum Action: Sendable, Equatable {
        case report(WatchReport)
        /// Tells systemd (`READY=1`, `STATUS=…`, `WATCHDOG=1`, `STOPPING=1`).
        case notify([String])
        /// Follows gpsd at the configured address, instead of the stream followed so far.
        case connectGPSD
        case subscribeNetwork
        case unsubscribeNetwork
        case schedule(WatchTimer, LoopTimer.Wake, generation: Int)
        case cancel(WatchTimer)
        case startSync(SyncTrigger)
        /// Cancels the running sync and waits for it to stop at its next safe point.
        case stopSync
        case logNote(Fix, verdict: MovementDecision.Verdict)
        case writeTrack([Fix], TrackWriteReason)
        /// The previous day's digest, when not written yet.
        case writeDigest
        case countPending(then: AfterCount)
        /// Reads the configuration again.
        case reload
        /// Ends every input but the signals: gpsd, network changes, the watchdog, the timers.
        case stopInputs
        /// Leaves the loop: the actions before it have stopped everything.
        case stop
    }
}
