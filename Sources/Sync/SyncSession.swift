import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Auth
import Capture
import Compose
import Outbox
import Diary

/// One `enlog sync` as the command sees it: the entry point shared by the `sync` command and
/// the opportunistic sync after `log`. Owns what comes from outside the outbox: the signed-in
/// account (its NoteStore URL, token and account key), the config (timeouts, CA file, address
/// lookup, template), reachability by address before any call, and the choice of the
/// NoteStore's address (DNS or the remembered one). When the service is reachable it builds a
/// `SyncEngine` for one pass and returns its summary; it never touches notes itself.
package struct SyncSession: Sendable {
    package enum Outcome: Sendable {
        /// Not reachable: nothing was sent. The summary says so (`offline`/`noUplink`, the notes
        /// left waiting), in the same shape as a run's.
        case unreachable(ReachabilityReport, SyncSummary)
        case synced(SyncSummary)

        package var summary: SyncSummary {
            switch self {
            case .unreachable(_, let summary), .synced(let summary): return summary
            }
        }
    }

    let context: RunContext
    let outbox: OutboxStore
    let account: EvernoteAccount
    var config: Config { context.config }

    package init(context: RunContext, outbox: OutboxStore, account: EvernoteAccount) {
        self.context = context
        self.outbox = outbox
        self.account = account
    }

    /// - Parameter requestTimeout: the longest one NoteStore request may take (default:
    ///   `network.request_timeout`).
    package func run(maxNotes: Int? = nil, dryRun: Bool = false, requestTimeout: Duration? = nil,
                    environment: [String: String] = ProcessInfo.processInfo.environment,
                    observer: (@Sendable (SyncEvent) -> Void)? = nil) async throws -> Outcome {
        guard let noteStoreURL = account.credentials.noteStoreUrl else {
            throw AuthError.credentialsMissing(path: "the NoteStore URL of the stored account")
        }
        let endpoint = NoteStoreEndpoint(url: noteStoreURL)
        let plan = try await SyncReachability.plan(config: config, outbox: outbox, noteStoreURL: noteStoreURL,
                                                   environment: environment)
        let report = await ReachabilityChecker.check(plan.configuration)
        let waiting = try await SyncEngine.remaining(outbox)
        guard case .reachable = report.verdict else {
            var summary = SyncSummary()
            summary.stoppedBecause = report.verdict == .offline ? .offline : .noUplink
            summary.remaining = waiting
            summary.verdict = SyncSummary.verdict(for: summary)
            return .unreachable(report, summary)
        }
        var http = context.http(requestTimeout: requestTimeout)
        // Nothing queued: no NoteStore call will be made, so no lookup to wait for either.
        if let endpoint, !plan.proxied, !dryRun, waiting > 0 {
            let decision = try await NoteStoreAddressing.decide(
                endpoint: endpoint, remembered: plan.remembered,
                timeout: max(.milliseconds(100), config.duration(.dnsTimeout)))
            http.resolve = decision.resolve
            if let note = decision.note { observer?(.notice(note)) }
        }
        let places = context.places(outbox)
        let renderer = try context.noteRenderer()
        var options = SyncOptions(maxNotes: maxNotes, dryRun: dryRun, account: account.accountKey, observer: observer)
        options.maps = context.mapsIfWanted
        options.stays = StayDetector(config: config)
        let engine = SyncEngine(outbox: outbox, noteStoreURL: noteStoreURL, token: account.credentials.token,
                                http: http, rememberAddress: !plan.proxied,
                                placeLookup: places, renderer: renderer, options: options)
        return .synced(try await engine.run())
    }

    /// What the upload after `log` did, for the one line `log` prints about it.
    package enum OpportunisticUpload: Sendable {
        /// Not reachable, or nothing to do: nothing to say.
        case skipped
        case finished(SyncSummary)
        /// The budget ran out (a hanging service): the request in flight was abandoned. The
        /// logged note is queued unless it was uploaded before; `remaining` notes wait.
        case timedOut(budget: Duration, loggedNoteQueued: Bool, remaining: Int)
        /// The sync could not run or stopped with an error (another sync running, token refused…).
        case failed(any ENLogError)
    }

    /// The sync after `log`: a few notes within a bounded time (each request bounded by the
    /// budget too), and no error ever surfaces as a failure — the logged note is already stored,
    /// and the next `enlog sync` does the rest.
    package func runOpportunistically(loggedNote: Int64?, maxNotes: Int = 20,
                                     budget: Duration = .seconds(10)) async -> OpportunisticUpload {
        let timeout = min(budget, config.duration(.requestTimeout))
        do {
            let outcome = try await withDeadline(budget) {
                try await self.run(maxNotes: maxNotes, requestTimeout: timeout)
            }
            guard case .synced(let summary) = outcome else { return .skipped }
            return .finished(summary)
        } catch is DeadlineExceeded {
            var loggedNoteQueued = true
            if let loggedNote, let note = try? await outbox.note(id: loggedNote) { loggedNoteQueued = note.state != .synced }
            return .timedOut(budget: budget, loggedNoteQueued: loggedNoteQueued,
                             remaining: (try? await SyncEngine.remaining(outbox)) ?? 0)
        } catch let error as any ENLogError {
            return .failed(error)
        } catch {
            return .skipped
        }
    }
}
