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

public struct SyncOptions: Sendable {
    /// Upload at most this many notes in one run (nil: all that are due).
    public var maxNotes: Int?
    /// Report what is due without any network call or state change.
    public var dryRun: Bool
    /// A note whose attempt count reaches this is parked instead of failed.
    public var maxAttempts: Int
    /// Failed address lookups (one per run) after which a deferred-address note is uploaded
    /// with its coordinates only.
    public var addressAttempts: Int
    /// Time allowed for one address lookup.
    public var addressBudget: Duration
    /// Address lookups tried per run at most.
    public var addressLookupsPerRun: Int
    /// Retry backoff (`RetryBackoff`, jittered): base · 2^(attempts−1), capped, then scaled by a
    /// random factor in [0.5, 1].
    public var backoffBase: TimeInterval
    public var backoffCap: TimeInterval
    /// Consecutive transient failures (5xx, timeouts…) after which the run stops.
    public var maxConsecutiveFailures: Int
    /// Wait this long when Evernote says RATE_LIMIT_REACHED without a duration.
    public var defaultRateLimitWait: TimeInterval
    /// The signed-in account (`EvernoteAccount.accountKey`): notes queued for another account are
    /// never uploaded to this one. nil: no filter.
    public var account: String?
    /// Told what happens, note by note (progress lines, `--verbose`); called on the run's task.
    public var observer: (@Sendable (SyncEvent) -> Void)?
    /// Makes the maps of notes logged while they could not be made (nil: they go without).
    public var maps: MapRenderer?
    /// Failed runs after which a note waiting for its map goes without it.
    public var mapAttempts = 3
    /// Finds the stays of a digest made again with its route (the configured `stays.*`).
    public var stays = StayDetector()
    /// Notes marked `sending` together in one transaction, their results recorded together
    /// after the last one's request: two fsyncs per batch instead of two per note. A process
    /// killed mid-batch leaves at most this many notes `sending`, each looked up by the next run.
    public var batchSize = 32

    public init(maxNotes: Int? = nil, dryRun: Bool = false, maxAttempts: Int = 8, addressAttempts: Int = 3,
                addressBudget: Duration = .seconds(3), addressLookupsPerRun: Int = 20,
                backoffBase: TimeInterval = RetryBackoff.standard.base, backoffCap: TimeInterval = RetryBackoff.standard.cap,
                maxConsecutiveFailures: Int = 3, defaultRateLimitWait: TimeInterval = 300, account: String? = nil,
                observer: (@Sendable (SyncEvent) -> Void)? = nil) {
        self.account = account
        self.observer = observer
        self.maxNotes = maxNotes
        self.dryRun = dryRun
        self.maxAttempts = maxAttempts
        self.addressAttempts = addressAttempts
        self.addressBudget = addressBudget
        self.addressLookupsPerRun = addressLookupsPerRun
        self.backoffBase = backoffBase
        self.backoffCap = backoffCap
        self.maxConsecutiveFailures = maxConsecutiveFailures
        self.defaultRateLimitWait = defaultRateLimitWait
    }
}
