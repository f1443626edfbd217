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

package struct SyncOptions: Sendable {
    /// Upload at most this many notes in one run (nil: all that are due).
    package var maxNotes: Int?
    /// Report what is due without any network call or state change.
    package var dryRun: Bool
    /// A note whose attempt count reaches this is parked instead of failed.
    package var maxAttempts: Int
    /// Failed address lookups (one per run) after which a deferred-address note is uploaded
    /// with its coordinates only.
    package var addressAttempts: Int
    /// Time allowed for one address lookup.
    package var addressBudget: Duration
    /// Address lookups tried per run at most.
    package var addressLookupsPerRun: Int
    /// Retry backoff (`RetryBackoff`, jittered): base · 2^(attempts−1), capped, then scaled by a
    /// random factor in [0.5, 1].
    package var backoffBase: TimeInterval
    package var backoffCap: TimeInterval
    /// Consecutive transient failures (5xx, timeouts…) after which the run stops.
    package var maxConsecutiveFailures: Int
    /// Wait this long when Evernote says RATE_LIMIT_REACHED without a duration.
    package var defaultRateLimitWait: TimeInterval
    /// The signed-in account (`EvernoteAccount.accountKey`): notes queued for another account are
    /// never uploaded to this one. nil: no filter.
    package var account: String?
    /// Told what happens, note by note (progress lines, `--verbose`); called on the run's task.
    package var observer: (@Sendable (SyncEvent) -> Void)?
    /// Makes the maps of notes logged while they could not be made (nil: they go without).
    package var maps: MapRenderer?
    /// Failed runs after which a note waiting for its map goes without it.
    package var mapAttempts = 3
    /// Finds the stays of a digest made again with its route (the configured `stays.*`).
    package var stays = StayDetector()
    /// Notes marked `sending` together in one transaction, their results recorded together
    /// after the last one's request: two fsyncs per batch instead of two per note. A process
    /// killed mid-batch leaves at most this many notes `sending`, each looked up by the next run.
    package var batchSize = 32

    package init(maxNotes: Int? = nil, dryRun: Bool = false, maxAttempts: Int = 8, addressAttempts: Int = 3,
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
