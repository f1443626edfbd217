@testable import Configuration
@testable import Compose
@testable import Outbox
@testable import Diary
import GRDB
import XCTest

final class GeocodeCacheTests: XCTestCase {
    func testMigrationCreatesBothTablesUnderItsName() throws {
        let database = try TemporaryDatabase()
        let pool = try database.openPool()
        try pool.read { db in
            XCTAssertTrue(try db.tableExists("geocodeCache"))
            XCTAssertTrue(try db.tableExists("geocodeRateLimit"))
            XCTAssertEqual(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM geocodeRateLimit"), 1)
        }
        let step = OutboxSchema.geocodeCacheMigration
        XCTAssertEqual(step.identifier, "v2-geocode-cache")
        XCTAssertTrue(try pool.read { try OutboxSchema.migrator.appliedIdentifiers($0) }.contains(step.identifier))
    }

    func testRoundingToPrecision() throws {
        let cache = GeocodeCache(outbox: try TemporaryDatabase().openOutbox(), precision: 4)
        let key = cache.key(latitude: 35.681_249, longitude: 139.766_45, language: " EN ")
        XCTAssertEqual(key.latitudeKey, 356_812)
        XCTAssertEqual(key.longitudeKey, 1_397_665)   // .5 rounds away from zero
        XCTAssertEqual(key.language, "en")
        XCTAssertEqual(key.latitudeText, "35.6812")
        XCTAssertEqual(key.longitudeText, "139.7665")
        // ~5 m apart: same cell; ~15 m apart: another cell.
        XCTAssertEqual(cache.key(latitude: 35.68122, longitude: 139.76648, language: "en"), key)
        XCTAssertNotEqual(cache.key(latitude: 35.68137, longitude: 139.76648, language: "en"), key)
        XCTAssertNotEqual(cache.key(latitude: 35.68122, longitude: 139.76648, language: "ja"), key)
        let south = cache.key(latitude: -33.868_85, longitude: -151.209_3, language: "")
        XCTAssertEqual(south.latitudeText, "-33.8689")
        XCTAssertEqual(south.longitudeText, "-151.2093")
        let coarse = GeocodeCache(outbox: try TemporaryDatabase().openOutbox(), precision: 2)
        XCTAssertEqual(coarse.key(latitude: 48.8606, longitude: 2.3376, language: "fr").latitudeText, "48.86")
    }

    func testHitMissAndTimeToLive() async throws {
        let database = try TemporaryDatabase()
        let cache = GeocodeCache(outbox: try database.openOutbox(), timeToLive: 3600)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let key = cache.key(latitude: 48.8606, longitude: 2.3389, language: "fr")
        let missing = try await cache.entry(for: key, now: start)
        XCTAssertNil(missing)
        let reply = try GeocodingFixtures.bytes("fr_paris_rivoli.json")
        try await cache.store(reply, for: key, fetchedAt: start)

        let freshEntry = try await cache.entry(for: key, now: start.addingTimeInterval(3599))
        let fresh = try XCTUnwrap(freshEntry)
        XCTAssertEqual(fresh.reply, reply)
        XCTAssertFalse(fresh.isStale)
        XCTAssertEqual(fresh.fetchedAt.timeIntervalSince1970, start.timeIntervalSince1970, accuracy: 0.001)
        let stale = try await cache.entry(for: key, now: start.addingTimeInterval(3601))
        XCTAssertEqual(stale?.isStale, true)
        let otherLanguage = try await cache.entry(for: cache.key(latitude: 48.8606, longitude: 2.3389, language: "en"), now: start)
        XCTAssertNil(otherLanguage)

        let removedEarly = try await cache.removeExpired(now: start.addingTimeInterval(1000))
        XCTAssertEqual(removedEarly, 0)
        let removed = try await cache.removeExpired(now: start.addingTimeInterval(3601))
        XCTAssertEqual(removed, 1)
        let gone = try await cache.entry(for: key, now: start)
        XCTAssertNil(gone)
    }

    func testCachingGeocoderAnswersFromTheCacheWithoutARequest() async throws {
        let database = try TemporaryDatabase()
        let clock = TestClock()
        let cache = GeocodeCache(outbox: try database.openOutbox(), timeToLive: 3600)
        // Nothing listens at this address: any request would fail with `unreachable`.
        let geocoder = NominatimGeocoder(
            configuration: NominatimConfiguration(baseURL: "http://127.0.0.1:9", language: "en", contact: "test@example.org"),
            store: cache, now: { clock.now })
        let caching = CachingGeocoder(cache: cache, geocoder: geocoder, now: { clock.now })

        await assertThrows(GeocodingError.unreachable("could not connect to 127.0.0.1:9")) {
            try await caching.address(latitude: 35.68119, longitude: 139.76641)
        }
        let nothingCached = try await caching.cachedAddress(latitude: 35.68119, longitude: 139.76641)
        XCTAssertNil(nothingCached)

        let key = cache.key(latitude: 35.68119, longitude: 139.76641, language: "en")
        try await cache.store(GeocodingFixtures.bytes("jp_tokyo_marunouchi.json"), for: key, fetchedAt: clock.now)
        let hit = try await caching.address(latitude: 35.68121, longitude: 139.76638)   // same cell
        XCTAssertEqual(hit.formatted, "Tokyo, Chiyoda, Marunouchi 1-chome")
        let cached = try await caching.cachedAddress(latitude: 35.68119, longitude: 139.76641)
        XCTAssertEqual(cached?.formatted, "Tokyo, Chiyoda, Marunouchi 1-chome")

        // Stale, and the service unreachable: the stale answer is better than none.
        clock.advance(7200)
        let stale = try await caching.address(latitude: 35.68119, longitude: 139.76641)
        XCTAssertEqual(stale.formatted, "Tokyo, Chiyoda, Marunouchi 1-chome")
    }

    func testCachedNoAddressIsAnsweredAsNoAddress() async throws {
        let database = try TemporaryDatabase()
        let cache = GeocodeCache(outbox: try database.openOutbox())
        let geocoder = NominatimGeocoder(
            configuration: NominatimConfiguration(baseURL: "http://127.0.0.1:9", language: "", contact: "x"),
            store: cache)
        let caching = CachingGeocoder(cache: cache, geocoder: geocoder)
        try await cache.store(GeocodingFixtures.bytes("sea_unable_to_geocode.json"),
                        for: cache.key(latitude: 0, longitude: 0, language: ""))
        await assertThrows(GeocodingError.noAddress) { try await caching.address(latitude: 0.00001, longitude: -0.00001) }
    }

    func testSlotReservationSpacesRequestsAndFailsFastBeyondTheBudget() async throws {
        let database = try TemporaryDatabase()
        let first = GeocodeCache(outbox: try database.openOutbox())
        let second = GeocodeCache(outbox: try database.openOutbox())   // as another process would
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let slot1 = try await first.reserveRequestSlot(minimumInterval: 1, latestStart: now.addingTimeInterval(3), clock: { now })
        XCTAssertEqual(slot1, now)
        let slot2 = try await second.reserveRequestSlot(minimumInterval: 1, latestStart: now.addingTimeInterval(3),
                                                  clock: { now.addingTimeInterval(0.25) })
        XCTAssertEqual(slot2.timeIntervalSince(now), 1, accuracy: 0.0001)
        await assertThrows(GeocodingError.rateLimited(waitSeconds: 1.5)) {
            try await first.reserveRequestSlot(minimumInterval: 1, latestStart: now.addingTimeInterval(1.5),
                                               clock: { now.addingTimeInterval(0.5) })
        }
        // The refused call reserved nothing: the next slot is still 2 s.
        let slot3 = try await first.reserveRequestSlot(minimumInterval: 1, latestStart: now.addingTimeInterval(5),
                                                 clock: { now.addingTimeInterval(0.5) })
        XCTAssertEqual(slot3.timeIntervalSince(now), 2, accuracy: 0.0001)
    }

    /// Issue 9: the third and later processes queued at once used to see a slot "more than one
    /// interval ahead", take it for a clock set back, and go at once. Any number of them queue.
    func testEveryProcessQueuedAtOnceGetsItsOwnSlot() async throws {
        let database = try TemporaryDatabase()
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        var slots: [TimeInterval] = []
        for index in 0..<12 {
            let process = GeocodeCache(outbox: try database.openOutbox())
            let slot = try await process.reserveRequestSlot(minimumInterval: 1, latestStart: now.addingTimeInterval(60),
                                                      clock: { now.addingTimeInterval(Double(index) * 0.01) })
            slots.append(slot.timeIntervalSince(now))
        }
        XCTAssertEqual(slots, (0..<12).map(Double.init))
    }

    /// A clock set back an hour neither blocks requests for an hour nor lets one go early: the
    /// slot still pending keeps its distance, carried over to the new clock.
    func testAClockSetBackKeepsThePendingSlotsDistance() async throws {
        let database = try TemporaryDatabase()
        let cache = GeocodeCache(outbox: try database.openOutbox())
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        _ = try await cache.reserveRequestSlot(minimumInterval: 1, latestStart: now.addingTimeInterval(10), clock: { now })
        let ahead = try await cache.reserveRequestSlot(minimumInterval: 1, latestStart: now.addingTimeInterval(10), clock: { now })
        XCTAssertEqual(ahead.timeIntervalSince(now), 1, accuracy: 0.0001)
        let back = now.addingTimeInterval(-3600)
        let afterSetBack = try await cache.reserveRequestSlot(minimumInterval: 1, latestStart: back.addingTimeInterval(10), clock: { back })
        XCTAssertEqual(afterSetBack.timeIntervalSince(back), 2, accuracy: 0.0001,
                       "one interval after the slot still pending 1 s ahead, on the new clock")
        // Set back with nothing pending (the last slot long past on the old clock): at once.
        let later = back.addingTimeInterval(100)
        _ = try await cache.reserveRequestSlot(minimumInterval: 1, latestStart: later.addingTimeInterval(10), clock: { later })
        let wayBack = later.addingTimeInterval(-86_400)
        let afterWayBack = try await cache.reserveRequestSlot(minimumInterval: 1, latestStart: wayBack.addingTimeInterval(3),
                                                              clock: { wayBack })
        XCTAssertEqual(afterWayBack, wayBack.addingTimeInterval(1))
    }

    func testRequestSlotArithmetic() {
        typealias Slot = GeocodeCache.RequestSlot
        XCTAssertEqual(Slot(start: 0, reservedAt: 0).next(after: 100, interval: 1), 100)
        XCTAssertEqual(Slot(start: 105, reservedAt: 100).next(after: 100.5, interval: 1), 106, "five queued ahead")
        XCTAssertEqual(Slot(start: 105, reservedAt: 100).next(after: 50, interval: 1), 56, "set back 50 s")
        XCTAssertEqual(Slot(start: 90, reservedAt: 100).next(after: 50, interval: 1), 51, "set back, slot already past")
    }
}

/// Issue 20: a geocoder on this machine (loopback) is not held to OpenStreetMap's one request
/// a second; any other is.
extension GeocodeCacheTests {
    func testOnlyAGeocoderElsewhereIsRateLimited() throws {
        let directory = try TemporaryDirectory()
        let outbox = try OutboxStore(path: directory.path("outbox.sqlite"))
        for (url, spacing) in [("http://127.0.0.1:8080", Duration.zero), ("http://localhost:7070/nominatim", .zero),
                               ("http://[::1]:8080", .zero), ("https://nominatim.openstreetmap.org", .milliseconds(1100)),
                               ("https://nominatim.example.org", .milliseconds(1100))] {
            let config = try Config(path: nil, environment: ["ENLOG_GEOCODING_URL": url, "HOME": directory.url.path])
            let places = CachingGeocoder(config: config, outbox: outbox)
            XCTAssertEqual(places.geocoder.configuration.minimumInterval, spacing, url)
        }
    }
}
