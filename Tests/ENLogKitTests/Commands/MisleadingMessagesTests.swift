import Foundation
import XCTest

/// Issue 20, defect 17: each of these said something untrue about what went wrong.
final class MisleadingMessagesTests: XCTestCase {
    /// An undecodable tile gets libpng's reason (not cairo's "out of memory"), a tile without
    /// pixels is said to be one (not "larger than 4096").
    func testTilesThatCannotBeDecodedSayWhy() async throws {
        let server = try TileTestServer()
        defer { server.stop() }
        for (kind, says, never) in [("badcrc", "IHDR: CRC error", "out of memory"),
                                    ("zerowidth", "a PNG of 0×256 pixels: an image without pixels", "larger than"),
                                    ("oddsize", "a tile of 300×200 pixels; map tiles are 256×256 (or 512×512)", "out of memory")] {
            try await server.configure("garbage=\(kind)")
            let result = try server.map()
            XCTAssertEqual(result.status, 76, "\(kind): \(result.standardError)")
            XCTAssertTrue(result.standardError.contains(says), "\(kind): \(result.standardError)")
            XCTAssertFalse(result.standardError.contains(never), "\(kind): \(result.standardError)")
        }
        // High-resolution tiles, twice the side, are still drawn.
        try await server.configure("garbage=retina")
        let retina = try server.map()
        XCTAssertEqual(retina.status, 0, retina.standardError)
    }

    /// The words of a note: too long is the message's fault, not the template's; bytes that are
    /// not UTF-8 are refused alike from -m and from a file; NUL bytes are no message.
    func testMessagesThatCannotBeNotesSaySo() throws {
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        let big = try home.directory.file("big.txt", contents: String(repeating: "words ", count: 1_000_000)).path
        let long = try home.run("log", "--at", "1,2", "--no-sync", "--message-file", big)
        XCTAssertEqual(long.status, 2, long.standardError)
        XCTAssertTrue(long.standardError.contains("the message is too long for a note"), long.standardError)
        XCTAssertFalse(long.standardError.contains("template"), long.standardError)

        let invalid = home.directory.path("ff.txt")
        try Data([0x61, 0xFF]).write(to: URL(fileURLWithPath: invalid))
        let fromFile = try home.run("log", "--at", "1,2", "--no-sync", "--message-file", invalid)
        let environment = home.environment.map { "\($0)=\($1)" }
        let fromFlag = try Subprocess.run(URL(fileURLWithPath: "/usr/bin/env"),
                                          environment + ["/bin/sh", "-c", #"exec "$0" log --at 1,2 --no-sync -m "$(printf 'a\377')""#,
                                                         Subprocess.enlog.path], environment: [:])
        for (how, result) in [("--message-file", fromFile), ("-m", fromFlag)] {
            XCTAssertEqual(result.status, 66, "\(how): \(result.standardError)")
            XCTAssertTrue(result.standardError.contains("not UTF-8 text (byte 0xFF at offset 1"), "\(how): \(result.standardError)")
        }

        let nul = home.directory.path("nul.txt")
        try Data(count: 1 << 20).write(to: URL(fileURLWithPath: nul))
        let zeros = try home.run("log", "--at", "1,2", "--no-sync", "--message-file", nul)
        XCTAssertEqual(zeros.status, 66, zeros.standardError)
        XCTAssertTrue(zeros.standardError.contains("holds NUL bytes"), zeros.standardError)
        XCTAssertTrue(try home.history().isEmpty, "nothing stored")
    }

    /// GPS tags are read from TIFF and PNG photos too; any other kind is named as unreadable.
    func testPhotosOtherThanJPEGAreReadOrSaidToBeUnreadable() throws {
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        let tags = TestFiles.gpsTags(latitude: 48.85, longitude: 2.29, utc: "2026:11:20 10:00:00")
        for format in ["PNG", "TIFF"] {
            let photo = try TestFiles.photo(home.directory.path("photo.\(format.lowercased())"), tags: tags, format: format)
            let result = try home.run("log", "--photo", photo, "--no-sync")
            XCTAssertEqual(result.status, 0, "\(format): \(result.standardError)")
        }
        XCTAssertEqual(try home.history().count, 2)
        let gif = try TestFiles.image(home.directory.path("photo.gif"), format: "GIF")
        let refused = try home.run("log", "--photo", gif, "--no-sync")
        XCTAssertEqual(refused.status, 65, refused.standardError)
        XCTAssertTrue(refused.standardError.contains("is not a JPEG, TIFF or PNG image"), refused.standardError)
    }

    /// An NMEA log whose lines end in CR alone is read line by line; libxml2's limits are
    /// stated as limits, never as its option names.
    func testLineEndingsAndParserLimitsAreNotMistakenForOtherFaults() throws {
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        let nmea = FixLimitsBySourceTests.nmea(altitude: "35.0").replacingOccurrences(of: "\r\n", with: "\r")
        let log = try home.run("log", "--nmea", try home.directory.file("cr.nmea", contents: nmea).path, "--no-sync")
        XCTAssertEqual(log.status, 0, log.standardError)
        let history = try home.run("history").standardOutput
        XCTAssertTrue(history.contains("\talt 35 m\t"), "the GGA's altitude with the RMC's date, one cycle: \(history)")

        let deep = "<gpx version=\"1.1\" xmlns=\"http://www.topografix.com/GPX/1/1\">"
            + String(repeating: "<extensions>", count: 300) + String(repeating: "</extensions>", count: 300) + "</gpx>"
        let imported = try home.run("import", try home.directory.file("deep.gpx", contents: deep).path)
        XCTAssertEqual(imported.status, 65, imported.standardError)
        XCTAssertTrue(imported.standardError.contains("elements nested more than 256 deep"), imported.standardError)
        let enml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE en-note SYSTEM \"http://xml.evernote.com/pub/enml2.dtd\">\n<en-note>"
            + String(repeating: "<div>", count: 300) + String(repeating: "</div>", count: 300) + "</en-note>"
        let validated = try home.run("validate", try home.directory.file("deep.enml", contents: enml).path)
        XCTAssertEqual(validated.status, 1, validated.standardError)
        for result in [imported, validated] {
            XCTAssertFalse((result.standardOutput + result.standardError).contains("XML_PARSE_HUGE"), result.standardError)
        }
    }
}
