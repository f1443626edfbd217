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
        XCTAssertEqual(first.addedFixIds.count, 3)
        XCTAssertNil(first.addedFixIds[2])

        // Sent again with one new point: only that one; another device's same times are its own.
        let again = try await store.storePhonePoints([try fix(0), try fix(1), try fix(2)], device: "phöne", now: now)
        XCTAssertEqual(again.added, 1)
        XCTAssertEqual(again.alreadyThere, 2)
        XCTAssertEqual(again.addedFixIds.compactMap { $0 }.count, 1)
        let other = try await store.storePhonePoints([try fix(0)], device: "phone", now: now)
        XCTAssertEqual(other.added, 1)
        let none = try await store.storePhonePoints([], device: "phone")
        XCTAssertEqual(none.added, 0)

        let rows = try await store.databaseWriter.read { db in
            try Row.fetchAll(db, sql: "SELECT id, latitude, altitude, horizontalAccuracy, speed, course, timestamp, source, createdAt, device FROM fix ORDER BY id")
        }
        XCTAssertEqual(rows.count, 4)
        XCTAssertEqual(rows.map { $0["id"] as Int64 }, [first.addedFixIds[0], first.addedFixIds[1], again.addedFixIds[2], other.addedFixIds[0]])
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
}
