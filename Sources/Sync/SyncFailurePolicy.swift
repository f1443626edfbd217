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

/// How a failed call is handled.
enum FailureKind {
    /// The request may have been processed: look the note up before the next attempt.
    case ambiguous
    /// Certainly not processed, but worth retrying; `networkDown` stops the run.
    case notProcessed(networkDown: Bool)
    /// Evernote rejected this note; it cannot succeed unchanged.
    case rejected
    /// Account quota: keep the note, retry much later.
    case quota
    case rateLimited(seconds: Int?)
    case reauthenticate
    case cancelled

    static func classify(_ error: Error) -> FailureKind {
        if error is CancellationError { return .cancelled }
        if error is ResourceLimitError { return .rejected }
        if let e = error as? EvernoteError {
            if e.requiresReauthentication { return .reauthenticate }
            switch e {
            case .rateLimited(let seconds): return .rateLimited(seconds: seconds)
            case .quotaReached: return .quota
            case .enmlValidation, .badDataFormat, .dataRequired, .limitReached, .permissionDenied,
                 .dataConflict, .notFound:
                return .rejected
            case .service, .application:
                // The service answered with an exception: nothing was stored.
                return .notProcessed(networkDown: false)
            default:
                // Unreadable/mismatched reply: the call may have gone through.
                return .ambiguous
            }
        }
        if let e = error as? HTTPError {
            switch e {
            case .couldNotResolveHost, .couldNotConnect, .tls, .insecureURL, .invalidURL:
                return .notProcessed(networkDown: true)
            case .caFileUnusable: return .notProcessed(networkDown: false)
            case .cancelled: return .cancelled
            case .timedOut, .connectionLost, .responseTooLarge, .headerTooLarge, .badReply, .other: return .ambiguous
            }
        }
        // ThriftHTTPError (a proxy or the service answering non-Thrift) and anything unknown.
        return .ambiguous
    }
}

extension FailureKind {
    /// The note stays queued (or is parked) because of a failure, which decides the run's
    /// verdict; rate limits and refused tokens end the run with their own reasons instead.
    var leavesNoteBehind: Bool {
        switch self {
        case .ambiguous, .notProcessed, .rejected, .quota: return true
        case .rateLimited, .reauthenticate, .cancelled: return false
        }
    }

    /// Errors about this note (or its notebook) rather than the account or the network.
    var isNoteLevel: Bool {
        if case .rejected = self { return true }
        return false
    }
}

extension SyncRun {

    /// A failure not tied to one note (notebook listing, lookup): stop the run or carry on.
    func handleRunLevel(_ error: Error) async throws {
        if let stop = error as? Stop { throw stop }
        if error is OutboxError { throw error }
        switch FailureKind.classify(error) {
        case .reauthenticate, .cancelled: summary.lastError = oneLine(error)
        default: summary.noteFailure(error)
        }
        switch FailureKind.classify(error) {
        case .reauthenticate: throw SyncError.reauthenticationRequired(detail: oneLine(error))
        case .rateLimited(let seconds):
            _ = try await holdForRateLimit(seconds: seconds, error: error)
            throw Stop(reason: .rateLimited)
        case .cancelled: throw Stop(reason: .cancelled)
        case .notProcessed(networkDown: true): throw Stop(reason: .networkDown)
        default: throw Stop(reason: .serviceFailing)
        }
    }

    func holdForRateLimit(seconds: Int?, error: Error) async throws -> Date {
        let now = engine.clock()
        let asked = seconds.map(TimeInterval.init) ?? options.defaultRateLimitWait
        let longest = OutboxStore.RateLimitHold.longest
        let until = now.addingTimeInterval(min(asked, longest))
        let reason = oneLine(error) + (asked > longest ? "; enlog waits \(Int(longest)) s at most, Evernote's rate-limit window" : "")
        try await outbox.setRateLimitHold(.init(until: until, reason: reason), now: now)
        summary.notBefore = until
        summary.lastError = reason
        return until
    }

    func countTransient() throws {
        consecutiveFailures += 1
        if consecutiveFailures >= options.maxConsecutiveFailures { throw Stop(reason: .serviceFailing) }
    }

    /// sending → failed with a backoff, or parked (rejected by Evernote, or out of attempts).
    func fail(_ id: Int64, reason: String, kind: FailureKind) async throws {
        let now = engine.clock()
        let current = try await outbox.note(id: id)
        summary.failed += 1
        if case .rejected = kind {
            try await outbox.park(id, reason: reason, now: now)
            summary.parked += 1
            report(id, .parked, guid: nil)
            return
        }
        if current.attempts >= options.maxAttempts {
            try await outbox.park(id, reason: "\(reason) (gave up after \(counted(current.attempts, "attempt")))", now: now)
            summary.parked += 1
            report(id, .parked, guid: nil)
            return
        }
        let delay: TimeInterval
        if case .quota = kind {
            delay = options.backoffCap
        } else {
            delay = RetryBackoff(base: options.backoffBase, cap: options.backoffCap).jittered(afterAttempts: current.attempts)
        }
        try await outbox.markFailed(id, reason: reason, retryAt: now.addingTimeInterval(delay), now: now)
        report(id, .failed, guid: nil)
    }
}
