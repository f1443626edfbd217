@testable import Capture
@testable import Outbox
import GRDB
import XCTest

/// `OutboxStore.storePhonePoints`, the receiver's one transaction per request: each point stored
/// once per (device, millisecond), with its values and its device as given.
final class PhonePointsStoreTests: XCTestCase {
    func testEachPointOncePerDeviceAndMillisecondWithItsValues() async throws {
        let directory = try TemporaryDirectory()
        let store = try OutboxStore(path: directory.path("outbox.sqlite"))
        let base = Date(timeIntervalSince1970: 1_795_000_000.25)
        func fix(_ second: Double, altitude: Double? = nil) throws -> Fix {
            try Fix(latitude: 52.5 + second / 1000, longitude: 13.4, altitude: altitude, horizontalAccuracy: 5, speed: 1.5,
                    course: nil, timestamp: base.addingTimeInterval(second), source: .phone)
        }
        let now = Date(timeIntervalSince1970: 1_795_100_000)
        // The same millisecond twice in one request: the second is already there.
        let first = try await store.storePhonePoints([try fix(0, altitude: 35), try fix(1), try fix(0)], device: "phöne", now: now)
        XCTAssertEqual(first.added, 2)
        XCTAssertEqual(first.alreadyThere, 1)

        // Sent again with one new point: only that one; another device's same times are its own.
        let again = try await store.storePhonePoints([try fix(0), try fix(1), try fix(2)], device: "phöne", now: now)
        XCTAssertEqual(again.added, 1)
        XCTAssertEqual(again.alreadyThere, 2)
        let other = try await store.storePhonePoints([try fix(0)], device: "phone", now: now)
        XCTAssertEqual(other.added, 1)
        let none = try await store.storePhonePoints([], device: "phone")
        XCTAssertEqual(none.added, 0)

        let rows = try await store.databaseWriter.read { db in
            try Row.fetchAll(db, sql: "SELECT id, latitude, altitude, horizontalAccuracy, speed, course, timestamp, source, createdAt, device FROM fix ORDER BY id")
        }
        XCTAssertEqual(rows.count, 4)
        XCTAssertEqual(rows.map { $0["device"] as String }, ["phöne", "phöne", "phöne", "phone"])
        XCTAssertEqual(rows.map { $0["timestamp"] as String },
                       ["2026-11-18 11:06:40.250", "2026-11-18 11:06:41.250", "2026-11-18 11:06:42.250", "2026-11-18 11:06:40.250"])
        XCTAssertEqual(rows[0]["altitude"] as Double?, 35)
        XCTAssertNil(rows[1]["altitude"] as Double?, "no altitude is NULL")
        XCTAssertNil(rows[0]["course"] as Double?)
        XCTAssertEqual(rows[1]["latitude"] as Double, 52.501)
        XCTAssertEqual(rows[0]["horizontalAccuracy"] as Double, 5)
        XCTAssertEqual(rows[0]["speed"] as Double, 1.5)
        XCTAssertEqual(Set(rows.map { $0["source"] as String }), ["phone"])
        XCTAssertEqual(Set(rows.map { $0["createdAt"] as String }), ["2026-11-19 14:53:20.000"])
    }

    /// Once per (device, millisecond) is the rule of the index itself (`fix_on_device_timestamp`
    /// is unique over the points phones sent), not of a lookup before each insert: a second row of
    /// a device's millisecond outside any import is refused whoever writes it, while an imported
    /// point and enlog's own fixes (no device) may share that millisecond.
    func testTheDeviceIndexRefusesASecondPointOfADevicesMillisecond() async throws {
        let directory = try TemporaryDirectory()
        let store = try OutboxStore(path: directory.path("outbox.sqlite"))
        let time = Date(timeIntervalSince1970: 1_795_000_000.25)
        let stored = try await store.storePhonePoints([try Fix(latitude: 52.5, longitude: 13.4, timestamp: time, source: .phone)], device: "phone")
        XCTAssertEqual(stored.added, 1)
        try await store.databaseWriter.write { db in
            func insert(device: String?, run: Int64?) throws {
                try db.execute(sql: """
                    INSERT INTO fix (latitude, longitude, timestamp, source, createdAt, device, importRun)
                    VALUES (52.6, 13.5, '2026-11-18 11:06:40.250', 'phone', '2026-11-19 00:00:00.000', ?, ?)
                    """, arguments: [device, run])
            }
            XCTAssertThrowsError(try insert(device: "phone", run: nil)) { error in
                XCTAssertEqual((error as? DatabaseError)?.extendedResultCode, .SQLITE_CONSTRAINT_UNIQUE, "\(error)")
            }
            try db.execute(sql: "INSERT INTO importRun (id, path, format, state, startedAt) VALUES (1, '/a.csv', 'csv', 'done', '2026-01-01 00:00:00.000')")
            try insert(device: "phone", run: 1)
            try insert(device: nil, run: nil)
            try insert(device: nil, run: nil)
            try insert(device: "other", run: nil)
        }
        let rows = try await store.databaseWriter.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM fix") }
        XCTAssertEqual(rows, 5)
        // The receiver's reads of a device's points still go through it.
        let plan = try await store.databaseWriter.read { db in
            try Row.fetchAll(db, sql: """
                EXPLAIN QUERY PLAN SELECT timestamp FROM fix WHERE device = 'phone' AND timestamp < '2026-11-19' AND importRun IS NULL
                ORDER BY timestamp DESC LIMIT 1
                """).map { $0["detail"] as String }.joined(separator: "; ")
        }
        XCTAssertTrue(plan.contains("fix_on_device_timestamp"), plan)
    }

    /// An outbox from before the unique index may hold two phone points of one (device,
    /// millisecond): imported twins a note was written on stay outside their import
    /// (fix-identity-v1), beside each other or beside a point the phone sent. It opens all the
    /// same: the first (lowest id) stays, later ones go, and a note on one of them is moved to
    /// the first, which has the same device and time. Other devices, imported points and enlog's
    /// own fixes at that time are left alone.
    func testAnOlderOutboxsTwinsOfADevicesMillisecondKeepTheFirst() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("outbox.sqlite")
        let queue = try DatabaseQueue(path: path)
        try OutboxSchema.migrator.migrate(queue, upTo: OutboxSchema.deviceIndexOwnPointsMigration.identifier)
        let twin = "2026-11-18 11:06:40.250", later = "2026-11-18 11:06:41.250"
        try await queue.write { db in
            try db.execute(sql: "INSERT INTO importRun (id, path, format, state, startedAt) VALUES (1, '/a.csv', 'csv', 'done', '2026-01-01 00:00:00.000')")
            for (id, time, device, run) in [(1, twin, "phone", nil), (2, twin, "phone", nil), (3, twin, "phone", nil), (4, twin, "phone", 1),
                                            (5, twin, "watch", nil), (6, twin, nil, nil), (7, twin, nil, nil), (8, later, "phone", nil)]
                    as [(Int, String, String?, Int?)] {
                try db.execute(sql: """
                    INSERT INTO fix (id, latitude, longitude, timestamp, source, createdAt, device, importRun)
                    VALUES (?, 52.5, 13.4, ?, 'phone', '2026-01-01 00:00:00.000', ?, ?)
                    """, arguments: [id, time, device, run])
            }
            for (uid, fixId) in [("u3", 3), ("u8", 8)] {
                try db.execute(sql: """
                    INSERT INTO note (uid, fixId, title, content, createdAt, updatedAt)
                    VALUES (?, ?, 'a note', '<en-note/>', '2026-01-01 00:00:00.000', '2026-01-01 00:00:00.000')
                    """, arguments: [uid, fixId])
            }
        }
        try queue.close()

        let store = try OutboxStore(path: path)
        try await store.databaseWriter.read { db in
            XCTAssertEqual(try Int64.fetchAll(db, sql: "SELECT id FROM fix ORDER BY id"), [1, 4, 5, 6, 7, 8])
            XCTAssertEqual(try Int64.fetchAll(db, sql: "SELECT fixId FROM note ORDER BY uid"), [1, 8])
            let index = try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'fix_on_device_timestamp'") ?? ""
            XCTAssertTrue(index.hasPrefix("CREATE UNIQUE INDEX"), index)
        }
        let again = try await store.storePhonePoints([try Fix(latitude: 52.5, longitude: 13.4, timestamp: Date(timeIntervalSince1970: 1_795_000_000.25),
                                                              source: .phone)], device: "phone")
        XCTAssertEqual(again.alreadyThere, 1)
    }

    /// A request's points go in fifty to a statement: how many were new comes out right when some
    /// were there already (sent before, or twice in the request, within one statement or across
    /// two), and each new point is stored with its own values.
    func testManyPointsAStatementCountWhatWasNew() async throws {
        let directory = try TemporaryDirectory()
        let store = try OutboxStore(path: directory.path("outbox.sqlite"))
        let base = Date(timeIntervalSince1970: 1_795_000_000)
        func points(_ seconds: [Int]) throws -> [Fix] {
            try seconds.map { try Fix(latitude: 52 + Double($0) / 10_000, longitude: 13.4, timestamp: base.addingTimeInterval(Double($0)), source: .phone) }
        }
        var kept = Set<Int>()
        func check(_ seconds: [Int], _ result: OutboxStore.PhoneStoreResult, file: StaticString = #filePath, line: UInt = #line) async throws {
            let stored = try await store.databaseWriter.read { db in
                try Row.fetchAll(db, sql: "SELECT latitude, timestamp FROM fix").map { ($0["latitude"] as Double, $0["timestamp"] as Date) }
            }
            let new = seconds.filter { kept.insert($0).inserted }
            XCTAssertEqual(result.added, new.count, file: file, line: line)
            XCTAssertEqual(result.added + result.alreadyThere, seconds.count, file: file, line: line)
            XCTAssertEqual(stored.count, kept.count, "each second once", file: file, line: line)
            for (latitude, time) in stored {
                let second = Int(time.timeIntervalSince(base).rounded())
                XCTAssertEqual(latitude, 52 + Double(second) / 10_000, "second \(second)'s own values", file: file, line: line)
            }
        }
        // 121 points: two statements of fifty, then one by one; second 10 twice in the first
        // statement, second 20 again in the second, 55 again among the last.
        let first = Array(0..<10) + [10, 10] + Array(11..<20) + Array(20..<49) + [20] + Array(49..<100) + [55] + Array(100..<118)
        XCTAssertEqual(first.count, 121)
        try await check(first, try await store.storePhonePoints(try points(first), device: "phone"))
        // Sent again with new points between the old (every third), and wholly new statements.
        let second = (0..<150).map { $0 % 3 == 0 ? 1_000 + $0 : $0 } + Array(2_000..<2_100)
        try await check(second, try await store.storePhonePoints(try points(second), device: "phone"))
        // The same again: nothing new.
        let again = try await store.storePhonePoints(try points(second), device: "phone")
        XCTAssertEqual(again.added, 0)
        XCTAssertEqual(again.alreadyThere, second.count)
    }
}
