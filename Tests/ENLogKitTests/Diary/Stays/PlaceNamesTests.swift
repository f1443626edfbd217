import Foundation
import GRDB
import Testing
@testable import Capture
@testable import Outbox
@testable import Compose

/// Where a place's name comes from, on the real Google exports of `../shared/location-history-real/`:
/// a placeholder label (`TYPE_ALIASED_LOCATION`, `TYPE_SEARCHED_ADDRESS`, `UNKNOWN`…) is no name;
/// the user's name, then the source's real name, then its address, then the geocoder, which may
/// name a place that had only a placeholder; `places` says where each name came from.
@Suite("place names: placeholders are no names")
struct PlaceNamesTests {
    static let real = Fixtures.repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared/location-history-real")
    static let august = "semantic-history--hossain-khan-kgeo-timeline--semantic-2021-august.json"

    /// Every `semanticType` and visit `name` of the real Google exports (Semantic, Android, iOS, Timeline Edits).
    static func labels() throws -> (kinds: Set<String>, names: Set<String>) {
        var kinds: Set<String> = [], names: Set<String> = []
        func walk(_ value: Any, underLocation: Bool) {
            if let object = value as? [String: Any] {
                for (key, inner) in object {
                    if key == "semanticType", let text = inner as? String { kinds.insert(text) }
                    if key == "name", underLocation, let text = inner as? String { names.insert(text) }
                    walk(inner, underLocation: key == "location")
                }
            } else if let array = value as? [Any] {
                for inner in array { walk(inner, underLocation: false) }
            }
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: real.path).filter { name in
            ["semantic-history--", "android-timeline--", "ios-location-history--", "timeline-edits--"].contains { name.hasPrefix($0) }
        }
        #expect(files.count >= 25, "\(real.path)")
        for file in files {
            let data = try Data(contentsOf: real.appendingPathComponent(file))
            guard let document = try? JSONSerialization.jsonObject(with: data.starts(with: [0xEF, 0xBB, 0xBF]) ? data.dropFirst(3) : data) else { continue }
            walk(document, underLocation: false)
        }
        return (kinds, names)
    }

    /// The class, not three words: of every kind of place the real exports give, only Home and
    /// Work name a place; the rest (placeholders, random strings) name nothing, and no real
    /// venue name is taken for a placeholder.
    @Test func onlyHomeAndWorkOfTheRealKindsAreNames() throws {
        let (kinds, names) = try Self.labels()
        for placeholder in ["TYPE_ALIASED_LOCATION", "TYPE_SEARCHED_ADDRESS", "UNKNOWN", "Unknown", "TYPE_HOME", "INFERRED_WORK", "Home", "Work"] {
            #expect(kinds.contains(placeholder), "the real exports hold \(placeholder)")
        }
        for kind in kinds {
            let name = VisitNames.name(name: nil, address: nil, semanticType: kind)?.0
            let last = kind.split(separator: "_").last.map { $0.uppercased() }
            if last == "HOME" || last == "WORK" {
                #expect(name == (last == "HOME" ? "Home" : "Work"), "\(kind)")
            } else {
                #expect(name == nil, "\(kind) is no name")
            }
            // The labels earlier versions made of the kinds are placeholders.
            let word = kind.split(separator: "_").last.map { $0.prefix(1).uppercased() + $0.dropFirst().lowercased() } ?? kind
            if !["Home", "Work"].contains(word), kind.uppercased() == kind { #expect(VisitNames.isPlaceholder(word), "\(word)") }
        }
        #expect(names.count > 100)
        for name in names { #expect(!VisitNames.isPlaceholder(name), "\(name) is a real name") }
        #expect(VisitNames.name(name: "Unknown", address: "83 Enford Cres, Brampton, ON L7A 0G1, Canada", semanticType: "TYPE_ALIASED_LOCATION")?.0
                == "83 Enford Cres, Brampton")
        #expect(VisitNames.shortAddress("C/ de Mallorca, 401\n08013 Barcelona\nEspanya") == "C/ de Mallorca, 401")
    }

    static func places(_ home: EnlogHome) throws -> [[String: Any]] {
        let result = try home.run("places", "--json")
        try #require(result.status == 0, "\(result.standardError)")
        return try #require(JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [[String: Any]])
    }

    /// The real Toronto month: its private labels and searched addresses are named by Google's
    /// address, its venues by their names, and `places` tells which is which.
    @Test func theRealMonthsPlacesAreNamedByNameThenAddress() throws {
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        let imported = try home.run("import", Self.real.appendingPathComponent(Self.august).path)
        try #require(imported.status == 0, "\(imported.standardError)")
        let places = try Self.places(home)
        let named = places.compactMap { place in (place["name"] as? String).map { ($0, place["nameSource"] as? String ?? "") } }
        for (name, _) in named { #expect(!VisitNames.isPlaceholder(name), "\(name) is a placeholder: \(named)") }
        #expect(named.contains { $0 == ("83 Enford Cres, Brampton", "address") }, "\(named)")
        #expect(named.contains { $0 == ("6 Rumbellow Cres, Ajax", "address") }, "\(named)")
        #expect(named.contains { $0 == ("Tim Hortons", "google") }, "\(named)")
        #expect(named.contains { $0 == ("Home", "google") }, "\(named)")
        let text = try home.run("places")
        #expect(text.standardOutput.contains("83 Enford Cres, Brampton (the import's address)"), "\(text.standardOutput)")
        #expect(text.standardOutput.contains("Tim Hortons (the import's name)"), "\(text.standardOutput)")
        let timeline = try home.run("timeline", "--since", "2021-08-01", "--until", "2021-09-01")
        #expect(timeline.status == 0, "\(timeline.standardError)")
        let stays = timeline.standardOutput.split(separator: "\n").filter { !$0.hasPrefix(" ") }
        #expect(stays.count > 20, "\(timeline.standardOutput)")
        for line in stays {
            #expect(!["Location", "Address", "Unknown"].contains { line.hasSuffix("  " + $0) }, "\(line)")
        }
    }

    /// A visit Google calls only UNKNOWN (the real Android export) leaves its place to the
    /// geocoder, which names it.
    @Test func theGeocoderNamesAPlaceThatHasOnlyAPlaceholder() throws {
        var home = try EnlogHome()
        _ = try home.directory.file("nominatim/hall.json", contents: #"{"lat":"40.7130","lon":"-74.0062","osm_type":"node","name":"City Hall Park","display_name":"City Hall Park, New York","address":{"city":"New York"}}"#)
        let server = try NominatimTestServer(["--fixtures", home.directory.path("nominatim"), "--radius", "0.005"])
        defer { server.stop() }
        home.extraEnvironment = ["ENLOG_GEOCODING_URL": server.baseURL, "ENLOG_GEOCODING_TIMEOUT": "5"]
        let file = Self.real.appendingPathComponent("android-timeline--tess1o-geopulse--google-timeline-new.json").path
        try #require(try home.run("import", file).status == 0)
        let places = try Self.places(home)
        #expect(!places.contains { ($0["name"] as? String).map(VisitNames.isPlaceholder) ?? false }, "\(places)")
        let hall = places.first { abs(($0["latitude"] as? Double ?? 0) - 40.713) < 0.001 && abs(($0["longitude"] as? Double ?? 0) + 74.0062) < 0.001 }
        #expect(hall?["name"] as? String == "City Hall Park", "\(places)")
        #expect(hall?["nameSource"] as? String == "geocoder", "\(places)")
    }

    /// An outbox whose places earlier versions named "Location", "Address" or "Unknown" from
    /// Google's kinds has them unnamed once opened; real names and the user's stay.
    @Test func placeholderNamesOfAnOlderOutboxAreForgotten() throws {
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        try FileManager.default.createDirectory(atPath: home.directory.path("data"), withIntermediateDirectories: true)
        let queue = try DatabaseQueue(path: home.database)
        try OutboxSchema.migrator.migrate(queue, upTo: OutboxSchema.placesMigration.identifier)
        try queue.write { db in
            for (index, (name, source)) in [("Location", "google"), ("Address", "google"), ("UNKNOWN", "google"), ("Home", "google"),
                                            ("Tim Hortons", "google"), ("Location", "user"), ("Haus 12", "geocoder")].enumerated() {
                try db.execute(sql: "INSERT INTO place (latitude, longitude, radius, name, nameSource, createdAt) VALUES (?, ?, 100, ?, ?, '2026-01-01 00:00:00.000')",
                               arguments: [10 + Double(index), 10, name, source])
            }
        }
        try queue.close()
        let places = try Self.places(home)
        #expect(places.map { $0["name"] as? String } == [nil, nil, nil, "Home", "Tim Hortons", "Location", "Haus 12"], "\(places)")
        #expect(places.map { $0["nameSource"] as? String } == [nil, nil, nil, "google", "google", "user", "geocoder"], "\(places)")
    }
}
