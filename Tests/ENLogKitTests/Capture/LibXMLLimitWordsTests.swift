import Foundation
import XCTest
@testable import Capture

/// libxml2's limits in enlog's words (issue 32, class 9): never "internal error: …" (enlog's own
/// words for a bug of its own, exit 70), never its option names.
final class LibXMLLimitWordsTests: XCTestCase {
    func testLibXMLsLimitMessagesAreTranslated() {
        let cases: [(String, String)] = [
            ("internal error: Huge input lookup\n", "a tag, text or attribute longer than libxml2's limit of 10,000,000 bytes (a tag with too many attributes?)"),
            ("Memory allocation failed : xmlSAX2Characters: huge text node\n", "a text longer than libxml2's limit of 10,000,000 bytes"),
            ("Excessive depth in document: 256 use XML_PARSE_HUGE option\n", "elements nested more than 256 deep (libxml2's limit)"),
            ("Name too long use XML_PARSE_HUGE option\n", "Name too long (over libxml2's limit)"),
            ("AttValue length too long\n", "AttValue length too long (over libxml2's limit)"),
            ("internal error: xmlParseStartTag: problem parsing attributes\n", "libxml2 could not go on: xmlParseStartTag: problem parsing attributes"),
            ("Opening and ending tag mismatch: a line 1 and b\n", "Opening and ending tag mismatch: a line 1 and b"),
        ]
        for (raw, words) in cases {
            XCTAssertEqual(LibXMLMessage.text(raw), words, raw)
            XCTAssertFalse(LibXMLMessage.text(raw).contains("internal error"), raw)
            XCTAssertFalse(LibXMLMessage.text(raw).contains("XML_PARSE_HUGE"), raw)
        }
    }

    /// A start tag of 11 MB (11,000 attributes of 1 KB): libxml2 stops at its lookup limit, in
    /// the GPX reader (push parser) and in the ENML validator alike; both say it as a limit.
    func testATagOverLibXMLsLookupLimitIsSaidToBeOne() throws {
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        var attributes = ""
        attributes.reserveCapacity(11_200_000)
        let value = String(repeating: "v", count: 1000)
        for index in 0..<11_000 { attributes += " a\(index)=\"\(value)\"" }
        let gpx = "<?xml version=\"1.0\"?>\n<gpx version=\"1.1\" creator=\"t\" xmlns=\"http://www.topografix.com/GPX/1/1\"><trk><trkseg>\n"
            + "<trkpt lat=\"48.1\" lon=\"11.5\"\(attributes)><time>2024-06-15T09:36:40Z</time></trkpt>\n</trkseg></trk></gpx>\n"
        let imported = try home.run("import", try home.directory.file("wide.gpx", contents: gpx).path)
        let enml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE en-note SYSTEM \"http://xml.evernote.com/pub/enml2.dtd\">\n"
            + "<en-note><div\(attributes)>x</div></en-note>"
        let validated = try home.run("validate", try home.directory.file("wide.enml", contents: enml).path)
        XCTAssertEqual(imported.status, 65, imported.standardError)
        XCTAssertEqual(validated.status, 1, validated.standardError + validated.standardOutput)
        for result in [imported, validated] {
            let words = result.standardOutput + result.standardError
            XCTAssertTrue(words.contains("longer than libxml2's limit of 10,000,000 bytes"), words.prefix(2000).description)
            XCTAssertFalse(words.contains("internal error") || words.contains("Huge input lookup"), words.prefix(2000).description)
        }
    }
}
