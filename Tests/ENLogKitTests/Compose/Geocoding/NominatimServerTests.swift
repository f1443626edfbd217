@testable import Compose
@testable import Outbox
@testable import Diary
import GRDB
import XCTest
@testable import Support

/// Against `Tests/support/nominatim_server.py` on 127.0.0.1 (never any other address).
final class NominatimServerTests: XCTestCase {
    private var servers: [NominatimTestServer] = []
    private var databases: [TemporaryDatabase] = []

    override func tearDown() {
        servers.forEach { $0.stop() }
        servers = []
        databases = []
        super.tearDown()
    }

    private func startServer(_ arguments: [String] = []) throws -> NominatimTestServer {
        let server = try NominatimTestServer(arguments)
        servers.append(server)
        return server
    }

    private func database() throws -> TemporaryDatabase {
        let database = try TemporaryDatabase()
        databases.append(database)
        return database
    }

    private func geocoder(_ server: NominatimTestServer, store: GeocodeCache, language: String = "en",
                          budget: Duration = .seconds(3)) -> NominatimGeocoder {
        NominatimGeocoder(configuration: NominatimConfiguration(
            baseURL: server.baseURL + "/", language: language, contact: "diary@example.org", timeBudget: budget),
            store: store)
    }

    func testRequestCarriesTheDocumentedQueryAndAnIdentifyingUserAgent() async throws {
        let server = try startServer()
        let store = GeocodeCache(outbox: try database().openOutbox())
        let address = try await geocoder(server, store: store, language: "ja,en")
            .address(latitude: 35.68119, longitude: 139.76641)
        XCTAssertEqual(address.formatted, "Tokyo, Chiyoda, Marunouchi 1-chome")

        let requests = try await server.requests()
        XCTAssertEqual(requests.count, 1)
        let query = try XCTUnwrap(requests.first?["query"] as? [String: String])
        XCTAssertEqual(query, ["format": "jsonv2", "lat": "35.68119", "lon": "139.76641", "zoom": "18",
                               "addressdetails": "1", "accept-language": "ja,en"])
        XCTAssertEqual(requests.first?["path"] as? String, "/reverse")
        XCTAssertEqual(requests.first?["user_agent"] as? String, "enlog/\(ENLogVersion.current) (+diary@example.org)")
    }

    func testCachingGeocoderSendsRoundedCoordinatesOnceAndThenAnswersFromTheCache() async throws {
        let server = try startServer()
        let caching = CachingGeocoder(outbox: try database().openOutbox(), configuration: NominatimConfiguration(
            baseURL: server.baseURL, language: "fr", contact: "diary@example.org"))
        let first = try await caching.address(latitude: 48.860_612, longitude: 2.338_871)
        XCTAssertEqual(first.formatted, "Île-de-France, Paris, Rue de Rivoli")
        let again = try await caching.address(latitude: 48.860_598, longitude: 2.338_903)   // same 11 m cell
        XCTAssertEqual(again, first)
        let requests = try await server.requests()
        XCTAssertEqual(requests.count, 1, "the second answer must come from the cache")
        let query = try XCTUnwrap(requests.first?["query"] as? [String: String])
        XCTAssertEqual(query["lat"], "48.8606")
        XCTAssertEqual(query["lon"], "2.3389")
        XCTAssertEqual(query["accept-language"], "fr")
    }

    func testSeaIsNoAddressAndIsCached() async throws {
        let server = try startServer()
        let caching = CachingGeocoder(outbox: try database().openOutbox(), configuration: NominatimConfiguration(
            baseURL: server.baseURL, language: "en", contact: "x@example.org"))
        await assertThrows(GeocodingError.noAddress) { try await caching.address(latitude: 0, longitude: 0) }
        await assertThrows(GeocodingError.noAddress) { try await caching.address(latitude: 0, longitude: 0) }
        let count = try await server.requests().count
        XCTAssertEqual(count, 1)
    }

    func testUnableToGeocodeSwitch() async throws {
        let server = try startServer(["--unable"])
        let store = GeocodeCache(outbox: try database().openOutbox())
        await assertThrows(GeocodingError.noAddress) {
            try await self.geocoder(server, store: store).address(latitude: 48.8606, longitude: 2.3389)
        }
    }

    func testHTTP500() async throws {
        let server = try startServer(["--status", "500"])
        let store = GeocodeCache(outbox: try database().openOutbox())
        await assertThrows(GeocodingError.httpStatus(500)) {
            try await self.geocoder(server, store: store).address(latitude: 48.8606, longitude: 2.3389)
        }
    }

    func testGarbageBodyIsMalformedAndNotCached() async throws {
        let server = try startServer(["--garbage"])
        let database = try database()
        let caching = CachingGeocoder(outbox: try database.openOutbox(), configuration: NominatimConfiguration(
            baseURL: server.baseURL, language: "en", contact: "x@example.org"))
        await assertThrows(GeocodingError.malformedReply("not JSON")) {
            try await caching.address(latitude: 48.8606, longitude: 2.3389)
        }
        let stored = try await database.openPool().read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM geocodeCache") }
        XCTAssertEqual(stored, 0)
    }

    func testSlowServerTimesOutWithinTheBudget() async throws {
        let server = try startServer(["--delay", "5"])
        let store = GeocodeCache(outbox: try database().openOutbox())
        let started = ContinuousClock.now
        await assertThrows(GeocodingError.timedOut(seconds: 1)) {
            // The configured budget is 3 s; this call's own is 1 s.
            try await self.geocoder(server, store: store).address(latitude: 48.8606, longitude: 2.3389, timeBudget: .seconds(1))
        }
        let elapsed = ContinuousClock.now - started
        XCTAssertGreaterThanOrEqual(elapsed, .milliseconds(900))
        XCTAssertLessThan(elapsed, hangDeadline, "gave up after \(elapsed)")
    }

    func testNothingListeningIsUnreachable() async throws {
        let store = GeocodeCache(outbox: try database().openOutbox())
        let port = try freeLoopbackPort()
        let geocoder = NominatimGeocoder(configuration: NominatimConfiguration(
            baseURL: "http://127.0.0.1:\(port)", language: "en", contact: "x"), store: store)
        await assertThrows(GeocodingError.unreachable("could not connect to 127.0.0.1:\(port)")) {
            try await geocoder.address(latitude: 1, longitude: 2)
        }
    }

    func testSecondGeocoderOnTheSameDatabaseWaitsForTheNextSlot() async throws {
        let server = try startServer()
        let database = try database()
        // Two pools on one file: two processes as far as SQLite is concerned.
        let first = geocoder(server, store: GeocodeCache(outbox: try database.openOutbox()))
        let second = geocoder(server, store: GeocodeCache(outbox: try database.openOutbox()))
        _ = try await first.address(latitude: 48.8606, longitude: 2.3389)
        let started = ContinuousClock.now
        _ = try await second.address(latitude: 40.0150, longitude: -105.2792)
        let waited = ContinuousClock.now - started
        XCTAssertGreaterThanOrEqual(waited, .milliseconds(1000))   // 1.1 s after the first request started

        let requests = try await server.requests()
        let times = requests.compactMap { $0["time"] as? Double }
        XCTAssertEqual(times.count, 2)
        XCTAssertGreaterThanOrEqual(times[1] - times[0], 0.99)
    }

    func testSecondGeocoderFailsFastWhenItsBudgetIsShorterThanTheWait() async throws {
        let server = try startServer()
        let database = try database()
        let first = geocoder(server, store: GeocodeCache(outbox: try database.openOutbox()))
        let second = geocoder(server, store: GeocodeCache(outbox: try database.openOutbox()), budget: .milliseconds(500))
        _ = try await first.address(latitude: 48.8606, longitude: 2.3389)
        let started = ContinuousClock.now
        var slotWait: TimeInterval = 0
        do {
            _ = try await second.address(latitude: 40.0150, longitude: -105.2792)
            XCTFail("expected rateLimited")
        } catch let error as GeocodingError {
            guard case .rateLimited(let wait) = error else { return XCTFail("expected rateLimited, got \(error)") }
            XCTAssertGreaterThan(wait, 0.5)
            XCTAssertLessThanOrEqual(wait, 1.1)
            slotWait = wait
        }
        // Waiting the slot out and then giving up would take at least the wait it reports.
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(slotWait), "must not wait")
        let count = try await server.requests().count
        XCTAssertEqual(count, 1)
    }

    func testConcurrentRequestsFromThreeInstancesAreSpacedBySeconds() async throws {
        let server = try startServer()
        let database = try database()
        let geocoders = try (0..<3).map { _ in
            geocoder(server, store: GeocodeCache(outbox: try database.openOutbox()), budget: .seconds(4))
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            let points = [(48.8606, 2.3389), (40.0150, -105.2792), (52.5105, 13.3904)]
            for (geocoder, point) in zip(geocoders, points) {
                group.addTask { _ = try await geocoder.address(latitude: point.0, longitude: point.1) }
            }
            try await group.waitForAll()
        }
        let requests = try await server.requests()
        let times = requests.compactMap { $0["time"] as? Double }.sorted()
        XCTAssertEqual(times.count, 3)
        for index in 1..<times.count {
            XCTAssertGreaterThanOrEqual(times[index] - times[index - 1], 0.99)
        }
    }
}
