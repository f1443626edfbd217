import Foundation
import GRDB
import Support
import EvernoteAPI
import Configuration
import Capture
import Compose

/// The history as a track: fixes brought in from files (`enlog import`), fixes of a time span,
/// notes written on fixes already in the history (imported ones, a day's digest).
extension OutboxStore {
    package struct ImportResult: Sendable, Equatable {
        /// Fixes added to the history.
        package var added = 0
        /// Fixes whose time the history already had (to the millisecond): left as they were.
        package var alreadyThere = 0
        /// For each fix given, in order, the history row holding its time (new or already there).
        package var fixIds: [Int64] = []
    }

    /// Adds `fixes` to the history, skipping every one whose time (to the millisecond it is kept
    /// at) is already there: all in one transaction, so an import is whole or not at all.
    package func importFixes(_ fixes: [Fix], now: Date = Date()) async throws(OutboxError) -> ImportResult {
        try await write { db in
            var result = ImportResult()
            let existing = try db.cachedStatement(sql: "SELECT id FROM fix WHERE timestamp = ? ORDER BY id LIMIT 1")
            for fix in fixes {
                var record = FixRecord(fix, createdAt: now)
                // Looked up as the text the insert below stores (the record's `StoredDates`).
                if let id = try Int64.fetchOne(existing, arguments: [StorageTime.text(record.timestamp)]) {
                    result.alreadyThere += 1
                    result.fixIds.append(id)
                    continue
                }
                try record.insert(db)
                result.added += 1
                result.fixIds.append(record.id!)
            }
            return result
        }
    }

    /// Fixes with `start <= timestamp < end`, oldest first; under `deviceScope`, that device's only.
    package func history(from start: Date, to end: Date) async throws(OutboxError) -> [FixRecord] {
        let device = Self.deviceScope
        return try await readSkipping { db, unreadable in
            var request = FixRecord.filter(Column("timestamp") >= start && Column("timestamp") < end)
            if let device { request = request.filter(Column("device") == device) }
            return try Self.readableRecords(request.order(Column("timestamp"), Column("id")), db, unreadable: &unreadable)
        }
    }

    /// Stores a note on a fix already in the history (an imported one), with its resources.
    @discardableResult
    package func enqueue(note draft: NoteDraft, onFix fixId: Int64, now: Date = Date()) async throws(OutboxError) -> OutboxNote {
        try await write { db in
            guard let fix = try FixRecord.fetchOne(db, id: fixId) else {
                throw OutboxError.storedFixInvalid(id: fixId, detail: "no such fix in the history")
            }
            return try Self.insert(draft, on: fix, db, now: now)
        }
    }

    /// Whether some note was written on this fix.
    package func hasNote(onFix fixId: Int64) async throws(OutboxError) -> Bool {
        try await read { db in try OutboxNote.filter(OutboxNote.Columns.fixId == fixId).fetchCount(db) > 0 }
    }
}

extension OutboxStore {
    /// The fix of the history with this id; nil when there is none.
    package func fixRecord(id: Int64) async throws(OutboxError) -> FixRecord? {
        try await read { db in try FixRecord.fetchOne(db, id: id) }
    }
}
