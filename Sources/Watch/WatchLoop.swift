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

extension Watcher {
    enum Next { case carryOn, stop }

    /// What the loop holds: the services of the configuration in force, the tasks feeding it,
    /// and the machine deciding. Only ever touched from the loop.
    struct Loop {
        typealias Input = WatchStateMachine.Input
        typealias Action = WatchStateMachine.Action

        let watcher: Watcher
        /// The services of the configuration in force, built again from a new one on SIGHUP.
        var context: RunContext
        var config: Config { context.config }
        let feed: AsyncStream<Input>.Continuation
        var machine: WatchStateMachine
        var logger: LocationLogger
        var gpsdTask: Task<Void, Never>?
        var networkTask: Task<Void, Never>?
        var watchdogTask: Task<Void, Never>?
        var syncTask: Task<Void, Never>?
        /// The task sleeping for each wake-up the machine set.
        var wakeTasks: [WatchTimer: Task<Void, Never>] = [:]
        var report: @Sendable (WatchReport) -> Void { watcher.dependencies.report }

        /// Reads where the last note and the track stopped, then starts following gpsd.
        static func start(watcher: Watcher, context: RunContext, feed: AsyncStream<Input>.Continuation) async throws -> Loop {
            let settings = WatchStateMachine.Settings(config: context.config)
            let lastNoted = try await watcher.outbox.latestNotedFix().flatMap { try? $0.fix() }
            let lastTracked = settings.track == nil ? nil : try? await watcher.outbox.latestFix()?.fix()
            let logger = try context.logger(outbox: watcher.outbox, accountKey: watcher.dependencies.account()?.accountKey)
            var loop = Loop(watcher: watcher, context: context, feed: feed,
                            machine: WatchStateMachine(settings: settings, backoff: watcher.syncBackoff, debounce: watcher.debounce,
                                                       lastNoted: lastNoted, lastTracked: lastTracked),
                            logger: logger)
            if let interval = watcher.dependencies.notifier.watchdogInterval {
                loop.watchdogTask = Task {
                    while !Task.isCancelled {
                        try? await Task.sleep(for: interval)
                        feed.yield(.watchdog)
                    }
                }
            }
            _ = await loop.perform(loop.machine.start(processID: getpid(), now: Date()))
            return loop
        }

        private init(watcher: Watcher, context: RunContext, feed: AsyncStream<Input>.Continuation,
                     machine: WatchStateMachine, logger: LocationLogger) {
            self.watcher = watcher
            self.context = context
            self.feed = feed
            self.machine = machine
            self.logger = logger
        }

        /// Gives `input` to the machine and performs what it decides.
        mutating func handle(_ input: Input) async -> Next {
            if case .syncFinished = input { syncTask = nil }
            // A deleted -wal holds notes already reported logged: put them into the outbox now,
            // before a crash could take them (a few stat(2) calls when nothing changed).
            watcher.outbox.followFileChanges()
            return await perform(machine.handle(input, now: Date()))
        }

        /// Performs `actions` in order; the result of one is handled, and what that gives
        /// performed, before the next.
        mutating func perform(_ actions: [Action]) async -> Next {
            for action in actions {
                if await perform(action) == .stop { return .stop }
            }
            return .carryOn
        }

        private mutating func perform(_ action: Action) async -> Next {
            switch action {
            case .report(let report):
                self.report(report)
            case .notify(let fields):
                watcher.dependencies.notifier.notify(fields)
            case .connectGPSD:
                connectGPSD()
            case .subscribeNetwork:
                return await handle(subscribeNetwork())
            case .unsubscribeNetwork:
                networkTask?.cancel()
                networkTask = nil
            case .schedule(let timer, let wake, let generation):
                wakeTasks[timer]?.cancel()
                let feed = self.feed
                wakeTasks[timer] = Task {
                    await wake.sleep()
                    if !Task.isCancelled { feed.yield(.timerFired(timer, generation: generation)) }
                }
            case .cancel(let timer):
                wakeTasks.removeValue(forKey: timer)?.cancel()
            case .startSync(let trigger):
                startSync(trigger)
            case .stopSync:
                if let syncTask {
                    syncTask.cancel()
                    await syncTask.value
                }
            case .logNote(let fix, let verdict):
                return await handle(logNote(fix, verdict: verdict))
            case .writeTrack(let batch, let reason):
                return await handle(writeTrack(batch, reason))
            case .writeDigest:
                await writeDigest()
                await returnFreedMemory()
            case .countPending(let then):
                return await handle(.pendingCounted(try? await pendingCount(), then: then))
            case .reload:
                return await handle(reload())
            case .stopInputs:
                for task in [gpsdTask, networkTask, watchdogTask] + Array(wakeTasks.values) { task?.cancel() }
            case .stop:
                return .stop
            }
            return .carryOn
        }

        mutating func connectGPSD() {
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

        mutating func subscribeNetwork() -> Input {
            do {
                let changes = try NetworkEvents.subscribe()
                let feed = self.feed
                networkTask = Task { for await change in changes { feed.yield(.network(change)) } }
                return .networkSubscribed
            } catch {
                return .networkSubscriptionFailed(reason: error.reason)
            }
        }

        mutating func startSync(_ trigger: WatchStateMachine.SyncTrigger) {
            let outbox = watcher.outbox, context = self.context, feed = self.feed
            let account = watcher.dependencies.account(), report = self.report
            syncTask = Task {
                let result = await Watcher.attemptSync(outbox: outbox, context: context, account: account,
                                                       trigger: trigger.rawValue, report: report)
                feed.yield(.syncFinished(result))
            }
        }

        func logNote(_ fix: Fix, verdict: MovementDecision.Verdict) async -> Input {
            do {
                return .noteLogged(.init(try await logger.log(from: GivenFix(fix: fix))), verdict: verdict)
            } catch {
                return .noteFailed(fix, reason: (error as? any ENLogError)?.reason ?? "\(error)")
            }
        }

        /// One transaction; the fixes already in the history are not stored twice.
        func writeTrack(_ batch: [Fix], _ reason: WatchStateMachine.TrackWriteReason) async -> Input {
            do {
                let stored = try await watcher.outbox.importFixes(batch)
                return .trackWritten(added: stored.added, alreadyThere: stored.alreadyThere, reason)
            } catch {
                return .trackWriteFailed(batch, reason, reason: error.reason)
            }
        }

        /// Notes not uploaded yet: pending, failed (waiting to retry), and those a sync was sending.
        func pendingCount() async throws -> Int {
            let counts = try await watcher.outbox.counts()
            return (counts[.pending] ?? 0) + (counts[.failed] ?? 0) + (counts[.sending] ?? 0)
        }

        /// The configuration read again; the services built from it replace the ones in force
        /// only when all of them could be built.
        mutating func reload() -> Input {
            do {
                let fresh = try watcher.dependencies.loadConfig()
                let gpsdChanged = [Setting.gpsd, .maxAge, .minAccuracy, .locationTimeout].contains { fresh.string($0) != config.string($0) }
                let context = RunContext(config: fresh)
                logger = try context.logger(outbox: watcher.outbox, accountKey: watcher.dependencies.account()?.accountKey)
                self.context = context
                return .reloaded(WatchStateMachine.Settings(config: fresh), gpsdChanged: gpsdChanged)
            } catch {
                return .reloadFailed(reason: (error as? any ENLogError)?.reason ?? "\(error)")
            }
        }
    }
}
