import Foundation
import GRDB
import Testing

/// `enlog places`, the built binary on a real outbox with a local Nominatim: places come from
/// the stays, are unnamed while the geocoder is unreachable and named on a later run, an
/// import's visit name seeds its place, and a name the user gives is kept against the geocoder's
/// across runs; add, merge and forget change the places, an unknown id is a usage error.
@Suite("enlog places")
struct PlacesCommandTests {
    static func places(_ home: EnlogHome) throws -> [[String: Any]] {
        let result = try home.run("places", "--json")
        try #require(result.status == 0, "\(result.standardError)")
        return try #require(JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [[String: Any]])
    }

    /// A geocoder knowing the two places of `TimelineCommandTests.csv()`'s day.
    static func geocoder(in directory: TemporaryDirectory) throws -> NominatimTestServer {
        _ = try directory.file("nominatim/home.json", contents: #"{"lat":"48.137","lon":"11.575","osm_type":"node","name":"Haus 12","display_name":"Haus 12, München","address":{"city":"München"}}"#)
        _ = try directory.file("nominatim/cafe.json", contents: #"{"lat":"48.137","lon":"11.59117","osm_type":"node","name":"Café Blau","display_name":"Café Blau, München","address":{"city":"München"}}"#)
        return try NominatimTestServer(["--fixtures", directory.path("nominatim"), "--radius", "0.005"])
    }

    @Test func placesAreNamedOnceAndTheUsersNameLasts() async throws {
        var home = try EnlogHome()
        home.extraEnvironment = ["ENLOG_GEOCODING_URL": "http://127.0.0.1:\(try freeLoopbackPort())", "ENLOG_GEOCODING_TIMEOUT": "3"]
        let file = try home.directory.file("day.csv", contents: TimelineCommandTests.csv())
        try #require(try home.run("import", file.path).status == 0)

        // Offline: the places are made, the visit's is named from the import, the others wait.
        let offline = try Self.places(home)
        #expect(offline.count == 3, "\(offline)")
        #expect(offline.map { $0["name"] as? String } == [nil, nil, "Café Rosa"], "\(offline)")
        #expect(offline.last?["nameSource"] as? String == "google")
        #expect(offline.allSatisfy { $0["visits"] as? Int == 1 })

        // Online: named by the geocoder, its most specific name, never "Suggested place".
        let server = try Self.geocoder(in: home.directory)
        defer { server.stop() }
        home.extraEnvironment["ENLOG_GEOCODING_URL"] = server.baseURL
        let online = try Self.places(home)
        #expect(online.map { $0["name"] as? String } == ["Haus 12", "Café Blau", "Café Rosa"], "\(online)")
        #expect(online.prefix(2).allSatisfy { $0["nameSource"] as? String == "geocoder" })
        let homeId = try #require(online.first?["id"] as? Int)

        // The user's name is kept, on this run and the next, and the timeline tells it.
        let named = try home.run("places", "name", "\(homeId)", "Home", "--json")
        #expect(named.status == 0, "\(named.standardError)")
        #expect(try Self.places(home).first?["name"] as? String == "Home")
        let timeline = try home.run("timeline", "--date", TimelineCommandTests.day)
        // After the line naming the zone.
        #expect(timeline.standardOutput.split(separator: "\n").dropFirst().first?.hasSuffix("Home") == true, "\(timeline.standardOutput)")
        #expect(timeline.standardOutput.contains("Café Blau"))
        let requests = try await server.requests()
        #expect(requests.count == 2, "one lookup per place, none again once named: \(requests)")
    }

    @Test func addMergeForgetAndUnknownIds() throws {
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        let added = try home.run("places", "add", "Office", "--at", "48.2,11.6", "--radius", "60", "--json")
        try #require(added.status == 0, "\(added.standardError)")
        let second = try home.run("places", "add", "Office door", "--at", "48.2005,11.6")
        #expect(second.status == 0)
        var places = try Self.places(home)
        #expect(places.map { $0["name"] as? String } == ["Office", "Office door"])
        #expect(places.allSatisfy { $0["nameSource"] as? String == "user" && $0["visits"] as? Int == 0 })

        let merged = try home.run("places", "merge", "1", "2")
        #expect(merged.status == 0, "\(merged.standardError)")
        places = try Self.places(home)
        #expect(places.count == 1)
        #expect(places.first?["name"] as? String == "Office")
        #expect((places.first?["radius"] as? Double ?? 0) > 100, "wide enough for both: \(places)")

        // A stay at the office is that place.
        #expect(try home.run("log", "--at", "48.2002,11.6", "--no-geocode").status == 0)
        let timeline = try home.run("timeline", "--json")
        #expect(timeline.standardOutput.contains("\"name\" : \"Office\""), "\(timeline.standardOutput)")
        #expect(try Self.places(home).first?["visits"] as? Int == 1)

        for arguments in [["places", "name", "9", "X"], ["places", "merge", "1", "9"], ["places", "forget", "9"],
                          ["places", "merge", "1", "1"], ["places", "add", "X", "--at", "91,0"],
                          ["places", "add", "X", "--at", "1,2", "--radius", "1e9"], ["places", "add", "", "--at", "1,2"],
                          ["places", "add", "two\nlines", "--at", "1,2"]] {
            let refused = try home.run(arguments)
            #expect(refused.status != 0, "\(arguments)")
            #expect(refused.standardError.split(separator: "\n").count <= 2, "\(arguments): \(refused.standardError)")
        }
        #expect(try home.run("places", "forget", "9").status == ExitStatusCode.usage.rawValue)
        #expect(try home.run("places", "forget", "1").status == 0)
        #expect(try Self.places(home).count == 1, "the note's stay makes a new, unnamed place")
        #expect(try Self.places(home).first?["name"] == nil)
    }

    /// A note logged within a place the user named carries the name in placeName (the consent
    /// Evernote asks for), whatever note.place_name says; a place named by anything else does not.
    @Test func notesAtAUserNamedPlaceCarryItsName() throws {
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        try #require(try home.run("places", "add", "Home", "--at", "48.137,11.575").status == 0)
        try #require(try home.run("log", "--at", "48.1372,11.5752", "--no-geocode").status == 0)
        try #require(try home.run("log", "--at", "48.2,11.7", "--no-geocode").status == 0)
        let names = try DatabaseQueue(path: home.database).read { db in
            try Row.fetchAll(db, sql: "SELECT placeName FROM note ORDER BY id").map { $0[0] as String? }
        }
        #expect(names == ["Home", nil])
    }
}
