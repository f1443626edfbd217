@testable import Compose
import XCTest

final class AddressFormattingTests: XCTestCase {
    func testJapanUsesPrefectureWardAndNeighbourhood() throws {
        let address = try GeocodingFixtures.address("jp_tokyo_marunouchi.json")
        XCTAssertEqual(address.formatted, "Tokyo, Chiyoda, Marunouchi 1-chome")
        XCTAssertEqual(address.state, "Tokyo")          // from "province"
        XCTAssertEqual(address.countryCode, "jp")
    }

    func testFranceRoadReplyShowsTheRoadOnce() throws {
        let address = try GeocodingFixtures.address("fr_paris_rivoli.json")
        XCTAssertEqual(address.formatted, "Île-de-France, Paris, Rue de Rivoli")
        XCTAssertNil(address.placeName, "the top-level name of a road reply is the road itself")
    }

    func testUnitedStatesPutsTheHouseNumberFirst() throws {
        let address = try GeocodingFixtures.address("us_boulder_house.json")
        XCTAssertEqual(address.formatted, "Colorado, Boulder, 1777 Broadway")
        XCTAssertEqual(address.streetLine, "1777 Broadway")
    }

    func testNamedPlaceWinsOverStreetAndCityEqualToStateIsNotRepeated() throws {
        let address = try GeocodingFixtures.address("us_nyc_empire_state.json")
        XCTAssertEqual(address.formatted, "New York, Empire State Building")
        XCTAssertEqual(address.placeName, "Empire State Building")
    }

    func testGermanyPutsTheHouseNumberAfterTheStreet() throws {
        let address = try GeocodingFixtures.address("de_berlin_friedrichstrasse.json")
        XCTAssertEqual(address.formatted, "Berlin, Friedrichstraße 43")
    }

    func testRuralPlaceWithOnlyACountyUsesTheCountyAsLocality() throws {
        let address = try GeocodingFixtures.address("us_nevada_rural_county.json")
        XCTAssertEqual(address.formatted, "Nevada, Nye County")
        XCTAssertNil(address.city)
        XCTAssertEqual(address.county, "Nye County")
    }

    func testSeaHasNoAddress() throws {
        XCTAssertThrowsError(try GeocodingFixtures.address("sea_unable_to_geocode.json")) { error in
            XCTAssertEqual(error as? GeocodingError, .noAddress)
        }
    }

    func testMissingPartsAndNullTextNeverShow() {
        let address = Address(nominatimComponents: ["city": "Kyoto", "state": "(null)", "road": "  ",
                                                    "country_code": "JP"])
        XCTAssertEqual(address.formatted, "Kyoto")
        XCTAssertFalse(address.formatted.contains("null"))
        XCTAssertEqual(address.countryCode, "jp")
    }

    func testFallsBackToDisplayNameThenToNothing() {
        let onlyCountry = Address(nominatimComponents: ["country": "Atlantis"], displayName: "Somewhere, Atlantis")
        XCTAssertEqual(onlyCountry.formatted, "Somewhere, Atlantis")
        XCTAssertEqual(Address().formatted, "")
        XCTAssertTrue(Address().isEmpty)
    }

    func testTextIsMadeOneLine() {
        let address = Address(nominatimComponents: ["state": "Île-de-\nFrance", "city": "Pa\tris ", "amenity": "Café\r\n\u{202E}Flore"])
        XCTAssertEqual(address.formatted, "Île-de- France, Pa ris, Café Flore")
    }

    func testSuburbIsUsedWhenThereIsNoNameNorRoad() {
        let address = Address(nominatimComponents: ["suburb": "Shibuya", "city": "Tokyo", "province": "Tokyo"])
        XCTAssertEqual(address.formatted, "Tokyo, Shibuya")
    }

    func testRoadWithoutNumber() {
        let address = Address(nominatimComponents: ["road": "Main Street", "village": "Hope", "state": "Maine",
                                                    "country_code": "us"])
        XCTAssertEqual(address.formatted, "Maine, Hope, Main Street")
    }
}
