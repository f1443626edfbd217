import Foundation
import Synchronization
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

/// The diary from the phones: per device, the decisions `watch` makes for gpsd, on the points
/// each phone sent — a note when `MovementDecision` says the device has moved somewhere new
/// (through `LocationLogger`, on the point's own history row), each device's digest of its day
/// once the day is over (`watch.digest`: `DayDigest` of the device's points), and an upload after
/// each note, when the network changes (rtnetlink, as `watch` listens), and again with a capped
/// backoff while notes wait.
///
/// The receiver answers the phone once the points are committed and tells the diary only that
/// there are new ones; the diary reads them back from the outbox after its mark
/// (`phone_diary.decidedThrough`), a page at a time, on a task of its own: a slow address lookup
/// never holds up a reply, a diary behind a fast phone holds a page in memory however far behind
/// it is, and the points committed before a crash or a stop are decided after the next start.
package final class PhoneDiary: Sendable {
    package struct Dependencies: Sendable {
        /// The signed-in account now, or nil (read at each sync).
        package var account: @Sendable () -> EvernoteAccount?
        package var report: @Sendable (WatchReport) -> Void
        /// The kernel's network changes (`NetworkEvents.subscribe`); a failure leaves the timer.
        package var networkChanges: @Sendable () throws(NetworkEvents.Failure) -> AsyncStream<NetworkEvents.Change>
        /// How long network changes must settle before an upload is tried (a link coming up sends
        /// a burst: link, address, route; one upload after the burst is enough).
        package var networkDebounce: Duration
        /// The time that says which day is over (tests give a day's end without waiting for it).
        package var now: @Sendable () -> Date

        package init(account: @escaping @Sendable () -> EvernoteAccount?, report: @escaping @Sendable (WatchReport) -> Void,
                     networkChanges: @escaping @Sendable () throws(NetworkEvents.Failure) -> AsyncStream<NetworkEvents.Change> = NetworkEvents.subscribe,
                     networkDebounce: Duration = Watcher.networkSettleTime, now: @escaping @Sendable () -> Date = { Date() }) {
            self.account = account
            self.report = report
            self.networkChanges = networkChanges
            self.networkDebounce = networkDebounce
            self.now = now
        }
    }

    /// Points read back and decided at a time.
    static let pageSize = 2_000
    /// How often the mark is kept while points come: deciding again what came after the kept
    /// mark writes nothing twice, so this only bounds the work after a crash, and the mark's
    /// write (a commit of its own) stays out of the receiver's way.
    static let markInterval: TimeInterval = 5

    enum Input: Sendable {
        /// Points were committed after the mark: the next page of them.
        case points
        case digest
        case sync(trigger: String)
        /// The network settled after a change: an upload now, whatever the backoff said.
        case networkSettled(String)
    }

    private let feed: AsyncStream<Input>.Continuation
    private let newPoints: NewPointsSignal
    private let loop: Task<Void, Never>
    private let timers: Task<Void, Never>
    private let network: Task<Void, Never>

    package init(outbox: OutboxStore, context: RunContext, dependencies: Dependencies) {
        let (inputs, feed) = AsyncStream.makeStream(of: Input.self)
        self.feed = feed
        let newPoints = NewPointsSignal(feed: feed)
        self.newPoints = newPoints
        // First the points committed before a stop or a crash that the diary had not decided on
        // (their notes belong in a digest written at start).
        newPoints.raise()
        // The digests' day zone, read once: nil when `watch.digest` is off.
        let digestZone = context.config.boolean(.watchDigest) ? TrackDay.timeZone(config: context.config) : nil
        loop = Task {
            var state = State(outbox: outbox, context: context, dependencies: dependencies, digestZone: digestZone, newPoints: newPoints)
            for await input in inputs { await state.handle(input) }
            await state.keepMark(now: .distantFuture)
        }
        network = Task {
            let changes: AsyncStream<NetworkEvents.Change>
            do throws(NetworkEvents.Failure) {
                changes = try dependencies.networkChanges()
            } catch {
                dependencies.report(WatchReport(.problem, "network-watch", "\(error.reason); uploads wait for new notes and the retry timer"))
                return
            }
            dependencies.report(WatchReport(.detail, "network-watch", "listening for network changes"))
            // The last change of a burst is the one handed on, once the network stayed still for the debounce.
            let latest = ChangeCount()
            for await change in changes {
                let mine = latest.next()
                dependencies.report(WatchReport(.detail, "network-change", "network changed (\(change))", ["kinds": .string(change.description)]))
                Task {
                    try? await Task.sleep(for: dependencies.networkDebounce)
                    if latest.current == mine { feed.yield(.networkSettled(change.description)) }
                }
            }
        }
        timers = Task {
            // A digest missed while nothing ran is written at start; written ones are not.
            if digestZone != nil { feed.yield(.digest) }
            feed.yield(.sync(trigger: "start"))
            while !Task.isCancelled {
                let now = Date()
                let next = digestZone.map { Watcher.nextDigestTime(after: now, timeZone: $0) }
                let wake = min(next ?? .distantFuture, now.addingTimeInterval(60))
                try? await Task.sleep(for: .milliseconds(Int64(max(0.05, wake.timeIntervalSince(now)) * 1000)))
                if Task.isCancelled { break }
                if let next, Date() >= next { feed.yield(.digest) }
                // Again after a page that could not be read (the outbox busy beyond its timeout).
                newPoints.raise()
                feed.yield(.sync(trigger: "timer"))
            }
        }
    }

    /// Points were committed: the diary reads them from the outbox when it comes to them.
    package func pointsCommitted() {
        newPoints.raise()
    }

    /// Finishes the page in hand (the notes being written are written), keeps the mark, then
    /// stops; the points after it are decided at the next start.
    package func finish() async {
        timers.cancel()
        network.cancel()
        feed.finish()
        await loop.value
    }

    /// Only ever touched by the loop task.
    struct State {
        let outbox: OutboxStore
        let context: RunContext
        let dependencies: Dependencies
        var decisions: [String: MovementDecision] = [:]
        /// Per device, the day (in note.time_zone) of the latest point it sent: when a point of a
        /// later day comes, the device's earlier day is over and gets its digest.
        var lastPointDay: [String: TrackDay] = [:]
        let digestZone: TimeZone?
        var syncFailures = 0
        /// When the next upload may be tried (the timer's, after a failure); at start, at once:
        /// notes left queued by an earlier run go up without waiting for a new one.
        var nextSync: Date? = .distantPast
        let newPoints: NewPointsSignal
        /// The row up to which points are decided (read from the outbox at the first page), and
        /// the one last kept there, when.
        var mark: Int64?
        var keptMark: Int64?
        var markKeptAt = Date.distantPast

        init(outbox: OutboxStore, context: RunContext, dependencies: Dependencies, digestZone: TimeZone?, newPoints: NewPointsSignal) {
            self.outbox = outbox
            self.context = context
            self.dependencies = dependencies
            self.digestZone = digestZone
            self.newPoints = newPoints
        }

        var report: @Sendable (WatchReport) -> Void { dependencies.report }

        mutating func handle(_ input: Input) async {
            switch input {
            case .points:
                if await decideNextPage() > 0 { await sync(trigger: "note") }
            case .digest:
                if await writeDigests() > 0 { await sync(trigger: "digest") }
            case .sync(let trigger):
                if let nextSync, Date() >= nextSync { await sync(trigger: trigger) }
            case .networkSettled:
                // A new route or address may be the way out: try now, whatever the backoff said.
                await sync(trigger: "network")
            }
        }

        /// The next page of points after the mark, each device's in turn (its points in the order
        /// they were taken); another page is asked for when this one was full. Returns the notes
        /// and digests written.
        mutating func decideNextPage() async -> Int {
            newPoints.lower()
            let page: OutboxStore.PhoneDiaryPage
            do {
                let after: Int64
                if let mark { after = mark } else { after = try await outbox.phoneDiaryMark() }
                keptMark = keptMark ?? after
                page = try await outbox.phoneDiaryPage(after: after, limit: PhoneDiary.pageSize)
            } catch {
                report(WatchReport(.problem, "diary-read-failed", "could not read the received points: \(error.reason); tried again within a minute"))
                return 0
            }
            if page.full { newPoints.raise() }
            var devices: [String: [(Fix, Int64)]] = [:]
            var order: [String] = []
            for point in page.points {
                if devices[point.device] == nil { order.append(point.device) }
                devices[point.device, default: []].append((point.fix, point.id))
            }
            var written = 0
            for device in order {
                let points = devices[device] ?? []
                written += await decide(points, device: device)
                written += await digestDaysOver(points, device: device)
            }
            mark = page.through
            await keepMark(now: Date())
            return written
        }

        /// Writes the mark to the outbox when it moved and `markInterval` has passed since it
        /// was last kept (`.distantFuture`: now, at the stop).
        mutating func keepMark(now: Date) async {
            guard let mark, mark != keptMark, now.timeIntervalSince(markKeptAt) >= PhoneDiary.markInterval else { return }
            do {
                try await outbox.setPhoneDiaryMark(mark)
                keptMark = mark
                markKeptAt = min(now, Date())
            } catch {
                report(WatchReport(.problem, "diary-mark-failed", "could not keep how far the received points are decided: \(error.reason); "
                                   + "after a restart they are decided again from the last mark kept, which writes nothing twice"))
            }
        }

        /// The points through the quality filter (accuracy; a phone's buffered points are old by
        /// nature, so no age limit) and the device's `MovementDecision`; returns the notes written.
        mutating func decide(_ points: [(Fix, Int64)], device: String) async -> Int {
            let config = context.config
            let filter = QualityFilter(maxAge: nil, minAccuracy: config.number(.minAccuracy), futureTolerance: .infinity)
            var decision: MovementDecision
            if let known = decisions[device] {
                decision = known
            } else {
                let anchor = (try? await outbox.latestNotedFix(device: device))??.fixIfReadable
                decision = MovementDecision(thresholds: WatchThresholds(config: config), anchor: anchor)
            }
            defer { decisions[device] = decision }
            var written = 0
            for (fix, fixId) in points.sorted(by: { $0.0.timestamp < $1.0.timestamp }) where filter.accepts(fix) {
                let verdict = decision.verdict(for: fix)
                guard verdict.logs else { continue }
                do {
                    let logger = try context.logger(outbox: outbox, accountKey: dependencies.account()?.accountKey)
                    let outcome = try await logger.log(fix, historyFix: fixId)
                    decision.logged(fix)
                    written += 1
                    var fields: [String: WatchReport.Value] = [
                        "device": .string(device), "id": .int(Int(outcome.note.id ?? 0)), "title": .string(outcome.note.title),
                        "why": .string(verdict.description), "latitude": .double(fix.latitude), "longitude": .double(fix.longitude),
                        "fixTime": .string(InstantText.string(fix.timestamp)),
                    ]
                    if let problem = outcome.addressProblem { fields["addressProblem"] = .string(problem) }
                    report(WatchReport(.event, "noted", "\(device): logged note \(outcome.note.id ?? 0) (\(verdict)): \(outcome.note.title)", fields))
                } catch {
                    // The anchor stays: the device's next point tries again.
                    report(WatchReport(.problem, "note-failed", "\(device): could not log a note: \((error as? any ENLogError)?.reason ?? "\(error)")",
                                       ["device": .string(device)]))
                }
            }
            return written
        }

        /// A minute past midnight (and at start, for a day that ended while nothing ran): the
        /// previous day's digest of each device that sent points of it, once each. The whole
        /// history's digest is not serve's: it would mix the phones' tracks (`enlog digest` and
        /// `watch` write it). Returns the digests written.
        func writeDigests() async -> Int {
            guard let zone = digestZone else { return 0 }
            // Before the grace minute after midnight the day before yesterday is the one that is over.
            let day = TrackDay(containing: dependencies.now().addingTimeInterval(-Watcher.digestDelay), timeZone: zone).previous
            let devices: [String]
            do {
                devices = try await outbox.devicesWithFixes(from: day.start, to: day.end)
            } catch {
                report(WatchReport(.problem, "digest-failed", "could not read which devices sent points on \(day.name): \(error.reason)"))
                return 0
            }
            var written = 0
            for device in devices where await writeDigest(day, device: device) { written += 1 }
            return written
        }

        /// The days of `device` these points show to be over — its earlier day when they are of a
        /// later one (a phone offline at midnight sends yesterday's points after the digest time,
        /// then today's), and every day of the batch before its last (a day's buffered points) —
        /// get their digest when they have none and have ended. Returns the digests written.
        mutating func digestDaysOver(_ points: [(Fix, Int64)], device: String) async -> Int {
            guard let zone = digestZone, let first = points.map(\.0.timestamp).min() else { return 0 }
            if lastPointDay[device] == nil, let before = try? await outbox.latestFixTime(device: device, before: first) {
                // After a restart: the day of the device's last point before these.
                lastPointDay[device] = TrackDay(containing: before, timeZone: zone)
            }
            var days: [TrackDay] = lastPointDay[device].map { [$0] } ?? []
            for (fix, _) in points.sorted(by: { $0.0.timestamp < $1.0.timestamp }) where days.last.map({ fix.timestamp >= $0.end }) ?? true {
                days.append(TrackDay(containing: fix.timestamp, timeZone: zone))
            }
            // Points older than the device's latest day (sent late) add no day: `days` starts there.
            guard let latest = days.last else { return 0 }
            lastPointDay[device] = latest
            let settled = dependencies.now().addingTimeInterval(-Watcher.digestDelay)
            var written = 0
            for day in days.dropLast() where day.end <= settled {
                if await writeDigest(day, device: device) { written += 1 }
            }
            return written
        }

        /// `day`'s digest of `device`, unless it has one; true when written now.
        func writeDigest(_ day: TrackDay, device: String) async -> Bool {
            let digest = context.digest(outbox: outbox, accountKey: dependencies.account()?.accountKey, device: device)
            do {
                switch try await digest.write(day) {
                case .alreadyThere(let id):
                    report(WatchReport(.detail, "digest", "\(device): \(day.name) has its digest already (note \(id))",
                                       ["device": .string(device), "day": .string(day.name), "id": .int(Int(id)), "written": .bool(false)]))
                    return false
                case .written(let note, let statistics, let places, let mapProblem, let mapPending):
                    var fields: [String: WatchReport.Value] = [
                        "device": .string(device), "day": .string(day.name), "id": .int(Int(note.id ?? 0)), "written": .bool(true),
                        "fixes": .int(statistics.fixes), "distance": .double(statistics.distance), "places": .int(places),
                    ]
                    if let mapProblem { fields["mapProblem"] = .string(mapProblem) }
                    if mapPending { fields["mapPending"] = .bool(true) }
                    report(WatchReport(.event, "digest", "\(device): wrote the digest of \(day.name) as note \(note.id ?? 0): \(note.title)", fields))
                    return true
                }
            } catch let error as DigestError {
                report(WatchReport(.detail, "digest", "\(device): \(error.reason)", ["device": .string(device), "day": .string(day.name), "written": .bool(false)]))
            } catch {
                report(WatchReport(.problem, "digest-failed", "\(device): could not write the digest of \(day.name): \((error as? any ENLogError)?.reason ?? "\(error)")",
                                   ["device": .string(device), "day": .string(day.name)]))
            }
            return false
        }

        /// One upload as `enlog sync` does it, when signed in and notes wait; on failure the next
        /// is tried after a capped backoff (30 s doubling to 15 min), by the minute timer.
        mutating func sync(trigger: String) async {
            guard let account = dependencies.account() else { nextSync = nil; return }
            let counts = (try? await outbox.counts()) ?? [:]
            let pending = (counts[.pending] ?? 0) + (counts[.failed] ?? 0) + (counts[.sending] ?? 0)
            guard pending > 0 else { nextSync = nil; return }
            var succeeded = false
            do {
                switch try await SyncSession(context: context, outbox: outbox, account: account).run() {
                case .unreachable(let reachability, _):
                    report(WatchReport(.event, "reachability", "\(reachability.verdict.name) (after \(trigger)); \(counted(pending, "note")) stay queued",
                                       ["verdict": .string(reachability.verdict.name), "trigger": .string(trigger), "pending": .int(pending)]))
                case .synced(let summary):
                    succeeded = summary.remaining == 0
                    report(WatchReport(.event, "synced", "uploaded \(summary.uploaded), \(summary.remaining) remaining (after \(trigger))",
                                       ["uploaded": .int(summary.uploaded), "remaining": .int(summary.remaining), "trigger": .string(trigger)]))
                }
            } catch {
                report(WatchReport(.problem, "sync-failed", (error as? any ENLogError)?.reason ?? "\(error)"))
            }
            if succeeded {
                syncFailures = 0
                nextSync = nil
            } else {
                syncFailures += 1
                nextSync = Date().addingTimeInterval(min(900, 30 * pow(2, Double(syncFailures - 1))))
            }
        }
    }
}

/// "Points were committed after the diary's mark": raised by the receiver after each commit,
/// lowered by the diary as it reads a page. At most one `.points` waits in the feed, so the feed
/// stays short whatever the receivers' rate.
final class NewPointsSignal: Sendable {
    private let raised = Atomic<Bool>(false)
    private let feed: AsyncStream<PhoneDiary.Input>.Continuation

    init(feed: AsyncStream<PhoneDiary.Input>.Continuation) {
        self.feed = feed
    }

    func raise() {
        if !raised.exchange(true, ordering: .acquiringAndReleasing) { feed.yield(.points) }
    }

    /// Before a page is read: a commit after this raises the signal again.
    func lower() {
        raised.store(false, ordering: .releasing)
    }
}

/// How many network changes came so far: a settle timer hands its change on only when no later one came.
private final class ChangeCount: Sendable {
    private let count = Mutex(0)

    func next() -> Int {
        count.withLock { count in
            count += 1
            return count
        }
    }

    var current: Int { count.withLock { $0 } }
}

extension FixRecord {
    var fixIfReadable: Fix? { try? fix() }
}
