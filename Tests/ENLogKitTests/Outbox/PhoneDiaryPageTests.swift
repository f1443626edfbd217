@testable import Capture
@testable import Outbox
import GRDB
import XCTest

/// What `enlog serve`'s diary reads back: the points phones sent after its mark, a page at a
/// time, in row order; nothing of imports or enlog's own fixes; an outbox from before the mark
/// existed has nothing left to decide.
final class PhoneDiaryPageTests: XCTestCase {
    static let base = Date(timeIntervalSince1970: 1_795_000_000)

    static func points(_ count: Int, from second: Int = 0) throws -> [Fix] {
        try (0..<count).map { index in
            try Fix(latitude: 52 + Double(second + index) / 10_000, longitude: 13.4, horizontalAccuracy: 5,
                    timestamp: base.addingTimeInterval(Double(second + index)), source: .phone)
        }
    }

    func testPagesHoldThePhonesPointsAfterTheMarkInRowOrderAndPassOverTheRest() async throws {
        let directory = try TemporaryDirectory()
        let store = try OutboxStore(path: directory.path("outbox.sqlite"))
        let start = try await store.phoneDiaryMark()
        XCTAssertEqual(start, 0)
        _ = try await store.storePhonePoints(try Self.points(2), device: "a")
        // enlog's own fixes (gpsd's, no device) between the phones' points: not the diary's.
        _ = try await store.importFixes(try Self.points(2, from: 100))
        _ = try await store.storePhonePoints(try Self.points(3, from: 10), device: "b")
        _ = try await store.storePhonePoints(try Self.points(1, from: 20), device: "a")

        let first = try await store.phoneDiaryPage(after: 0, limit: 4)
        XCTAssertEqual(first.points.map(\.device), ["a", "a", "b", "b"])
        XCTAssertEqual(first.points.map { Int($0.fix.timestamp.timeIntervalSince(Self.base)) }, [0, 1, 10, 11])
        XCTAssertEqual(first.points.map(\.fix.latitude), [52, 52.0001, 52.001, 52.0011])
        XCTAssertTrue(first.full)
        XCTAssertEqual(first.through, first.points.last?.id)
        let second = try await store.phoneDiaryPage(after: first.through, limit: 4)
        XCTAssertEqual(second.points.map(\.device), ["b", "a"])
        XCTAssertFalse(second.full)
        let newest = try await store.databaseWriter.read { db in try Int64.fetchOne(db, sql: "SELECT MAX(id) FROM fix") }
        XCTAssertEqual(second.through, newest)

        // Rows after that no phone sent (an import with a device of its own, enlog's fixes): the
        // mark passes over them once, and the next page finds nothing.
        try await store.databaseWriter.write { db in
            try db.execute(sql: "INSERT INTO importRun (id, path, format, state, startedAt) VALUES (1, '/a.json', 'records-json', 'done', '2026-01-01 00:00:00.000')")
            try db.execute(sql: """
                INSERT INTO fix (latitude, longitude, timestamp, source, createdAt, device, importRun)
                VALUES (52.5, 13.4, '2026-11-18 12:00:00.000', 'phone', '2026-01-01 00:00:00.000', 'a', 1)
                """)
        }
        _ = try await store.importFixes(try Self.points(1, from: 200))
        let passed = try await store.phoneDiaryPage(after: second.through, limit: 4)
        XCTAssertEqual(passed.points.count, 0)
        XCTAssertGreaterThan(passed.through, second.through)
        try await store.setPhoneDiaryMark(passed.through)
        let kept = try await store.phoneDiaryMark()
        XCTAssertEqual(kept, passed.through)
        let after = try await store.phoneDiaryPage(after: passed.through, limit: 4)
        XCTAssertEqual(after.points.count, 0)
    }

    /// A point whose stored values enlog cannot read (another program wrote text into a number,
    /// a time that is none, a source enlog does not know, a course out of range) is left out with
    /// the warning the other listings give; the page goes on past it. A time GRDB wrote in another
    /// form is read as GRDB reads it.
    func testUnreadablePointsAreLeftOutAndPassed() async throws {
        let directory = try TemporaryDirectory()
        let store = try OutboxStore(path: directory.path("outbox.sqlite"))
        _ = try await store.storePhonePoints(try Self.points(7), device: "a")
        let damage = [
            "altitude = 'high'", "timestamp = 'yesterday'", "source = 'pigeon'", "course = 400",
            "timestamp = '2026-11-19T11:06:44.500'", "speed = X'00'",
        ]
        try await store.databaseWriter.write { db in
            for (offset, change) in damage.enumerated() {
                try db.execute(sql: "UPDATE fix SET \(change) WHERE id = (SELECT MIN(id) + \(offset + 1) FROM fix)")
            }
        }
        let page = try await store.phoneDiaryPage(after: 0, limit: 10)
        XCTAssertEqual(page.points.map { Int($0.fix.timestamp.timeIntervalSince(Self.base)) }, [0, Int(Date(timeIntervalSince1970: 1_795_086_404.5).timeIntervalSince(Self.base))])
        XCTAssertEqual(page.points.last?.fix.timestamp, Date(timeIntervalSince1970: 1_795_086_404.5))
        XCTAssertFalse(page.full)
        let newest = try await store.databaseWriter.read { db in try Int64.fetchOne(db, sql: "SELECT MAX(id) FROM fix") }
        XCTAssertEqual(page.through, newest, "past the unreadable last row")
    }

    /// An outbox from before the mark: its points were the diary's of that time; the migration
    /// starts the mark at its newest row, so an upgrade decides nothing again.
    func testAnOlderOutboxStartsWithEverythingDecided() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("outbox.sqlite")
        let queue = try DatabaseQueue(path: path)
        try OutboxSchema.migrator.migrate(queue, upTo: OutboxSchema.deviceIndexUniqueMigration.identifier)
        try await queue.write { db in
            for (id, second) in [(1, 0), (2, 1), (7, 2)] {
                try db.execute(sql: """
                    INSERT INTO fix (id, latitude, longitude, timestamp, source, createdAt, device)
                    VALUES (?, 52.5, 13.4, ?, 'phone', '2026-01-01 00:00:00.000', 'a')
                    """, arguments: [id, "2026-11-18 11:06:4\(second).000"])
            }
        }
        try queue.close()
        let store = try OutboxStore(path: path)
        let mark = try await store.phoneDiaryMark()
        XCTAssertEqual(mark, 7)
        let nothing = try await store.phoneDiaryPage(after: mark, limit: 10)
        XCTAssertEqual(nothing.points.count, 0)
        _ = try await store.storePhonePoints(try Self.points(1, from: 50), device: "a")
        let new = try await store.phoneDiaryPage(after: mark, limit: 10)
        XCTAssertEqual(new.points.map(\.id), [8])
    }
}
