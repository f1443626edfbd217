import Foundation
import XCTest
@testable import Support
@testable import Compose

/// `enlog export --enex`: notes, a digest and their resources (maps, a photo, a PDF, the
/// digest's GPX and route), read back by readers enlog did not write: xmllint with Evernote's
/// 4.0 DTD, enex2notion's parser, Python's XML parser, and the ENML DTD.
final class ENEXExportTests: XCTestCase {
    var tiles: TileTestServer!
    var home: EnlogHome!
    /// 2026-11-22 08:00 in Europe/Berlin.
    static let morning = Date(timeIntervalSince1970: 1_795_330_800)

    override func setUp() async throws {
        tiles = try TileTestServer()
        home = try EnlogHome()
        home.extraEnvironment = ["ENLOG_MAP_STYLE": "tiles", "ENLOG_MAP_TILE_URL": tiles.tileURL,
                                 "ENLOG_GEOCODING_ENABLED": "false", "XDG_CACHE_HOME": home.directory.path("cache"),
                                 "ENLOG_GEOCODING_CONTACT": "enex-test@example.org"]
        try home.writeConfig("[note]\ntime_zone = \"Europe/Berlin\"\n")
    }

    override func tearDown() async throws {
        tiles?.stop()
    }

    /// Notes with a map, a PDF and a photo, and a day's digest with its route and GPX track.
    func logADiary() throws {
        let pdf = try TestFiles.image(home.directory.path("ticket.pdf"), format: "PDF")
        let photo = try TestFiles.photo(home.directory.path("IMG_1.jpg"),
                                        tags: TestFiles.gpsTags(latitude: -41.2865, longitude: 174.7762, altitude: 3,
                                                                utc: "2026:11:20 03:15:30", accuracy: 4.5))
        for arguments in [["--at", "48.8584,2.2945", "-m", "Up the tower at last"],
                          ["--at", "-33.8688,151.2093,58", "-m", "Ticket & <receipt>", "--attach", pdf],
                          ["--photo", photo]] {
            let result = try home.run(["log", "--no-sync"] + arguments)
            XCTAssertEqual(result.status, 0, result.standardError)
        }
        let track = GeneratedTrack(start: Self.morning, legs: [.stop(seconds: 400), .drive(metres: 1500, speed: 8), .stop(seconds: 400)],
                                   noise: 5)
        let nmea = try home.directory.file("day.nmea", contents: track.nmea)
        XCTAssertEqual(try home.run("import", nmea.path, "--notes").status, 0)
        let digest = try home.run("digest", "--date", "2026-11-22", "--no-sync")
        XCTAssertEqual(digest.status, 0, digest.standardError)
    }

    func testNotesDigestsAndTheirResourcesPassTheDTDAndTheIndependentReader() throws {
        try logADiary()
        let outbox = try home.notesById()
        XCTAssertGreaterThanOrEqual(outbox.count, 5)
        let (file, export) = try home.export("diary.enex")
        XCTAssertEqual(export.status, 0, export.standardError)
        XCTAssertTrue(export.standardOutput.hasPrefix("exported \(outbox.count) notes (1 digest, "), export.standardOutput)
        XCTAssertEqual(export.standardError, "")
        try ENEXReaders.validateAgainstDTD(file)

        let read = try ENEXReaders.read(file)
        XCTAssertEqual(read["parser"] as? String, "enex2notion.enex_parser.iter_notes", "enex2notion's own parser read it")
        XCTAssertEqual((read["xml_errors_recovered"] as? [Any])?.count, 0, "\(read["xml_errors_recovered"] ?? "")")
        XCTAssertEqual((read["dtd"] as? [String: Any])?["valid"] as? Bool, true, "\(read["dtd"] ?? "")")
        XCTAssertEqual(read["all_en_media_match"] as? Bool, true)
        let header = try XCTUnwrap(read["header"] as? [String: Any])
        XCTAssertEqual(header["doctype_system"] as? String, "http://xml.evernote.com/pub/evernote-export4.dtd")
        XCTAssertEqual(header["application"] as? String, "enlog")
        XCTAssertEqual(header["version"] as? String, ENLogVersion.current)
        XCTAssertNotNil((header["export-date"] as? String)?.wholeMatch(of: /\d{8}T\d{6}Z/))

        let notes = try XCTUnwrap(read["notes"] as? [[String: Any]])
        XCTAssertEqual(notes.count, outbox.count)
        var resourcesSeen = 0
        for (note, id) in zip(notes, outbox.keys.sorted()) {
            let stored = try XCTUnwrap(outbox[id])
            XCTAssertEqual(note["title"] as? String, stored["title"] as? String)
            // Created when it happened (the fix's time, the digest's day), not when it was queued.
            let created = (stored["subjectDate"] as! String).replacingOccurrences(of: "-", with: "").replacingOccurrences(of: ":", with: "")
            XCTAssertEqual(note["created_raw"] as? String, created, "note \(id)")
            XCTAssertNotNil(note["created"] as? String)
            XCTAssertEqual(note["tags"] as? [String], stored["tags"] as? [String])
            XCTAssertEqual(try XCTUnwrap(note["latitude"] as? Double), try XCTUnwrap(stored["latitude"] as? Double), accuracy: 1e-9)
            XCTAssertEqual(try XCTUnwrap(note["longitude"] as? Double), try XCTUnwrap(stored["longitude"] as? Double), accuracy: 1e-9)
            let attributes = try XCTUnwrap(note["attributes"] as? [String: Any])
            let applicationData = try XCTUnwrap(attributes["application-data"] as? [String: Any])
            XCTAssertEqual(applicationData["@key"] as? String, "enlog.id")
            XCTAssertEqual(applicationData["#text"] as? String, stored["uid"] as? String)
            XCTAssertEqual((note["resources_unreferenced"] as? [Any])?.count, 0)

            let show = try home.run("queue", "show", "\(id)", "--json")
            let full = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(show.standardOutput.utf8)) as? [String: Any])
            let storedResources = try XCTUnwrap(full["resources"] as? [[String: Any]])
            let exported = try XCTUnwrap(note["resources"] as? [[String: Any]])
            XCTAssertEqual(exported.map { $0["md5"] as? String }, storedResources.map { $0["hash"] as? String }, "note \(id)")
            XCTAssertEqual(exported.map { $0["size"] as? Int }, storedResources.map { $0["size"] as? Int })
            XCTAssertEqual(exported.map { $0["mime"] as? String }, storedResources.map { $0["mime"] as? String })
            XCTAssertEqual(exported.map { $0["file_name"] as? String }, storedResources.map { $0["fileName"] as? String })
            resourcesSeen += exported.count
        }
        let mimes = notes.flatMap { ($0["resources"] as? [[String: Any]] ?? []).compactMap { $0["mime"] as? String } }
        for expected in ["image/png", "image/jpeg", "application/pdf", "application/gpx+xml"] {
            XCTAssertTrue(mimes.contains(expected), "no \(expected) among \(mimes)")
        }
        XCTAssertGreaterThanOrEqual(resourcesSeen, outbox.count + 3, "a map per note, the PDF, the photo, the GPX")

        let enml = try ENEXReaders.titlesAndContents(file)
        XCTAssertEqual(enml.count, outbox.count)
        try ENEXReaders.validateENML(enml.map(\.content), in: home.directory)
        for ((_, content), id) in zip(enml, outbox.keys.sorted()) {
            XCTAssertEqual(content, try home.storedContent(id), "note \(id)'s ENML, byte for byte")
        }
        // The photo and the maps were made where and when their note's fix was taken.
        XCTAssertGreaterThanOrEqual(try String(contentsOfFile: file, encoding: .utf8).components(separatedBy: "<timestamp>").count - 1, 4)
    }

    /// The shape Evernote's own clients give an export: every element enlog writes is one their
    /// files in `real/` have, besides three resource attributes the DTD declares and a sync
    /// uploads (a map's position, an attachment's flag).
    func testTheExportHasTheShapeOfEvernotesOwnFiles() throws {
        try logADiary()
        let (file, export) = try home.export("diary.enex")
        XCTAssertEqual(export.status, 0, export.standardError)
        let python = try requirePython()
        let script = """
            import glob, json, sys
            import xml.etree.ElementTree as ET
            def paths(f):
                found = set()
                def walk(e, prefix):
                    found.add(prefix + "/" + e.tag)
                    for c in e: walk(c, prefix + "/" + e.tag)
                walk(ET.parse(f).getroot(), "")
                return found
            real = set()
            for f in glob.glob(sys.argv[2] + "/*.enex"):
                try: real |= paths(f)
                except ET.ParseError: pass   # two v10 files are not well-formed
            json.dump(sorted(paths(sys.argv[1]) - real), sys.stdout)
            """
        let result = try Subprocess.run(URL(fileURLWithPath: python),
                                        ["-c", script, file, ENEXReaders.shared.appendingPathComponent("real").path])
        XCTAssertEqual(result.status, 0, result.standardError)
        let extra = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String])
        XCTAssertEqual(Set(extra).subtracting(["/en-export/note/resource/resource-attributes/latitude",
                                               "/en-export/note/resource/resource-attributes/longitude",
                                               "/en-export/note/resource/resource-attributes/attachment"]), [])
        let text = try String(contentsOfFile: file, encoding: .utf8)
        XCTAssertTrue(text.hasPrefix("""
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE en-export SYSTEM "http://xml.evernote.com/pub/evernote-export4.dtd">
            <en-export export-date="
            """), String(text.prefix(300)))
        XCTAssertTrue(text.hasSuffix("</en-export>\n"))
    }

    /// Selections: a day, digests only, notes only, by state; to standard output.
    func testSelectionsAndStandardOutput() throws {
        try logADiary()
        let all = try home.notesById().count
        let digests = try home.export("digests.enex", "--only", "digests")
        XCTAssertEqual(digests.result.status, 0, digests.result.standardError)
        XCTAssertTrue(digests.result.standardOutput.hasPrefix("exported 1 note (1 digest, 2 resources, "), digests.result.standardOutput)
        let notes = try home.export("notes.enex", "--only", "notes")
        XCTAssertTrue(notes.result.standardOutput.hasPrefix("exported \(all - 1) notes ("), notes.result.standardOutput)
        // The day in Berlin holds the imported notes and the digest, not the two logged now by
        // hand nor the photo taken on the 20th.
        let day = try home.export("day.enex", "--date", "2026-11-22")
        if TrackDay(containing: Date(), timeZone: TimeZone(identifier: "Europe/Berlin")!).name != "2026-11-22" {
            XCTAssertTrue(day.result.standardOutput.hasPrefix("exported \(all - 3) notes (1 digest,"), day.result.standardOutput)
        }
        let none = try home.export("synced.enex", "--state", "synced")
        XCTAssertEqual(none.result.status, 0)
        XCTAssertEqual(none.result.standardOutput, "no note to export; no file written\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: none.path))

        let piped = try home.run("export", "--enex", "-", "--only", "digests")
        XCTAssertEqual(piped.status, 0, piped.standardError)
        func withoutDate(_ text: String) -> String { text.replacing(/export-date="\d{8}T\d{6}Z"/, with: "") }
        XCTAssertEqual(withoutDate(piped.standardOutput), withoutDate(try String(contentsOfFile: digests.path, encoding: .utf8)))
        XCTAssertTrue(piped.standardError.hasPrefix("exported 1 note"), "the summary goes to stderr when stdout is the ENEX")
        for (name, arguments) in [("bad-date", ["--date", "22/11/2026"]), ("both", ["--date", "2026-11-22", "--since", "2026-11-01"]),
                                  ("only", ["--only", "all"]), ("new-synced", ["--new", "--state", "synced"])] {
            let refused = try home.run(["export", "--enex", home.directory.path(name)] + arguments)
            XCTAssertEqual(refused.status, 2, "\(arguments): \(refused.standardError)")
            XCTAssertEqual(refused.standardErrorLines.count, 1, refused.standardError)
        }
    }
}
