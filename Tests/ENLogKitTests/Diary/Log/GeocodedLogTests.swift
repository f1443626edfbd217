import Foundation
import GRDB
import Testing
@testable import Compose

@Suite("enlog log with reverse geocoding")
struct GeocodedLogTests {
    func home(geocoder url: String, timeout: String = "3") throws -> EnlogHome {
        var home = try EnlogHome()
        home.extraEnvironment = ["ENLOG_GEOCODING_URL": url, "ENLOG_GEOCODING_TIMEOUT": timeout,
                                 "ENLOG_GEOCODING_CONTACT": "diary@example.org", "LANG": "ja_JP.UTF-8"]
        return home
    }

    @Test func theAddressGoesIntoTitleAndBodyAndIsCached() async throws {
        let server = try NominatimTestServer()
        defer { server.stop() }
        let home = try home(geocoder: server.baseURL)
        let first = try home.run("log", "--at", "35.681236,139.767125")
        #expect(first.status == 0, "\(first.standardError)")
        #expect(first.standardOutput.contains(": Tokyo, Chiyoda, Marunouchi 1-chome\n"), "\(first.standardOutput)")
        #expect(first.standardError.isEmpty)
        #expect(try home.run("log", "--at", "35.681240,139.767120").status == 0)
        let notes = try home.notes()
        #expect(notes.allSatisfy { $0["addressPending"] as? Bool == false })
        let requests = try await server.requests()
        #expect(requests.count == 1, "the second fix rounds to the same cached spot: \(requests)")
        let request = try #require(requests.first)
        #expect((request["user_agent"] as? String ?? "\(request)").contains("diary@example.org"), "\(request)")
        #expect("\(request)".contains("accept-language") && "\(request)".contains("ja"), "\(request)")
    }

    /// The address side answers both halves of the note's place together: within a place the user
    /// named, the title and placeName are the user's name, and the geocoder's address (asked once,
    /// then from the cache) is still in the body.
    @Test func atAUserNamedPlaceTheNameTitlesTheNoteAndTheAddressFillsItsBody() async throws {
        let server = try NominatimTestServer()
        defer { server.stop() }
        let home = try home(geocoder: server.baseURL)
        try #require(try home.run("places", "add", "Office", "--at", "35.6812,139.7671").status == 0)
        for _ in 0..<2 {
            let logged = try home.run("log", "--at", "35.681236,139.767125")
            #expect(logged.status == 0, "\(logged.standardError)")
            #expect(logged.standardOutput.hasSuffix(": Office\n"), "\(logged.standardOutput)")
        }
        let notes = try DatabaseQueue(path: home.database).read { db in
            try Row.fetchAll(db, sql: "SELECT placeName, content, addressPending FROM note ORDER BY id")
        }
        #expect(notes.count == 2)
        for note in notes {
            #expect(note["placeName"] as String? == "Office", "\(note)")
            #expect(note["addressPending"] as Bool == false, "\(note)")
            #expect((note["content"] as String).contains("Marunouchi"), "\(note)")
        }
        #expect(try await server.requests().count == 1, "the second note's address comes from the cache")
    }

    /// A geocoder answering with one made-up place at 10,20: `fields` are the reply's JSON members.
    func geocoder(answering fields: String, in directory: TemporaryDirectory) throws -> NominatimTestServer {
        _ = try directory.file("nominatim/place.json", contents: #"{"lat":"10","lon":"20","osm_type":"node","#
            + fields + "}")
        return try NominatimTestServer(["--fixtures", directory.path("nominatim")])
    }

    /// Names carrying characters no note can hold (noncharacters, C0 and C1 controls, ESC) are
    /// cleaned, and the joiners that belong to the words are kept.
    @Test func geocoderTextIsCleanedOfWhatENMLCannotCarry() throws {
        let scratch = try TemporaryDirectory()
        let server = try geocoder(answering: #""name":"Caf\u00e9\ufffe \u0001Bar\u0085 \ud83d\udc68\u200d\ud83d\udc69\u200d\ud83d\udc67","#
            + #""display_name":"\uffffx\u001b[31m, \ufdd0Tehran","address":{"city":"\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645\ufffe","state":"\u009bState\u000b"}"#,
            in: scratch)
        defer { server.stop() }
        let home = try home(geocoder: server.baseURL)
        let result = try home.run("log", "--at", "10,20")
        #expect(result.status == 0, "\(result.standardError)")
        let note = try #require(try home.notes().first)
        #expect(note["addressPending"] as? Bool == false)
        let title = try #require(note["title"] as? String)
        #expect(title == ("State, می\u{200C}خواهم, Café Bar 👨\u{200D}👩\u{200D}👧"), "\(title.unicodeScalars.map { String($0.value, radix: 16) })")
        let content = try home.run("queue", "show", "1").standardOutput
        #expect(ENMLValidator().validate(content).isValid, "\(content)")
        #expect(content.contains("x [31m, Tehran"), "\(content)")
        for text in [title, content] {
            #expect(!text.unicodeScalars.contains { !ENMLCharacters.canCarry($0) }, "\(text.debugDescription)")
        }
    }

    /// A template that puts the address in unescaped (`{{{address}}}`) renders valid notes until an
    /// address holds markup: the data broke the note, not the template, so the fix is kept.
    @Test func anAddressThatStillBreaksTheNoteLeavesItPendingInsteadOfLosingTheFix() throws {
        let scratch = try TemporaryDirectory()
        let server = try geocoder(answering: #""name":"Fish <& Chips","address":{"city":"London"}"#, in: scratch)
        defer { server.stop() }
        var home = try home(geocoder: server.baseURL)
        _ = try home.directory.file("raw/title.mustache", contents: "{{% CONTENT_TYPE: TEXT}}At {{coordinates}}")
        _ = try home.directory.file("raw/content.mustache", contents: """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE en-note SYSTEM "http://xml.evernote.com/pub/enml2.dtd">
            <en-note><p>{{{address}}}</p></en-note>
            """)
        home.extraEnvironment["ENLOG_NOTE_TEMPLATE"] = home.directory.path("raw")
        let result = try home.run("log", "--at", "10,20")
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains("could not be put in the note"), "\(result.standardError)")
        #expect(result.standardErrorLines.count == 1, "\(result.standardError)")
        let note = try #require(try home.notes().first)
        #expect(note["addressPending"] as? Bool == true)
        #expect(ENMLValidator().validate(try home.run("queue", "show", "1").standardOutput).isValid)
    }

    @Test func anUnreachableGeocoderStillLogsTheNoteWithItsAddressPending() throws {
        let home = try home(geocoder: "http://127.0.0.1:\(try freeLoopbackPort())")
        let result = try home.run("log", "--at", "48.8606,2.3376")
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains("filled in before upload"))
        #expect(try home.notes().first?["addressPending"] as? Bool == true)
    }

    @Test func aSlowGeocoderIsNotWaitedForBeyondTheBudget() throws {
        let server = try NominatimTestServer(["--delay", "60"])
        defer { server.stop() }
        let home = try home(geocoder: server.baseURL, timeout: "1")
        let result = try home.run("log", "--at", "35.681236,139.767125")
        #expect(result.status == 0, "\(result.standardError)")
        // The server would have answered with an address after 60 s: a pending address proves
        // enlog stopped waiting at its budget instead.
        #expect(try home.notes().first?["addressPending"] as? Bool == true)
    }
}
