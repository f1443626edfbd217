import Foundation
import GRDB
import Support
import Capture

extension OutboxSchema {
    /// How far `enlog serve`'s diary has gone through the points phones sent: every received
    /// point (a device's, no import run) up to the fix row `decidedThrough` has been decided on
    /// (a note or not, its day's digest). The receiver answers a phone once its points are
    /// committed and only tells the diary that there are new ones; the diary reads them from here
    /// in pages, so that a diary behind a fast phone costs rows on disk, not points in memory, and
    /// points committed just before a crash are decided after the restart.
    ///
    /// One row. It starts at the newest fix: an outbox from before has nothing left to decide.
    static let phoneDiaryMigration = OutboxMigration("phone-diary-v1") { db in
        try db.execute(sql: """
            CREATE TABLE phone_diary (id INTEGER PRIMARY KEY CHECK (id = 1), decidedThrough INTEGER NOT NULL)
            """)
        try db.execute(sql: "INSERT INTO phone_diary (id, decidedThrough) SELECT 1, COALESCE(MAX(id), 0) FROM fix")
    }
}

extension OutboxStore {
    /// Received points after the diary's mark, in row order, at most a page of them.
    package struct PhoneDiaryPage: Sendable {
        package struct Point: Sendable {
            package var device: String
            package var fix: Fix
            package var id: Int64
        }

        package var points: [Point]
        /// The last row this page accounts for (the diary's mark once it has decided on
        /// `points`): the last point's when the page is full, else the newest row of the history
        /// when it was read, so the rows an import added are passed over once, not scanned again.
        package var through: Int64
        /// Whether received points after `through` may wait: read the next page.
        package var full: Bool
    }

    /// The row up to which the diary has decided (`phone_diary.decidedThrough`).
    package func phoneDiaryMark() async throws(OutboxError) -> Int64 {
        try await read { db in
            try Int64.fetchOne(db, sql: "SELECT decidedThrough FROM phone_diary WHERE id = 1") ?? 0
        }
    }

    /// Keeps the diary's mark. Not in the transaction of the notes it decided: deciding a point
    /// again after a crash writes nothing twice (a note's point is the device's anchor, and the
    /// points up to it are older than it; a digest is written once per device and day).
    package func setPhoneDiaryMark(_ row: Int64) async throws(OutboxError) {
        try await write { db in
            try db.execute(sql: "UPDATE phone_diary SET decidedThrough = ? WHERE id = 1", arguments: [row])
        }
    }

    /// Up to `limit` points phones sent after row `mark`, oldest row first; a stored value enlog
    /// cannot read is left out with its warning (`readSkipping`).
    package func phoneDiaryPage(after mark: Int64, limit: Int) async throws(OutboxError) -> PhoneDiaryPage {
        try await readSkipping { db, unreadable in
            // The newest row, in the same snapshot as the page: a rowid range the scan stays in.
            let newest = try Int64.fetchOne(db, sql: "SELECT MAX(id) FROM fix") ?? mark
            let records = try Self.readableRecords(
                FixRecord.filter(Column("id") > mark && Column("id") <= newest && Column("device") != nil && Column("importRun") == nil)
                    .order(Column("id")), db, limit: limit, unreadable: &unreadable)
            var points: [PhoneDiaryPage.Point] = []
            points.reserveCapacity(records.count)
            for record in records {
                guard let id = record.id, let device = record.device else { continue }
                do throws(OutboxError) {
                    points.append(PhoneDiaryPage.Point(device: device, fix: try record.fix(), id: id))
                } catch {
                    var detail = error.reason
                    if case .storedFixInvalid(_, let why) = error { detail = why }
                    unreadable.append(UnreadableRow(table: FixRecord.databaseTableName, id: id, detail: detail))
                }
            }
            let full = records.count >= limit
            return PhoneDiaryPage(points: points, through: full ? (records.last?.id ?? newest) : max(newest, mark), full: full)
        }
    }
}
