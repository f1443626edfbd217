import Foundation
import XCTest
@testable import Capture
@testable import Compose

/// Diary notes through `enlog sync` to the official Evernote SDK's server classes: the photo,
/// the attached files, the words and the map arrive in one note, each resource once, its body's
/// MD5 equal to its bodyHash and to an `en-media` hash.
final class SyncDiaryTests: TilesAndEvernoteTestCase {
    override class var contact: String { "sync-diary-test@example.org" }

    /// Every resource as the SDK decoded it: body MD5 = bodyHash = an en-media hash of the
    /// content with the same type; returns them by file name.
    @discardableResult
    static func assertResourcesAgree(_ note: [String: Any], file: StaticString = #filePath, line: UInt = #line) throws -> [String: [String: Any]] {
        let content = note["content"] as? String ?? ""
        var byName: [String: [String: Any]] = [:]
        for resource in note["resources"] as? [[String: Any]] ?? [] {
            let body = try XCTUnwrap(Data(base64Encoded: resource["body"] as? String ?? ""), file: file, line: line)
            let md5 = MapImage.md5Hex(body)
            XCTAssertEqual(resource["md5"] as? String, md5, file: file, line: line)
            XCTAssertEqual(resource["bodyHash"] as? String, md5, file: file, line: line)
            XCTAssertEqual(resource["dataSize"] as? Int, body.count, file: file, line: line)
            let mime = resource["mime"] as? String ?? "?"
            XCTAssertTrue(content.contains("<en-media type=\"\(mime)\" hash=\"\(md5)\"/>"), "\(mime) \(md5) in \(content)", file: file, line: line)
            let attributes = resource["attributes"] as? [String: Any] ?? [:]
            byName[attributes["fileName"] as? String ?? md5] = resource
        }
        return byName
    }

    /// The "done when": `enlog log --photo IMG_2041.jpg -m "Lunch at the market"`, then
    /// sync: the note is at the photo's place, with the photo, the words and the map; the other
    /// files keep their types whatever their names say.
    func testAPhotoNoteArrivesWithPhotoWordsMapAndFiles() async throws {
        let photo = try TestFiles.photo(home.directory.path("IMG_2041.jpg"), tags: TestFiles.gpsTags(
            latitude: -33.8568, longitude: 151.2153, altitude: 12, utc: "2026:11:20 02:15:30",
            takenAt: "2026:11:20 13:15:31", offset: "+11:00", accuracy: 5), width: 160, height: 120)
        let png = try TestFiles.image(home.directory.path("menu.png"), format: "PNG", width: 40, height: 30)
        let pdf = try TestFiles.image(home.directory.path("receipt.pdf"), format: "PDF")
        let disguised = try TestFiles.image(home.directory.path("ticket.pdf"), format: "PNG", width: 20, height: 10)
        let log = try home.run("log", "--photo", photo, "-m", "Lunch at the market", "--attach", png, "--attach", pdf,
                               "--attach", disguised, "--no-sync")
        XCTAssertEqual(log.status, 0, log.standardError)
        let sync = try home.run("sync")
        XCTAssertEqual(sync.status, 0, sync.standardError)
        let notes = try await serverNotes()
        XCTAssertEqual(notes.count, 1)
        let note = notes[0]
        let attributes = note["attributes"] as? [String: Any] ?? [:]
        // Degrees, minutes and seconds as EXIF rationals: equal to the last bits of a double.
        XCTAssertEqual(try XCTUnwrap(attributes["latitude"] as? Double), -33.8568, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(attributes["longitude"] as? Double), 151.2153, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(attributes["altitude"] as? Double), 12, accuracy: 1e-9)
        XCTAssertTrue((note["content"] as? String ?? "").contains("<div>Lunch at the market</div>"))
        let resources = try Self.assertResourcesAgree(note)
        XCTAssertEqual(Set(resources.keys), ["IMG_2041.jpg", "menu.png", "receipt.pdf", "ticket.pdf", "map.png"])
        let expected: [String: (mime: String, size: [Int]?, attachment: Bool?)] = [
            "IMG_2041.jpg": ("image/jpeg", [160, 120], nil), "menu.png": ("image/png", [40, 30], nil),
            "receipt.pdf": ("application/pdf", nil, true), "ticket.pdf": ("image/png", [20, 10], nil),
            "map.png": ("image/png", [600, 400], nil),
        ]
        for (name, want) in expected {
            let resource = try XCTUnwrap(resources[name], name)
            XCTAssertEqual(resource["mime"] as? String, want.mime, name)
            XCTAssertEqual((resource["width"] as? Int).map { [$0, resource["height"] as? Int ?? 0] }, want.size, name)
            XCTAssertEqual((resource["attributes"] as? [String: Any])?["attachment"] as? Bool, want.attachment, name)
        }
        // The photo went up byte for byte.
        let uploaded = try XCTUnwrap(Data(base64Encoded: resources["IMG_2041.jpg"]?["body"] as? String ?? ""))
        XCTAssertEqual(uploaded, try Data(contentsOf: URL(fileURLWithPath: photo)))
        XCTAssertEqual(try home.run("sync").status, 0)
        let again = try await serverNotes()
        XCTAssertEqual(again.count, 1)
        XCTAssertEqual((again[0]["resources"] as? [Any])?.count, 5, "uploaded once")
    }

    /// A map made at sync re-renders the note: the words and the files stay in it.
    func testANoteReRenderedAtSyncKeepsItsWordsAndFiles() async throws {
        try await tiles.configure("status=500")
        let pdf = try TestFiles.image(home.directory.path("ticket.pdf"), format: "PDF")
        let log = try home.run("log", "--at", "48.8584,2.2945", "-m", "Up the tower", "--attach", pdf, "--no-sync")
        XCTAssertEqual(log.status, 0, log.standardError)
        XCTAssertTrue(log.standardError.contains("no map yet"), log.standardError)
        try await tiles.configure("status=0")
        let sync = try home.run("sync")
        XCTAssertEqual(sync.status, 0, sync.standardError)
        XCTAssertTrue(sync.standardOutput.contains("made 1 map"), sync.standardOutput)
        let notes = try await serverNotes()
        XCTAssertEqual(notes.count, 1)
        XCTAssertTrue((notes[0]["content"] as? String ?? "").contains("<div>Up the tower</div>"))
        let resources = try Self.assertResourcesAgree(notes[0])
        XCTAssertEqual(Set(resources.keys), ["ticket.pdf", "map.png"])
    }

    /// An address looked up at sync re-renders the note too: words, file and map stay.
    func testANoteWhoseAddressIsFilledInAtSyncKeepsItsWordsAndFiles() async throws {
        let geocoder = try NominatimTestServer()
        defer { geocoder.stop() }
        let pdf = try TestFiles.image(home.directory.path("ticket.pdf"), format: "PDF")
        let log = try home.run("log", "--at", "35.681236,139.767125", "--no-geocode", "-m", "At the station",
                               "--attach", pdf, "--no-sync")
        XCTAssertEqual(log.status, 0, log.standardError)
        var geocoding = home!
        geocoding.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "true"
        geocoding.extraEnvironment["ENLOG_GEOCODING_URL"] = geocoder.baseURL
        let sync = try geocoding.run("sync")
        XCTAssertEqual(sync.status, 0, sync.standardError)
        let notes = try await serverNotes()
        XCTAssertEqual(notes.count, 1)
        let content = notes[0]["content"] as? String ?? ""
        XCTAssertTrue(content.contains("Tokyo, Chiyoda, Marunouchi"), content)
        XCTAssertTrue(content.contains("<div>At the station</div>"), content)
        let resources = try Self.assertResourcesAgree(notes[0])
        XCTAssertEqual(Set(resources.keys), ["ticket.pdf", "map.png"])
    }
}

extension SyncKillTests {
    /// 60 notes each carrying a photo and a PDF (sizes like the map kill test's, so a sync lasts
    /// long enough to be killed inside it); `enlog sync` SIGKILLed at seeded moments until
    /// done: each note once on the server, with exactly one copy of each of its files.
    func testKilledSyncsUploadEachAttachmentExactlyOnce() async throws {
        let f = try SyncFixture()
        let scratch = try TemporaryDirectory()
        let pdf = try Attachments.load(try TestFiles.image(scratch.path("ticket.pdf"), format: "PDF"))
        var expected: [String: Set<String>] = [:]
        for i in 0..<60 {
            let path = try TestFiles.image(scratch.path("photo\(i).jpg"), format: "JPEG", width: 600 + i, height: 400)
            let photo = try Attachments.load(path)
            let fix = try Fix(latitude: 48.85 + Double(i) * 0.001, longitude: 2.35, timestamp: Date(), source: .photo)
            var draft = try NoteRenderer().render(fix: fix, place: nil, entry: DiaryEntry(message: "note \(i)", attachments: [photo, pdf]))
            draft.resources = [photo, pdf]
            try await f.outbox.enqueue(fix: fix, note: draft)
            expected[draft.uid] = [photo.hash, pdf.hash]
        }
        let environment = try Self.signedIn(f).merging(["ENLOG_MAP_STYLE": "none"]) { $1 }
        let runs = try await Self.syncUntilDone(f, environment: environment, seed: 0xD1A2_2026)
        let notes = try await f.serverNotes()
        XCTAssertEqual(notes.count, 60)
        let uids = try await f.serverUIDs()
        XCTAssertEqual(Set(uids), Set(expected.keys), "each note once")
        for note in notes {
            let resources = try SyncDiaryTests.assertResourcesAgree(note)
            XCTAssertEqual(resources.count, 2, "one copy of each file")
            let hashes = Set(resources.values.compactMap { $0["md5"] as? String })
            XCTAssertTrue(expected.values.contains(hashes), "\(hashes)")
        }
        let synced = try await f.outbox.counts()[.synced]
        XCTAssertEqual(synced, 60)
        XCTAssertGreaterThan(runs.kills, 0)
    }
}
