import Foundation
import XCTest
import GRDB
#if canImport(Glibc)
import Glibc
#endif

/// A phone's day through a real `enlog serve` on 127.0.0.1: OwnTracks posts one location per
/// request, as its HTTP mode does; the notes on moving somewhere new get their addresses from the
/// loopback Nominatim server; a point of the next day ends the phone's day and serve writes its
/// digest, of its points alone.
final class PhoneDiaryServeTests: XCTestCase {
    /// 2026-11-18 09:00 UTC.
    static let nine = 1_794_992_400
    static let home = (latitude: 52.512345, longitude: 13.401234)
    static let office = (latitude: 52.538045, longitude: 13.426234)
    static let paris = (latitude: 48.876543, longitude: 2.351234)

    /// Nominatim replies for the three places (each answered only within ~300 m of it).
    static func geocoderFixtures(_ directory: TemporaryDirectory) throws -> String {
        let places: [(file: String, latitude: Double, longitude: Double, road: String, number: String, city: String, country: String, code: String)] = [
            ("home.json", home.latitude, home.longitude, "Kastanienallee", "12", "Berlin", "Deutschland", "de"),
            ("office.json", office.latitude, office.longitude, "Greifswalder Strasse", "80", "Berlin", "Deutschland", "de"),
            ("paris.json", paris.latitude, paris.longitude, "Boulevard de Magenta", "5", "Paris", "France", "fr"),
        ]
        for place in places {
            let reply: [String: Any] = [
                "place_id": 1, "osm_type": "node", "osm_id": 1, "lat": String(place.latitude), "lon": String(place.longitude),
                "category": "place", "type": "house", "place_rank": 30, "addresstype": "place", "name": "",
                "display_name": "\(place.number), \(place.road), \(place.city), \(place.country)",
                "address": ["house_number": place.number, "road": place.road, "city": place.city, "country": place.country,
                            "country_code": place.code],
            ]
            _ = try directory.file("nominatim/\(place.file)", contents: String(decoding: try JSONSerialization.data(withJSONObject: reply), as: UTF8.self))
        }
        return directory.path("nominatim")
    }

    /// A point as OwnTracks sends it: `tst` in seconds, `acc` in metres, its tracker id.
    static func location(_ latitude: Double, _ longitude: Double, _ time: Int, tid: String) -> [UInt8] {
        Array(String(format: #"{"_type":"location","lat":%.6f,"lon":%.6f,"acc":10,"alt":40,"vel":0,"batt":80,"tid":"%@","tst":%d}"#,
                     latitude, longitude, tid, time).utf8)
    }

    /// Up to ±11 m around a place, the same every run: what a phone lying still reports.
    static func jitter(_ step: Int) -> (Double, Double) {
        (0.0001 * sin(Double(step) * 1.7), 0.0001 * cos(Double(step) * 2.3))
    }

    func testAPhonesDayGivesNotesOnArrivalWithTheirAddressesAndTheDevicesDigest() throws {
        let directory = try TemporaryDirectory()
        let geocoder = try NominatimTestServer(["--fixtures", try Self.geocoderFixtures(directory), "--radius", "0.003"])
        defer { geocoder.stop() }
        var home = try EnlogHome()
        home.extraEnvironment = ["ENLOG_GEOCODING_URL": geocoder.baseURL, "ENLOG_GEOCODING_MIN_INTERVAL": "0",
                                 "ENLOG_GEOCODING_TIMEOUT": "30", "ENLOG_WATCH_DIGEST": "true", "ENLOG_NOTE_TIME_ZONE": "UTC"]
        var secrets: [String: String] = [:]
        for name in ["a", "b"] {
            let added = try home.run("devices", "add", name, "--json")
            XCTAssertEqual(added.status, 0, added.standardError)
            let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(added.standardOutput.utf8)) as? [String: Any])
            secrets[name] = try XCTUnwrap(json["secret"] as? String)
        }
        let serve = try ServeProcess(home: home, verbose: false)
        defer { if serve.child.isRunning { _ = serve.stop(SIGKILL) } }
        func post(_ device: String, _ body: [UInt8]) {
            let reply = LoopbackHTTP.request(port: serve.port, "POST", "/owntracks",
                                             headers: ["Authorization": LoopbackHTTP.basic(device, secrets[device]!), "Content-Type": "application/json",
                                                       "X-Limit-U": device, "X-Limit-D": device], body: body)
            XCTAssertEqual(reply?.status, 200, reply?.body ?? "no reply")
        }

        // a: at home 09:00–09:30, a drive of 3.3 km north-east 09:31–09:35 (a point a minute),
        // at the office 09:36–10:10. b: in Paris 09:00–09:40. Sent as they happen, interleaved.
        var a: [[UInt8]] = []
        for minute in 0...30 {
            let (dy, dx) = Self.jitter(minute)
            a.append(Self.location(Self.home.latitude + dy, Self.home.longitude + dx, Self.nine + 60 * minute, tid: "a"))
        }
        for step in 1...5 {
            let part = Double(step) / 6
            a.append(Self.location(Self.home.latitude + (Self.office.latitude - Self.home.latitude) * part,
                                   Self.home.longitude + (Self.office.longitude - Self.home.longitude) * part, Self.nine + 60 * (30 + step), tid: "a"))
        }
        for minute in 36...70 {
            let (dy, dx) = Self.jitter(minute)
            a.append(Self.location(Self.office.latitude + dy, Self.office.longitude + dx, Self.nine + 60 * minute, tid: "a"))
        }
        let b = (0...40).map { minute in
            let (dy, dx) = Self.jitter(minute + 100)
            return Self.location(Self.paris.latitude + dy, Self.paris.longitude + dx, Self.nine + 60 * minute + 7, tid: "b")
        }
        for index in 0..<max(a.count, b.count) {
            if index < a.count { post("a", a[index]) }
            if index < b.count { post("b", b[index]) }
        }

        // The notes come after the replies, through the geocoder: wait for them, generously.
        struct Noted: Equatable {
            var device: String
            var title: String
            var subjectDate: String
            var fixTime: String
        }
        let database = try ServeCommandTests.database(home.database)
        func noted() throws -> [Noted] {
            try database.read { db in
                try Row.fetchAll(db, sql: """
                    SELECT fix.device, note.title, note.subjectDate, fix.timestamp FROM note JOIN fix ON fix.id = note.fixId
                    WHERE NOT EXISTS (SELECT 1 FROM digest WHERE digest.noteId = note.id) ORDER BY fix.timestamp, note.id
                    """).map { Noted(device: $0[0], title: $0[1], subjectDate: $0[2], fixTime: $0[3]) }
            }
        }
        let noteEvents = #""event":"noted""#
        XCTAssertTrue(serve.child.waitForOutput(within: .seconds(180)) { $0.components(separatedBy: noteEvents).count - 1 >= 4 },
                      serve.child.output)
        let notes = try noted()
        let stamp = { (second: Int) in StreamingClient.stored(second) }
        // a: home (its first point), the first point of the drive past 200 m (after 300 s), the
        // office once 300 s had passed since that; b: Paris. Each dated by its fix, not by now.
        XCTAssertEqual(notes.map(\.device), ["a", "b", "a", "a"], "\(notes)")
        XCTAssertEqual(notes.map(\.fixTime), [stamp(Self.nine), stamp(Self.nine + 7), stamp(Self.nine + 60 * 31), stamp(Self.nine + 60 * 36)], "\(notes)")
        XCTAssertEqual(notes.map(\.subjectDate), notes.map(\.fixTime), "each note dated by its point's time")
        XCTAssertEqual(notes.map(\.title), ["Berlin, Kastanienallee 12", "Paris, 5 Boulevard de Magenta",
                                             // On the way, where the geocoder knows no address: its position.
                                             String(format: "%.6f,%.6f", Self.home.latitude + (Self.office.latitude - Self.home.latitude) / 6,
                                                    Self.home.longitude + (Self.office.longitude - Self.home.longitude) / 6),
                                             "Berlin, Greifswalder Strasse 80"], "\(notes)")

        // a's first point of the next day ends its day: serve writes its digest (after every
        // point before it went through the diary); b's day goes on.
        post("a", Self.location(Self.office.latitude, Self.office.longitude, Self.nine + 86_400, tid: "a"))
        XCTAssertTrue(serve.child.waitForOutput(containing: #""event":"digest""#, within: .seconds(180)), serve.child.output)
        XCTAssertEqual(serve.stop().status, 0)
        let digests = serve.events("digest")
        XCTAssertEqual(digests.count, 1, "\(digests)")
        XCTAssertEqual(digests.first?["device"] as? String, "a")
        XCTAssertEqual(digests.first?["day"] as? String, "2026-11-18")
        // Nothing for the jitter at home, at the office or in Paris, nor for the next day's point.
        XCTAssertEqual(serve.events("noted").count, 4, serve.child.output)
        XCTAssertEqual(try noted(), notes)

        // digest --device a for that day is the one serve wrote: a's stays and notes alone.
        let again = try home.run("digest", "--date", "2026-11-18", "--device", "a", "--no-sync", "--json")
        XCTAssertEqual(again.status, 0, again.standardError)
        XCTAssertTrue(again.standardError.hasPrefix("enlog: 2026-11-18 has a's digest already: note "), again.standardError)
        let digestA = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(again.standardOutput.utf8)) as? [String: Any])
        let shownA = try home.run("queue", "show", "\(digestA["id"] as? Int ?? -1)")
        XCTAssertEqual(shownA.status, 0, shownA.standardError)
        let contentA = shownA.standardOutput
        XCTAssertTrue((digestA["title"] as? String)?.hasPrefix("Day 2026-11-18 (a): 3.") == true, "\(digestA["title"] ?? "")")
        let placesNoted = contentA.components(separatedBy: "<h3>Places noted</h3>").last ?? ""
        XCTAssertEqual(placesNoted.components(separatedBy: "<li>").count - 1, 3, contentA)
        XCTAssertTrue(placesNoted.contains("Kastanienallee") && placesNoted.contains("Greifswalder Strasse"), contentA)
        XCTAssertFalse(contentA.contains("Magenta") || contentA.contains("48.87"), contentA)
        // Its timeline: a's two stays (home, the office) and the drive between; nothing of b's.
        let timeline = contentA.components(separatedBy: "<h3>Timeline</h3>").last?.components(separatedBy: "</ul>").first ?? ""
        let items = timeline.components(separatedBy: "<li>").dropFirst().map { $0.replacingOccurrences(of: "</li>", with: "") }
        let stays = items.filter { !$0.contains("[") && !$0.hasPrefix("Moving:") }
        XCTAssertEqual(stays.count, 2, timeline)
        XCTAssertTrue(stays.first?.hasPrefix("09:00") == true && (stays.first?.contains("52.512") == true || stays.first?.contains("Kastanienallee") == true), timeline)
        XCTAssertTrue(stays.last?.hasPrefix("09:35") == true && (stays.last?.contains("52.53") == true || stays.last?.contains("Greifswalder") == true), timeline)
        let onlyB = try home.run("digest", "--date", "2026-11-18", "--device", "b", "--no-sync", "--json")
        XCTAssertEqual(onlyB.status, 0, onlyB.standardError)
        let digestB = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(onlyB.standardOutput.utf8)) as? [String: Any])
        let contentB = try home.run("queue", "show", "\(digestB["id"] as? Int ?? -1)").standardOutput
        XCTAssertTrue(contentB.contains("Magenta") && !contentB.contains("Kastanienallee"), contentB)
    }

    /// The diary decides on the points the receiver committed whether or not it came to them
    /// before the receiver died: killed (-9) while the diary waits on its first address, the next
    /// start writes the notes those points make; a clean stop keeps how far it got, and deciding
    /// everything again from an older mark writes nothing twice.
    func testPointsCommittedBeforeAKillAreDecidedAfterTheRestartOnce() async throws {
        let directory = try TemporaryDirectory()
        let fixtures = try Self.geocoderFixtures(directory)
        // Answers after ten minutes: the diary's first note waits on it (up to geocoding.timeout).
        let stuck = try NominatimTestServer(["--fixtures", fixtures, "--radius", "0.003", "--delay", "600"])
        defer { stuck.stop() }
        var home = try EnlogHome()
        home.extraEnvironment = ["ENLOG_GEOCODING_URL": stuck.baseURL, "ENLOG_GEOCODING_MIN_INTERVAL": "0",
                                 "ENLOG_GEOCODING_TIMEOUT": "60", "ENLOG_NOTE_TIME_ZONE": "UTC"]
        let added = try home.run("devices", "add", "a", "--json")
        XCTAssertEqual(added.status, 0, added.standardError)
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(added.standardOutput.utf8)) as? [String: Any])
        let secret = try XCTUnwrap(json["secret"] as? String)
        // Home 09:00–09:30, the drive 09:31–09:35, the office 09:36–09:50: three notes' worth.
        var points: [[UInt8]] = (0...30).map { minute in
            let (dy, dx) = Self.jitter(minute)
            return Self.location(Self.home.latitude + dy, Self.home.longitude + dx, Self.nine + 60 * minute, tid: "a")
        }
        for step in 1...5 {
            let part = Double(step) / 6
            points.append(Self.location(Self.home.latitude + (Self.office.latitude - Self.home.latitude) * part,
                                        Self.home.longitude + (Self.office.longitude - Self.home.longitude) * part, Self.nine + 60 * (30 + step), tid: "a"))
        }
        for minute in 36...50 {
            let (dy, dx) = Self.jitter(minute)
            points.append(Self.location(Self.office.latitude + dy, Self.office.longitude + dx, Self.nine + 60 * minute, tid: "a"))
        }

        let first = try ServeProcess(home: home, verbose: false)
        defer { if first.child.isRunning { _ = first.stop(SIGKILL) } }
        for body in points {
            let reply = LoopbackHTTP.request(port: first.port, "POST", "/owntracks",
                                             headers: ["Authorization": LoopbackHTTP.basic("a", secret), "Content-Type": "application/json"], body: body)
            XCTAssertEqual(reply?.status, 200, reply?.body ?? "no reply")
        }
        var asked = 0
        for _ in 0..<600 where asked == 0 {
            asked = try await stuck.requests().count
            if asked == 0 { try await Task.sleep(for: .milliseconds(100)) }
        }
        XCTAssertGreaterThan(asked, 0, "the diary asks for its first note's address")
        _ = first.stop(SIGKILL)

        let database = try ServeCommandTests.database(home.database)
        func state() throws -> (fixTimes: [String], mark: Int64, newest: Int64, fixes: Int) {
            try database.read { db in
                (try String.fetchAll(db, sql: "SELECT fix.timestamp FROM note JOIN fix ON fix.id = note.fixId ORDER BY fix.timestamp"),
                 try Int64.fetchOne(db, sql: "SELECT decidedThrough FROM phone_diary") ?? -1,
                 try Int64.fetchOne(db, sql: "SELECT MAX(id) FROM fix") ?? -1,
                 try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM fix") ?? -1)
            }
        }
        let killed = try state()
        XCTAssertEqual(killed.fixTimes, [], "no note before the kill: the diary was waiting on the address")
        XCTAssertEqual(killed.fixes, points.count, "every acknowledged point is in the outbox")

        // Started again with a geocoder that answers: the points are decided now.
        let geocoder = try NominatimTestServer(["--fixtures", fixtures, "--radius", "0.003"])
        defer { geocoder.stop() }
        home.extraEnvironment["ENLOG_GEOCODING_URL"] = geocoder.baseURL
        let second = try ServeProcess(home: home, verbose: false)
        defer { if second.child.isRunning { _ = second.stop(SIGKILL) } }
        XCTAssertTrue(second.child.waitForOutput(within: .seconds(180)) { $0.components(separatedBy: #""event":"noted""#).count - 1 >= 3 },
                      second.child.output)
        XCTAssertEqual(second.stop().status, 0)
        let stamp = { (second: Int) in StreamingClient.stored(second) }
        let decided = try state()
        XCTAssertEqual(decided.fixTimes, [stamp(Self.nine), stamp(Self.nine + 60 * 31), stamp(Self.nine + 60 * 36)])
        XCTAssertEqual(decided.mark, decided.newest, "the stop kept how far the diary got")

        // Everything decided again, from before the first point: no note twice.
        _ = try await database.write { db in try db.execute(sql: "UPDATE phone_diary SET decidedThrough = 0") }
        let third = try ServeProcess(home: home, verbose: false)
        defer { if third.child.isRunning { _ = third.stop(SIGKILL) } }
        XCTAssertEqual(third.stop().status, 0)
        let again = try state()
        XCTAssertEqual(again.fixTimes, decided.fixTimes, third.child.output)
        XCTAssertEqual(again.mark, again.newest, "the points were gone through again")
        XCTAssertEqual(third.events("noted").count, 0, third.child.output)
    }
}
