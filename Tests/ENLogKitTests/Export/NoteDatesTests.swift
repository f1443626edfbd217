import Foundation
import XCTest

/// A note is dated when it happened: its `created`, in ENEX (read by enex2notion's parser) and
/// in Evernote (the test server's stored note), is the moment it is about — a digest's day, an
/// old NMEA log's fix, an imported fix — while `queue list` keeps the time it was queued.
final class NoteDatesTests: XCTestCase {
    static let token = "S=s1:U=1:E=dates:C=test:P=1:A=enlog:V=2:H=cmd"
    /// 2021-08-19 09:00 in Europe/Berlin (07:00Z).
    static let oldMorning = Date(timeIntervalSince1970: 1_629_356_400)

    func makeHome() throws -> EnlogHome {
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        try home.writeConfig("[note]\ntime_zone = \"Europe/Berlin\"\n")
        return home
    }

    /// A drive on 2021-08-19, imported from NMEA (`--notes`: a note at each stop).
    func importOldDay(_ home: EnlogHome, notes: Bool) throws {
        let track = GeneratedTrack(start: Self.oldMorning, legs: [.stop(seconds: 400), .drive(metres: 1500, speed: 8), .stop(seconds: 400)],
                                   noise: 5)
        let nmea = try home.directory.file("old-day.nmea", contents: track.nmea)
        let imported = try home.run(["import", nmea.path] + (notes ? ["--notes"] : []))
        XCTAssertEqual(imported.status, 0, imported.standardError)
    }

    /// `created_raw` of every note in an export of the home's outbox, by title.
    func exportedCreated(_ home: EnlogHome) throws -> [(title: String, created: String)] {
        let (file, export) = try home.export("all.enex")
        XCTAssertEqual(export.status, 0, export.standardError)
        let read = try ENEXReaders.read(file)
        let notes = try XCTUnwrap(read["notes"] as? [[String: Any]])
        return notes.map { ($0["title"] as? String ?? "", $0["created_raw"] as? String ?? "") }
    }

    func testAnOldDaysDigestIsCreatedOnThatDayInENEXAndInEvernote() async throws {
        let server = try PythonServer(script: "evernote_server.py", arguments: ["--token", Self.token])
        defer { server.stop() }
        var home = try makeHome()
        try importOldDay(home, notes: false)
        let digest = try home.run("digest", "--date", "2021-08-19", "--no-sync")
        XCTAssertEqual(digest.status, 0, digest.standardError)

        home.extraEnvironment["ENLOG_TOKEN"] = Self.token
        let signedIn = try home.run("auth", "token", "--service", "custom", "--host", server.baseURL)
        XCTAssertEqual(signedIn.status, 0, signedIn.standardError)
        let sync = try home.run("sync")
        XCTAssertEqual(sync.status, 0, sync.standardError)
        let fetched = try await fetchJSON(server.baseURL + "/_test/notes")
        let stored = try XCTUnwrap(fetched as? [[String: Any]])
        XCTAssertEqual(stored.count, 1)
        // Midnight of 2021-08-19 in Berlin: 2021-08-18T22:00:00Z.
        XCTAssertEqual((stored.first?["created"] as? NSNumber)?.int64Value, 1_629_324_000_000, "\(stored.first ?? [:])")

        let exported = try exportedCreated(home)
        XCTAssertEqual(exported.count, 1)
        XCTAssertEqual(exported.first?.created, "20210818T220000Z", "\(exported)")
        // The queue keeps when it was queued: not the day it is about.
        let queued = try XCTUnwrap(try home.notes().first?["createdAt"] as? String)
        XCTAssertFalse(queued.hasPrefix("2021-08-1"), queued)
        XCTAssertEqual(try home.notes().first?["subjectDate"] as? String, "2021-08-18T22:00:00Z")
    }

    func testAnOldNMEALogAndImportedNotesAreCreatedWhenTheyHappened() throws {
        let home = try makeHome()
        // walk.nmea was recorded on 2024-03-09 from 10:15 UTC; its note is at its last fix.
        let logged = try home.run("log", "--nmea", TestPaths.nmea("walk.nmea"), "--no-geocode", "--no-sync")
        XCTAssertEqual(logged.status, 0, logged.standardError)
        try importOldDay(home, notes: true)
        let notes = try home.notes()
        XCTAssertGreaterThanOrEqual(notes.count, 2)
        let exported = try exportedCreated(home)
        XCTAssertEqual(exported.count, notes.count)
        XCTAssertTrue(exported.first?.created.hasPrefix("20240309T1015") == true, "\(exported)")
        XCTAssertGreaterThan(exported.dropFirst().count, 0)
        for note in exported.dropFirst() {
            XCTAssertTrue(note.created.hasPrefix("20210819T07"), "an imported stop of that morning: \(exported)")
        }
        for note in notes {
            XCTAssertFalse((note["createdAt"] as? String ?? "").hasPrefix("2021-08-19"), "queued today, not then: \(note)")
        }
    }
}
