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

/// Uploads the due notes of one outbox to one NoteStore, each note exactly once whatever fails
/// or is killed: one call of `run()` is one pass. Owns what a pass is configured with (outbox,
/// NoteStore URL and token, how clients are made, address lookup and renderer for deferred
/// addresses, clock, `SyncOptions`), takes the sync lock for the pass, and turns the pass's
/// `SyncRun` into the final `SyncSummary` (remaining notes, waits, verdict). It knows nothing of
/// the config file, the account or reachability: that is `SyncSession`, the command-level entry
/// that decides whether to call it at all. How exactly-once works: `SyncExactlyOnce.swift`.
package struct SyncEngine: Sendable {
    package static let applicationDataKey = "enlog.id"

    /// Makes the NoteStore client of a run (notebooks, lookups and every `createNote`, on one
    /// kept-alive connection). The default clients cannot have libcurl re-send a request body,
    /// and report any re-send to the run (`SyncRun.send`).
    package typealias ClientFactory = @Sendable (_ noteStoreURL: String, _ token: String) -> NoteStoreClient

    package static let defaultClientFactory: ClientFactory = { url, token in
        NoteStoreClient(transport: ThriftHTTPTransport(url: url), authenticationToken: token)
    }

    /// Clients over `http` whose successful calls report their address to `connected`.
    static func clientFactory(http: HTTPConfiguration, connected: ConnectedAddress, resends: ResendCount) -> ClientFactory {
        { url, token in
            NoteStoreClient(transport: ThriftHTTPTransport(url: url, client: HTTPClient(configuration: http),
                                                           onConnected: { connected.record($0) },
                                                           onResent: { resends.record() }),
                            authenticationToken: token)
        }
    }

    let outbox: OutboxStore
    let noteStoreURL: String
    let token: String
    let makeClient: ClientFactory
    let placeLookup: (any PlaceLookup)?
    let renderer: NoteRenderer?
    let clock: @Sendable () -> Date
    let options: SyncOptions
    /// The address the run's NoteStore calls reached; remembered per host at the end of the run.
    let connected = ConnectedAddress()
    /// Requests of the run's client that went out twice; `SyncRun.send` compares it around each `createNote`.
    let resends = ResendCount()
    let rememberAddress: Bool

    /// - Parameters:
    ///   - makeClient: nil: clients over `http` that record the address they reach, remembered
    ///     (`OutboxStore.rememberNoteStoreAddress`) unless `rememberAddress` is false (through a proxy the
    ///     address reached is the proxy's, not the NoteStore's).
    ///   - placeLookup, renderer: fill in deferred addresses (`addressPending` notes) before
    ///     upload; without them such notes are uploaded as queued (coordinates only).
    ///   - clock: "now" for every state change, retry time and rate-limit check.
    package init(outbox: OutboxStore, noteStoreURL: String, token: String,
                makeClient: ClientFactory? = nil, http: HTTPConfiguration = HTTPConfiguration(),
                rememberAddress: Bool = true,
                placeLookup: (any PlaceLookup)? = nil, renderer: NoteRenderer? = nil,
                clock: @escaping @Sendable () -> Date = { Date() }, options: SyncOptions = SyncOptions()) {
        self.outbox = outbox
        self.noteStoreURL = noteStoreURL
        self.token = token
        self.makeClient = makeClient ?? Self.clientFactory(http: http, connected: connected, resends: resends)
        self.rememberAddress = rememberAddress && makeClient == nil
        self.placeLookup = placeLookup
        self.renderer = renderer
        self.clock = clock
        self.options = options
    }

    /// One sync. Throws `SyncError.syncInProgress` (another sync holds the lock),
    /// `SyncError.reauthenticationRequired` (token refused; nothing is lost), `OutboxError`.
    /// Everything else ends the run with a summary saying why it stopped.
    package func run() async throws -> SyncSummary {
        let lock = try SyncLock(databasePath: outbox.path)
        defer { lock.release() }
        let client = makeClient(noteStoreURL, token)
        let cancellation = CancellationFlag()
        // The run's own bookkeeping must not see the caller's cancellation (GRDB refuses database
        // access from a cancelled task, which would leave a stored note unmarked): it runs in an
        // unstructured task, and cancellation only raises a flag checked between notes and
        // cancels the request in flight.
        let outbox = self.outbox
        let engine = self
        let work = Task { () async throws -> SyncSummary in
            let run = SyncRun(engine: engine, client: client, cancellation: cancellation)
            let result: Result<SyncSummary, Error>
            do { result = .success(try await run.execute()) } catch { result = .failure(error) }
            // Whatever ended the run, a call that got through proves the address.
            await engine.rememberConnectedAddress()
            var summary = try result.get()
            summary.remaining = try await Self.remaining(outbox)
            let retries = try await outbox.retryWaits()
            summary.waitingForRetry = retries.count
            summary.nextRetryAt = retries.next
            let waits = try await outbox.addressWaits()
            summary.waitingForAddress = waits.count
            summary.addressTriesLeft = waits.count > 0 ? max(0, engine.options.addressAttempts - waits.fewestTries) : nil
            summary.verdict = SyncSummary.verdict(for: summary)
            return summary
        }
        return try await withTaskCancellationHandler {
            try await work.value
        } onCancel: {
            cancellation.cancel()
        }
    }

    /// Stores the last address a call reached as `ip:port` for the NoteStore host. Best effort:
    /// failing to remember must not fail a sync that worked.
    func rememberConnectedAddress() async {
        guard rememberAddress, let ip = connected.latest,
              let endpoint = NoteStoreEndpoint(url: noteStoreURL) else { return }
        let address = ip.contains(":") ? "[\(ip)]:\(endpoint.port)" : "\(ip):\(endpoint.port)"
        guard (try? ReachabilityChecker.parse(address: address)) != nil else { return }
        try? await outbox.rememberNoteStoreAddress(address, host: endpoint.host, now: clock())
    }

    static func remaining(_ outbox: OutboxStore) async throws -> Int {
        let counts = try await outbox.counts()
        return (counts[.pending] ?? 0) + (counts[.failed] ?? 0) + (counts[.sending] ?? 0)
    }

    /// The EDAM note uploaded for an outbox row. Deterministic: every attempt sends the same
    /// `created` and `enlog.id`, which is what the lookup matches.
    package static func edamNote(for note: OutboxNote, notebookGuid: EDAM.Guid?) -> EDAM.Note {
        var attributes = EDAM.NoteAttributes()
        attributes.latitude = note.latitude
        attributes.longitude = note.longitude
        attributes.altitude = note.altitude
        attributes.placeName = note.placeName
        attributes.subjectDate = note.subjectDate.map(milliseconds)
        attributes.source = note.source
        attributes.sourceApplication = note.sourceApplication
        attributes.applicationData = EDAM.LazyMap(fullMap: [applicationDataKey: note.uid])
        var edam = EDAM.Note(title: note.title, content: note.content, notebookGuid: notebookGuid,
                             tagNames: note.tags.isEmpty ? nil : note.tags, attributes: attributes)
        edam.created = milliseconds(created(note))
        return edam
    }

    /// A note's `created` in Evernote and ENEX: the moment it is about (its fix's time, a
    /// digest's day), so Evernote files a digest of 2021-08-19 or an imported old fix under
    /// that day, not the day it was uploaded. The time it was queued stays in the outbox
    /// (`queue list`). Deterministic: the same on every attempt, which the lookup relies on.
    package static func created(_ note: OutboxNote) -> Date { note.subjectDate ?? note.createdAt }

    package static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }
}

/// The last address a NoteStore call reached. Written from HTTP threads, read at the end of a run.
final class ConnectedAddress: Sendable {
    private let value = Mutex<String?>(nil)

    func record(_ ip: String) { value.withLock { $0 = ip } }
    var latest: String? { value.withLock { $0 } }
}

/// How many requests went out twice on a run's connections (`HTTPResponse.resent`).
final class ResendCount: Sendable {
    private let value = Mutex(0)

    func record() { value.withLock { $0 += 1 } }
    var count: Int { value.withLock { $0 } }
}
