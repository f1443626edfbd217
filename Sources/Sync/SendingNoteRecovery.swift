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

/// `enlog queue retry` and `queue drop` for a note that may be `sending`. A note is `sending`
/// either because a sync is sending it now (hands off) or because the sync that was sending it
/// died or gave up waiting (a hanging service, a killed process): then the note is stuck until
/// the next sync looks it up. Which of the two is told by the sync lock: while this holds it,
/// no sync runs, so a `sending` note is stuck and the user may act on it.
package enum SendingNoteRecovery {
    /// What `retry` or `drop` did.
    package struct Result: Sendable {
        package var note: OutboxNote
        /// The note was `sending`: Evernote may already have it (the reply never came back).
        package var wasSending: Bool
        /// The note was `exported`: Evernote may have it through its ENEX file.
        package var wasExported = false
    }

    /// failed, parked or stuck-sending → pending. A stuck note is flagged for the exactly-once
    /// lookup, so the next sync searches Evernote for it before creating it.
    /// Throws `SyncError.syncInProgress` when a sync is running and the note is `sending`.
    package static func retry(_ id: Int64, outbox: OutboxStore, now: Date = Date()) async throws -> Result {
        let current = try await outbox.note(id: id)
        guard current.state == .sending else {
            return Result(note: try await outbox.retry(id, now: now), wasSending: false, wasExported: current.state == .exported)
        }
        let lock = try SyncLock(databasePath: outbox.path)
        defer { lock.release() }
        try await outbox.setNeedsLookup(id, true)
        return Result(note: try await outbox.requeueSending(id, now: now), wasSending: true)
    }

    /// Deletes the note from the outbox, also when it is stuck `sending` (then it may already
    /// be in Evernote: `wasSending` says so). Throws `SyncError.syncInProgress` when a sync is
    /// running and the note is `sending`.
    package static func drop(_ id: Int64, outbox: OutboxStore) async throws -> Result {
        let current = try await outbox.note(id: id)
        guard current.state == .sending else {
            return Result(note: try await outbox.drop(id), wasSending: false)
        }
        let lock = try SyncLock(databasePath: outbox.path)
        defer { lock.release() }
        return Result(note: try await outbox.drop(id, includingSending: true), wasSending: true)
    }
}
