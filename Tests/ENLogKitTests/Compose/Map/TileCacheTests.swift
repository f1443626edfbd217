import Foundation
import GRDB
import Synchronization
import XCTest
@testable import Support
@testable import Compose

final class TileCacheTests: XCTestCase {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func tile(_ size: Int, expires seconds: TimeInterval = 3600) -> CachedTile {
        CachedTile(body: [UInt8](repeating: 7, count: size), etag: "\"e\"", lastModified: nil,
                   expiresAt: now.addingTimeInterval(seconds))
    }

    func testDiskCacheEvictsTheLeastRecentlyUsedPastItsBound() throws {
        let directory = try TemporaryDirectory()
        let warnings = WarningLog()
        let cache = TileDiskCache(path: directory.path("cache/tiles.sqlite"), maxBytes: 3000, warn: warnings.sink)
        cache.store("a", tile(1000), now: now)
        cache.store("b", tile(1000), now: now.addingTimeInterval(100))
        cache.store("c", tile(1000), now: now.addingTimeInterval(200))
        _ = cache.lookup(["a"], now: now.addingTimeInterval(300))          // a is now the most recently used
        cache.store("d", tile(1000), now: now.addingTimeInterval(400))     // 4000 > 3000: b goes
        let found = cache.lookup(["a", "b", "c", "d"], now: now.addingTimeInterval(500))
        XCTAssertEqual(Set(found.keys), ["a", "c", "d"])
        XCTAssertEqual(cache.statistics()?.bytes, 3000)
        XCTAssertEqual(found["a"], tile(1000))
        XCTAssertEqual(warnings.all, [])
    }

    func testAReadWithinAMinuteOfTheLastUseWritesNothing() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("tiles.sqlite")
        let cache = TileDiskCache(path: path, maxBytes: 1 << 20, warn: { _ in })
        cache.store("a", tile(10), now: now)
        cache.storeRenderedMap("m", [1, 2, 3], now: now)
        func lastUse() throws -> [Double] {
            try DatabaseQueue(path: path).read { db in
                try Double.fetchAll(db, sql: "SELECT lastUsedAt FROM tile UNION ALL SELECT lastUsedAt FROM map")
            }
        }
        XCTAssertNotNil(cache.lookup(["a"], now: now.addingTimeInterval(30))["a"])
        XCTAssertNotNil(cache.renderedMap("m", now: now.addingTimeInterval(30)))
        XCTAssertEqual(try lastUse(), [now.timeIntervalSince1970, now.timeIntervalSince1970])
        XCTAssertNotNil(cache.lookup(["a"], now: now.addingTimeInterval(90))["a"])
        XCTAssertNotNil(cache.renderedMap("m", now: now.addingTimeInterval(90)))
        XCTAssertEqual(try lastUse(), [now.timeIntervalSince1970 + 90, now.timeIntervalSince1970 + 90])
    }

    /// The byte total the bound is checked against, as the triggers keep it, beside the sum
    /// counted from the tables themselves.
    func usage(_ path: String) throws -> (kept: Int, counted: Int) {
        try DatabaseQueue(path: path).read { db in
            let kept = try Int.fetchOne(db, sql: "SELECT bytes FROM usage") ?? -1
            let counted = try Int.fetchOne(db, sql: """
                SELECT (SELECT total(size) FROM tile) + (SELECT total(size) FROM map) + (SELECT total(size) FROM strip)
                """) ?? -1
            return (kept, counted)
        }
    }

    func testByteTotalFollowsEveryStoreReplacementAndEviction() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("tiles.sqlite")
        let cache = TileDiskCache(path: path, maxBytes: 10_000, warn: { _ in })
        cache.store("a", tile(1000), now: now)
        cache.store("a", tile(2500), now: now.addingTimeInterval(1))              // replaced: 2500, not 3500
        cache.storeRenderedMap("m", [UInt8](repeating: 1, count: 3000), now: now.addingTimeInterval(2))
        cache.storeRenderedMap("m", [UInt8](repeating: 1, count: 2000), now: now.addingTimeInterval(3))
        let strip = AttributionStrip(image: DecodedImage(width: 10, height: 10, hasAlpha: true,
                                                         pixels: [UInt8](repeating: 0, count: 400)))
        cache.storeAttributionStrip("s", strip, now: now.addingTimeInterval(4))
        cache.refresh("a", tile(2500, expires: 7200), now: now.addingTimeInterval(5))
        var (kept, counted) = try usage(path)
        XCTAssertEqual(kept, 2500 + 2000 + 400)
        XCTAssertEqual(kept, counted)

        // Past the bound: the map (used at +3) goes before the strip (+4) and the tile (+5).
        cache.store("b", tile(6000), now: now.addingTimeInterval(6))
        (kept, counted) = try usage(path)
        XCTAssertEqual(kept, 2500 + 400 + 6000)
        XCTAssertEqual(kept, counted)
        XCTAssertNil(cache.renderedMap("m", now: now.addingTimeInterval(7)))
        XCTAssertNotNil(cache.attributionStrip("s", now: now.addingTimeInterval(7)))
        XCTAssertEqual(Set(cache.lookup(["a", "b"], now: now.addingTimeInterval(8)).keys), ["a", "b"])
    }

    /// A cache written by the enlog before the byte total (stop 16's schema, user_version 0)
    /// is adopted as it is: counted once, then bounded like a new one.
    func testCacheOfAnEarlierVersionIsCountedOnceAndKeptBounded() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("tiles.sqlite")
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: """
                CREATE TABLE tile (key TEXT PRIMARY KEY NOT NULL, body BLOB NOT NULL, size INTEGER NOT NULL,
                    etag TEXT, lastModified TEXT, expiresAt DOUBLE NOT NULL, lastUsedAt DOUBLE NOT NULL);
                CREATE INDEX tile_on_lastUsedAt ON tile(lastUsedAt);
                CREATE TABLE map (key TEXT PRIMARY KEY NOT NULL, png BLOB NOT NULL, size INTEGER NOT NULL,
                    lastUsedAt DOUBLE NOT NULL);
                CREATE TABLE strip (key TEXT PRIMARY KEY NOT NULL, width INTEGER NOT NULL, height INTEGER NOT NULL,
                    hasAlpha BOOLEAN NOT NULL, pixels BLOB NOT NULL, size INTEGER NOT NULL, lastUsedAt DOUBLE NOT NULL);
                INSERT INTO tile VALUES ('old', zeroblob(3000), 3000, NULL, NULL, 0, 10);
                INSERT INTO map VALUES ('older', zeroblob(2000), 2000, 5);
                """)
        }
        let cache = TileDiskCache(path: path, maxBytes: 6000, warn: { _ in })
        XCTAssertEqual(cache.lookup(["old"], now: now)["old"]?.body.count, 3000)
        var (kept, counted) = try usage(path)
        XCTAssertEqual(kept, 5000)
        XCTAssertEqual(kept, counted)
        cache.store("new", tile(2000), now: now.addingTimeInterval(1))          // 7000 > 6000: the old map goes
        (kept, counted) = try usage(path)
        XCTAssertEqual(kept, 5000)
        XCTAssertEqual(kept, counted)
        XCTAssertNil(cache.renderedMap("older", now: now.addingTimeInterval(2)))
        let schema = try DatabaseQueue(path: path).read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        }
        XCTAssertEqual(schema, ["map_by_use", "strip_by_use", "tile_by_use"])
        // A second process opening it counts nothing again.
        TileDiskCache(path: path, maxBytes: 6000, warn: { _ in }).store("later", tile(100), now: now.addingTimeInterval(3))
        (kept, counted) = try usage(path)
        XCTAssertEqual(kept, counted)
    }

    func testDiskCacheIsSharedThroughItsFile() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("tiles.sqlite")
        TileDiskCache(path: path, maxBytes: 1 << 20, warn: { _ in }).store("k", tile(10), now: now)
        XCTAssertEqual(TileDiskCache(path: path, maxBytes: 1 << 20, warn: { _ in }).lookup(["k"], now: now)["k"], tile(10))
    }

    func testUnwritableCacheTurnsItselfOffWithOneWarning() throws {
        let directory = try TemporaryDirectory()
        // A cache directory that cannot be made, even by root: a file stands where it should be.
        let blocker = try directory.file("cache", contents: "a file, not a directory")
        let warnings = WarningLog()
        let cache = TileDiskCache(path: blocker.path + "/enlog/tiles.sqlite", maxBytes: 1 << 20, warn: warnings.sink)
        cache.store("a", tile(10), now: now)
        XCTAssertEqual(cache.lookup(["a"], now: now), [:])
        cache.store("b", tile(10), now: now)
        XCTAssertTrue(cache.isOff)
        XCTAssertEqual(warnings.all.count, 1, "\(warnings.all)")
        XCTAssertTrue(warnings.all[0].contains("tile cache off"))
    }

    func testCorruptCacheFileTurnsItselfOffWithOneWarning() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.file("tiles.sqlite", contents: String(repeating: "not a database ", count: 100)).path
        let warnings = WarningLog()
        let cache = TileDiskCache(path: path, maxBytes: 1 << 20, warn: warnings.sink)
        cache.store("a", tile(10), now: now)
        XCTAssertEqual(cache.lookup(["a"], now: now), [:])
        XCTAssertEqual(warnings.all.count, 1, "\(warnings.all)")
    }

    func testMemoryCacheKeepsTheMostRecentlyUsed() {
        let memory = TileMemoryCache(capacity: 2)
        memory.put("a", tile(1))
        memory.put("b", tile(1))
        _ = memory.get("a")
        memory.put("c", tile(1))
        XCTAssertNotNil(memory.get("a"))
        XCTAssertNil(memory.get("b"))
        XCTAssertNotNil(memory.get("c"))
        XCTAssertEqual(memory.count, 2)
    }

    func testFreshnessFromCacheControlExpiresAndDefaults() {
        XCTAssertEqual(TileFetcher.expiry(["cache-control": "public, max-age=600"], now: now), now.addingTimeInterval(600))
        XCTAssertEqual(TileFetcher.expiry(["cache-control": "no-cache", "expires": "Tue, 03 Nov 2026 10:00:00 GMT"], now: now), now)
        // Expires is read against the server's Date, so a wrong local clock does not matter.
        XCTAssertEqual(TileFetcher.expiry(["expires": "Mon, 02 Nov 2026 11:00:00 GMT", "date": "Mon, 02 Nov 2026 10:00:00 GMT"], now: now),
                       now.addingTimeInterval(3600))
        XCTAssertEqual(TileFetcher.expiry(["expires": "0"], now: now), now, "an invalid Expires means already expired")
        XCTAssertEqual(TileFetcher.expiry([:], now: now), now.addingTimeInterval(TileFetcher.defaultFreshness))
        XCTAssertTrue(TileFetcher.forbidsStoring(["cache-control": "private, no-store"]))
    }

    func testCacheKeyHidesTheURL() {
        let key = TileFetcher.key("https://maps.example.com/static?key=SECRET")
        XCTAssertEqual(key.count, 64)
        XCTAssertFalse(key.contains("SECRET"))
    }

    func testLimiterNeverLetsMoreThanItsLimitIn() async throws {
        let limiter = DownloadLimiter(limit: 3)
        let inside = Holders()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    try await limiter.withPermit {
                        let count = inside.state.withLock { $0.now += 1; $0.peak = max($0.peak, $0.now); return $0.now }
                        XCTAssertLessThanOrEqual(count, 3)
                        // The first holders wait for each other, so the limit is reached, not just respected;
                        // the bound on the wait only keeps a broken limiter's test from hanging.
                        var spins = 0
                        while inside.state.withLock({ $0.peak }) < 3 && spins < 1_000_000 { spins += 1; await Task.yield() }
                        inside.state.withLock { $0.now -= 1 }
                    }
                }
            }
            try await group.waitForAll()
        }
        XCTAssertEqual(limiter.mostHoldersSeen, 3)
    }

    func testCancelledWaiterLeavesTheQueueAndThePlaceStaysUsable() async throws {
        let limiter = DownloadLimiter(limit: 1)
        let (holding, release) = AsyncStream<Void>.makeStream()
        let holder = Task { try await limiter.withPermit { for await _ in holding { break } } }
        while limiter.mostHoldersSeen < 1 { await Task.yield() }
        let waiter = Task { try await limiter.withPermit { 1 } }
        waiter.cancel()
        do {
            _ = try await waiter.value
            XCTFail("a cancelled waiter must not get the place")
        } catch {
            XCTAssertTrue(error is CancellationError)
        }
        release.yield()
        try await holder.value
        let after = try await limiter.withPermit { 2 }
        XCTAssertEqual(after, 2)
    }
}

/// Holders of a limiter's places, now and at most, as the limited code itself counts them.
private final class Holders: Sendable {
    let state = Mutex((now: 0, peak: 0))
}
