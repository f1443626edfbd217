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
/// never held up by an upload. What to do is decided by `WatchStateMachine`, a value without
/// I/O; the loop (`Watcher.Loop`) performs what it decides.
package struct Watcher: Sendable {
    package struct Dependencies: Sendable {
        /// Reads the configuration (again on SIGHUP).
        package var loadConfig: @Sendable () throws -> Config
        /// The signed-in account now, or nil (read at each sync, so `auth login` takes effect without a restart).
        package var account: @Sendable () -> EvernoteAccount?
        package var report: @Sendable (WatchReport) -> Void
        package var notifier: SystemdNotifier

        package init(loadConfig: @escaping @Sendable () throws -> Config, account: @escaping @Sendable () -> EvernoteAccount?,
                    report: @escaping @Sendable (WatchReport) -> Void, notifier: SystemdNotifier = SystemdNotifier()) {
            self.loadConfig = loadConfig
            self.account = account
            self.report = report
            self.notifier = notifier
        }
    }

    /// Sync retry timing while notes remain and nothing else wakes the loop.
    package struct SyncBackoff: Sendable {
        package var first: TimeInterval = 30
        package var cap: TimeInterval = 900
        package init(first: TimeInterval = 30, cap: TimeInterval = 900) {
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
    /// sends a burst: link, address, route; one check after the burst is enough): `watch`'s and
    /// `serve`'s.
    package static let networkSettleTime: Duration = .milliseconds(250)
    var debounce: Duration = Watcher.networkSettleTime

    package init(outbox: OutboxStore, dependencies: Dependencies) {
        self.outbox = outbox
        self.dependencies = dependencies
    }

    // MARK: Replay

    /// Feeds every fix of an NMEA log through the same filter and decision, at once: notes are
    /// logged where a live watch would have logged them, and the track kept that it would have
    /// kept. No sync, no network wait; the decision and the track start fresh (the log's times
    /// may predate the outbox's last note). Track fixes whose time the history has already are
    /// not stored twice (`importFixes`), so replaying a log twice adds its track once.
    package func replay(nmea path: String, context: RunContext) async throws -> MovementReplay.Summary {
        let config = context.config
        let fixes = try await BlockingCall.run("enlog.nmea", onCancel: .abandon) { _ in try NMEALogLocation(path: path).fixes() }
        let logger = try context.logger(outbox: outbox, accountKey: dependencies.account()?.accountKey)
        let report = dependencies.report, outbox = self.outbox
        var track = TrackThresholds(config: config).map { TrackRecorder(thresholds: $0) }
        var kept = 0
        var summary = try await MovementReplay.decide(fixes, config: config, note: { _, fix, verdict in
            let outcome = try await logger.log(from: GivenFix(fix: fix))
            report(Self.notedReport(WatchStateMachine.LoggedNote(outcome), verdict: verdict))
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

    static func notedReport(_ note: WatchStateMachine.LoggedNote, verdict: MovementDecision.Verdict, time: Date = Date()) -> WatchReport {
        let why = verdict.description
        var fields: [String: WatchReport.Value] = [
            "id": .int(Int(note.id)), "title": .string(note.title), "why": .string(why),
            "latitude": .double(note.fix.latitude), "longitude": .double(note.fix.longitude),
            "fixTime": .string(InstantText.string(note.fix.timestamp)),
        ]
        if let problem = note.addressProblem { fields["addressProblem"] = .string(problem) }
        return WatchReport(.event, "noted", "logged note \(note.id) (\(why)): \(note.title)", fields, time: time)
    }

    // MARK: Live

    /// Runs until SIGTERM or SIGINT (then returns normally: the note being written is finished,
    /// the sync stops at its next safe point), or until the outbox file was replaced under it
    /// (then stops the same way and throws where its notes are kept: a new start follows the path).
    package func run(context initial: RunContext) async throws {
        Self.keepLargeBlocksMapped()
        let (inputs, feed) = AsyncStream.makeStream(of: WatchStateMachine.Input.self)
        let signals = SignalInputs(feed: feed)
        defer { signals.stop() }
        reportOutboxFileChanges()
        var loop = try await Loop.start(watcher: self, context: initial, feed: feed)
        for await input in inputs {
            if await loop.handle(input) == .stop { break }
            if outbox.stopReason != nil, await loop.handle(.outboxReplaced) == .stop { break }
        }
        if let reason = outbox.stopReason { throw reason }
    }
}

/// SIGTERM, SIGINT and SIGHUP as inputs: their default actions are turned off and a dispatch
/// source for each feeds the loop. Owned by the running loop alone.
private final class SignalInputs {
    private let sources: [any DispatchSourceSignal]

    init(feed: AsyncStream<WatchStateMachine.Input>.Continuation) {
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
    /// One sync as `enlog sync` does it (`SyncSession`: reachability by address, then the engine),
    /// turned into what the loop needs to decide what comes next.
    static func attemptSync(outbox: OutboxStore, context: RunContext, account: EvernoteAccount?, trigger: String,
                            report: @Sendable (WatchReport) -> Void) async -> WatchStateMachine.SyncResult {
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
                                   + "after \(trigger)); \(waiting == 1 ? "1 note stays" : "\(waiting) notes stay") queued",
                                   ["trigger": .string(trigger), "verdict": .string(reachability.verdict.name)]))
                return .unreachable(waiting: waiting)
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
