@testable import Compose
import XCTest

final class NominatimReplyTests: XCTestCase {
    func testParsesAllComponentsOfAJSONv2Reply() throws {
        let address = try GeocodingFixtures.address("fr_paris_rivoli.json")
        XCTAssertEqual(address.displayName, "Rue de Rivoli, Quartier Saint-Germain-l'Auxerrois, Paris 1er Arrondissement, Paris, Île-de-France, France métropolitaine, 75001, France")
        XCTAssertEqual(address.road, "Rue de Rivoli")
        XCTAssertEqual(address.suburb, "Paris 1er Arrondissement")
        XCTAssertEqual(address.city, "Paris")
        XCTAssertEqual(address.state, "Île-de-France")
        XCTAssertEqual(address.postcode, "75001")
        XCTAssertEqual(address.country, "France")
        XCTAssertEqual(address.countryCode, "fr")
        XCTAssertEqual(address.components["ISO3166-2-lvl4"], "FR-IDF")
        XCTAssertNil(address.houseNumber)
    }

    func testEveryFixtureWithCoordinatesParsesToSomething() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: GeocodingFixtures.nominatim.path)
            .filter { $0.hasSuffix(".json") && !$0.hasPrefix("sea") }
        XCTAssertGreaterThanOrEqual(names.count, 6)
        for name in names {
            let address = try GeocodingFixtures.address(name)
            XCTAssertFalse(address.formatted.isEmpty, name)
            XCTAssertNotNil(address.displayName, name)
            XCTAssertNotNil(address.countryCode, name)
        }
    }

    func testUnableToGeocodeIsNoAddress() {
        XCTAssertThrowsError(try NominatimReply.parse(Array(#"{"error":"Unable to geocode"}"#.utf8))) {
            XCTAssertEqual($0 as? GeocodingError, .noAddress)
        }
    }

    func testReplyWithNothingToShowIsNoAddress() {
        XCTAssertThrowsError(try NominatimReply.parse(Array(#"{"place_id":1,"address":{},"display_name":""}"#.utf8))) {
            XCTAssertEqual($0 as? GeocodingError, .noAddress)
        }
    }

    func testDisplayNameOnlyReply() throws {
        let address = try NominatimReply.parse(Array(#"{"place_id":1,"lat":"1","lon":"2","display_name":"Somewhere"}"#.utf8))
        XCTAssertEqual(address.formatted, "Somewhere")
    }

    func testMalformedReplies() {
        let cases: [(String, String)] = [
            ("", "empty body"),
            ("<html>oops</html>", "not JSON"),
            ("[1,2]", "not a JSON object"),
            (#"{"address":"Paris","display_name":"x"}"#, "\"address\" is not an object"),
            (#"{"place_id":1}"#, "no \"address\" nor \"display_name\""),
            (#"{"error":{"code":400,"message":"Parameter 'lat' missing."}}"#, "error Parameter 'lat' missing."),
        ]
        for (body, detail) in cases {
            XCTAssertThrowsError(try NominatimReply.parse(Array(body.utf8)), body) {
                XCTAssertEqual($0 as? GeocodingError, .malformedReply(detail), body)
            }
        }
    }

    func testNonStringAddressValuesAreIgnored() throws {
        let address = try NominatimReply.parse(Array(#"{"address":{"city":"Oslo","house_number":12,"state":null},"display_name":"Oslo"}"#.utf8))
        XCTAssertEqual(address.formatted, "Oslo")
        XCTAssertNil(address.houseNumber)
    }

    func testErrorsHaveOneLineReasonsAndSuggestions() {
        let errors: [GeocodingError] = [.unreachable("could not connect to x"), .timedOut(seconds: 3), .httpStatus(500),
                                        .httpStatus(429), .malformedReply("not JSON"), .noAddress,
                                        .rateLimited(waitSeconds: 0.75), .cache("disk I/O error")]
        for error in errors {
            XCTAssertFalse(error.reason.contains("\n"))
            XCTAssertFalse(error.reason.isEmpty)
            XCTAssertNotNil(error.recoverySuggestion)
        }
        XCTAssertEqual(GeocodingError.timedOut(seconds: 3).reason, "the geocoding service did not answer within 3 s")
        XCTAssertEqual(GeocodingError.rateLimited(waitSeconds: 0.75).reason,
                       "geocoding is rate-limited to one request per second; the next slot is 0.8 s away")
        XCTAssertTrue(GeocodingError.timedOut(seconds: 3).recoverySuggestion!
            .hasPrefix("the note is logged with coordinates only; the address is filled in before upload"))
        XCTAssertTrue(GeocodingError.noAddress.isPermanent)
        XCTAssertFalse(GeocodingError.httpStatus(500).isPermanent)
    }
}
