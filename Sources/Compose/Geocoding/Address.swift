import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Capture

/// A reverse-geocoded address, as a Nominatim `jsonv2` reply describes it.
///
/// Every text field is one line (control characters and line breaks become spaces, runs of
/// white space collapse) and is `nil` rather than empty when the reply lacks it, so nothing
/// can ever print as "(null)" or leave a dangling separator.
package struct Address: Sendable, Equatable, Codable {
    /// Nominatim's full `display_name` (comma-separated, most specific first).
    package var displayName: String?
    /// The named object at the point: the reply's `name`, else its amenity/building/shop/… entry.
    package var placeName: String?
    package var houseNumber: String?
    package var road: String?
    /// suburb, else quarter, neighbourhood, city_district, borough, city_block.
    package var suburb: String?
    /// city, else town, village, municipality, hamlet.
    package var city: String?
    package var county: String?
    /// state, else province, region, state_district.
    package var state: String?
    package var postcode: String?
    package var country: String?
    /// ISO 3166-1 alpha-2, lowercase ("jp", "fr").
    package var countryCode: String?
    /// Every string entry of the reply's `address` object, cleaned as above.
    package var components: [String: String]

    package init(displayName: String? = nil, placeName: String? = nil, houseNumber: String? = nil,
                road: String? = nil, suburb: String? = nil, city: String? = nil, county: String? = nil,
                state: String? = nil, postcode: String? = nil, country: String? = nil,
                countryCode: String? = nil, components: [String: String] = [:]) {
        func clean(_ text: String?) -> String? { text.flatMap(AddressText.oneLine) }
        self.displayName = clean(displayName)
        self.placeName = clean(placeName)
        self.houseNumber = clean(houseNumber)
        self.road = clean(road)
        self.suburb = clean(suburb)
        self.city = clean(city)
        self.county = clean(county)
        self.state = clean(state)
        self.postcode = clean(postcode)
        self.country = clean(country)
        self.countryCode = clean(countryCode)?.lowercased()
        self.components = components.compactMapValues(AddressText.oneLine)
    }

    /// True when the address carries nothing to show.
    package var isEmpty: Bool { formatted.isEmpty }

    /// One line for titles and notes: *region, city, place* joined with ", ".
    ///
    /// The rule (the ancestor app's `administrativeArea + locality + name`, with separators):
    /// 1. **region**: `state` (state/province/region/state_district);
    /// 2. **city**: `city` (city/town/village/municipality/hamlet), else `county` for rural
    ///    places that belong to no locality;
    /// 3. **place**, the most specific name: `placeName` (name/amenity/building/…), else the
    ///    road with its house number (number first in countries that write it so, see
    ///    `numberFirstCountries`), else `suburb`. When there is a place name and a road as well,
    ///    only the name is used.
    ///
    /// Missing parts are left out, and a part equal to an earlier one (Tokyo, Tokyo; Berlin,
    /// Berlin) is not repeated. When no part is known, the result is `displayName`, and when
    /// that is missing too, the empty string.
    package var formatted: String {
        var parts: [String] = []
        func add(_ part: String?) {
            guard let part, !part.isEmpty else { return }
            if parts.contains(where: { $0.caseInsensitiveCompare(part) == .orderedSame }) { return }
            parts.append(part)
        }
        add(state)
        add(city ?? county)
        add(placeName ?? streetLine ?? suburb)
        if parts.isEmpty { return displayName ?? "" }
        return parts.joined(separator: ", ")
    }

    /// The road with its house number in the local order, or just the road; `nil` without a road.
    package var streetLine: String? {
        guard let road else { return nil }
        guard let houseNumber else { return road }
        if let countryCode, Self.numberFirstCountries.contains(countryCode) {
            return "\(houseNumber) \(road)"
        }
        return "\(road) \(houseNumber)"
    }

    /// Countries whose addresses put the house number before the street name ("10 Rue de
    /// Rivoli", "1600 Pennsylvania Avenue NW"); elsewhere it follows ("Unter den Linden 77").
    package static let numberFirstCountries: Set<String> = [
        "us", "ca", "gb", "ie", "fr", "au", "nz", "za", "lu", "mc", "in", "ph", "sg", "my",
        "il", "sa", "ae", "th", "hk", "pr", "gu", "vi", "as", "mp", "jm", "tt", "bs", "bb",
    ]
}

extension Address {
    /// Address keys that name the object itself, in order of preference, when the reply has no
    /// top-level `name`.
    static let placeKeys = [
        "amenity", "building", "shop", "tourism", "leisure", "historic", "office", "aeroway",
        "railway", "man_made", "club", "craft", "emergency", "military", "natural", "mountain_pass",
    ]
    static let suburbKeys = ["suburb", "quarter", "neighbourhood", "city_district", "borough", "city_block", "allotments"]
    static let cityKeys = ["city", "town", "village", "municipality", "hamlet"]
    static let stateKeys = ["state", "province", "region", "state_district"]

    /// Builds an address from the `address` object of a reply, its `name` and `display_name`.
    package init(nominatimComponents raw: [String: String], name: String? = nil, displayName: String? = nil) {
        let address = raw.compactMapValues(AddressText.oneLine)
        func first(_ keys: [String]) -> String? { keys.lazy.compactMap { address[$0] }.first }
        let topName = name.flatMap(AddressText.oneLine)
        // Nominatim's `name` of a street is the road itself: do not show it twice.
        let place = topName ?? first(Self.placeKeys)
        self.init(displayName: displayName,
                  placeName: place,
                  houseNumber: address["house_number"] ?? address["house_name"],
                  road: address["road"] ?? address["pedestrian"] ?? address["footway"] ?? address["path"],
                  suburb: first(Self.suburbKeys),
                  city: first(Self.cityKeys),
                  county: address["county"],
                  state: first(Self.stateKeys),
                  postcode: address["postcode"],
                  country: address["country"],
                  countryCode: address["country_code"],
                  components: address)
        // A road's reply names the road: show it with its number as the street line instead.
        if let placeName, placeName == road { self.placeName = nil }
    }
}

enum AddressText {
    /// `text` on one line, trimmed, at most `limit` characters; `nil` when nothing is left.
    static func oneLine(_ text: String) -> String? {
        let limit = 300
        var out = String.UnicodeScalarView()
        var pendingSpace = false
        for scalar in text.unicodeScalars {
            let category = scalar.properties.generalCategory
            let isSpace = scalar.properties.isWhitespace || category == .control
                || category == .lineSeparator || category == .paragraphSeparator
            if isSpace {
                pendingSpace = !out.isEmpty
                continue
            }
            // Bidi embeddings, overrides and isolates left open garble the text after them (and can
            // disguise it); every other format character is part of the words: ZWJ holds emoji
            // sequences together, ZWNJ spells Persian, LRM/RLM order mixed scripts.
            if (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value) { continue }
            if pendingSpace { out.append(" "); pendingSpace = false }
            out.append(scalar)
        }
        var line = String(out)
        if line.isEmpty || line == "(null)" { return nil }
        if line.count > limit { line = String(line.prefix(limit)) + "…" }
        return line
    }
}
