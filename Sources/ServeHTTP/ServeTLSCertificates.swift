import Foundation
import Synchronization
import NIOCore
import Configuration
import Watch

/// The certificate and key `enlog serve` hands each new connection, read again without a restart:
/// on SIGHUP (`reload(.signal)`), and when either file changed on disk (certbot's renewal, which
/// points `live/` at new files, needs no hook). Each connection's TLS handler holds the context
/// it was made with, so open connections keep their pair and only new ones get the new pair. A
/// pair that cannot be used (unreadable, a key not of the certificate, outside its dates) is
/// refused in one problem line and the pair in force stays.
///
/// The files are looked at when a connection arrives, at most once per `recheckInterval` and
/// on a thread of Dispatch's, never on the event loop: two `stat` calls when nothing changed, the
/// files read only when they did. An idle receiver does no work at all, and the connection that
/// notices a renewal still gets the pair in force, which certbot renews 30 days before its end.
package final class ServeTLSCertificates: Sendable {
    /// Why the pair is read again.
    package enum Trigger: Sendable {
        /// SIGHUP: read even when the files look unchanged.
        case signal
        /// A file's stamp (inode, size, modification time) differs from the one last read.
        case fileChanged

        var words: String { self == .signal ? "on SIGHUP" : "its file changed" }
    }

    /// What a reload did.
    package enum Outcome: Sendable, Equatable {
        case reloaded(serial: String, notAfter: Date)
        case unchanged
        case refused(reason: String)
    }

    private struct State {
        var current: ServeTLSContext
        /// The files' stamps at the last attempt, whether it succeeded or not: a refused pair is
        /// reported once, and tried again when either file changes again.
        var attempted: ServeTLSFiles.Stamps
        var lastCheck: ContinuousClock.Instant
        var checking = false
        /// The farthest expiry stage already reported for the pair in force.
        var announced: ServeTLSContext.Validity.Stage
    }

    /// Often enough that a replaced file is served within seconds of the next connections; the
    /// cost is two `stat` calls per interval under load.
    static let recheckInterval: Duration = .seconds(1)

    private let state: Mutex<State>
    /// One reload at a time (SIGHUP while a changed file is being read).
    private let reloading = Mutex(())
    private let report: @Sendable (WatchReport) -> Void

    /// `initial` was loaded at the start, whose expiry warning the start reported.
    package init(_ initial: ServeTLSContext, now: Date = Date(), report: @escaping @Sendable (WatchReport) -> Void) {
        state = Mutex(State(current: initial, attempted: initial.stamps, lastCheck: .now, announced: initial.validity.stage(at: now)))
        self.report = report
    }

    package var current: ServeTLSContext { state.withLock { $0.current } }

    /// Reads the pair again (for `.fileChanged` only when a stamp differs); the new pair serves
    /// new connections from now on, or the old one stays and one problem line says why.
    /// Blocking: file reads.
    @discardableResult
    package func reload(_ trigger: Trigger, now: Date = Date()) -> Outcome {
        reloading.withLock { _ -> Outcome in
            let (old, attempted) = state.withLock { ($0.current, $0.attempted) }
            let stamps = old.files.currentStamps()
            if trigger == .fileChanged && stamps == attempted { return .unchanged }
            let loaded: ServeTLSContext
            do throws(ConfigError) {
                loaded = try ServeTLSContext.load(old.files, now: now)
            } catch {
                state.withLock { $0.attempted = stamps }
                let reason = error.reason
                report(WatchReport(.problem, "tls-reload-failed",
                                   "TLS certificate not reloaded (\(trigger.words)): \(reason); new connections keep the one in force "
                                   + "(serial \(old.serial), valid until \(utcTimestamp(old.validity.notAfter)))",
                                   ["certificate": .string(old.certificatePath), "serial": .string(old.serial)]))
                return .refused(reason: reason)
            }
            let stage = loaded.validity.stage(at: now)
            state.withLock { state in
                state.current = loaded
                state.attempted = stamps
                state.announced = stage
            }
            report(WatchReport(.event, "tls-reloaded",
                               "TLS certificate reloaded from \(loaded.certificatePath) (\(trigger.words)): serial \(loaded.serial), "
                               + "valid until \(utcTimestamp(loaded.validity.notAfter)); new connections use it",
                               ["certificate": .string(loaded.certificatePath), "serial": .string(loaded.serial),
                                "notAfter": .string(utcTimestamp(loaded.validity.notAfter))]))
            if let warning = loaded.expiryWarning(now: now) {
                report(WatchReport(.problem, "tls-expires-soon", warning, ["notAfter": .string(utcTimestamp(loaded.validity.notAfter))]))
            }
            return .reloaded(serial: loaded.serial, notAfter: loaded.validity.notAfter)
        }
    }

    /// A connection arrived: at most once per `recheckInterval`, and off the event loop, looks
    /// whether the files changed (then reloads) and whether the pair in force has come within
    /// the warning window or expired since it was last said (one line each).
    func connectionArrived() {
        let due = state.withLock { state in
            guard !state.checking, ContinuousClock.now - state.lastCheck >= Self.recheckInterval else { return false }
            state.checking = true
            state.lastCheck = .now
            return true
        }
        guard due else { return }
        DispatchQueue.global().async { [self] in
            reload(.fileChanged)
            announceExpiry(now: Date())
            state.withLock { $0.checking = false }
        }
    }

    /// One line when the pair in force enters a later expiry stage than the one last said.
    func announceExpiry(now: Date) {
        let (context, newStage) = state.withLock { (state: inout State) -> (ServeTLSContext, ServeTLSContext.Validity.Stage?) in
            let stage = state.current.validity.stage(at: now)
            guard stage > state.announced else { return (state.current, nil) }
            state.announced = stage
            return (state.current, stage)
        }
        switch newStage {
        case .expiresSoon?:
            if let warning = context.expiryWarning(now: now) {
                report(WatchReport(.problem, "tls-expires-soon", warning, ["notAfter": .string(utcTimestamp(context.validity.notAfter))]))
            }
        case .expired?:
            report(WatchReport(.problem, "tls-expired",
                               "the TLS certificate in \(context.certificatePath) expired on \(utcTimestamp(context.validity.notAfter)): "
                               + "clients refuse it until the renewed one is in place (read when its file changes, or on SIGHUP)",
                               ["notAfter": .string(utcTimestamp(context.validity.notAfter))]))
        case .valid?, nil:
            break
        }
    }

    /// The TLS handlers for a new connection, with the pair in force now.
    func addHandlers(to pipeline: ChannelPipeline.SynchronousOperations, report: @escaping @Sendable (WatchReport) -> Void) throws {
        connectionArrived()
        try current.addHandlers(to: pipeline, report: report)
    }
}
