import Foundation
import XCTest
@testable import Support
@testable import Capture

/// Counts and articles in messages: "1 point", "an integer", never "1 points" or "a integer".
final class GrammarTests: XCTestCase {
    func testMessagesCountAndArticleInGoodEnglish() throws {
        let home = try EnlogHome()
        let gpx = try home.directory.file("one.gpx", contents: """
            <gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>\
            <trkpt lat="1" lon="2"><time>2026-11-20T10:00:00Z</time></trkpt></trkseg></trk></gpx>
            """)
        let imported = try home.run("import", gpx.path)
        XCTAssertTrue(imported.standardOutput.hasPrefix("read 1 point from GPX"), imported.standardOutput)

        let at = try home.run("log", "--at", "48.85;2.29", "--no-sync")
        XCTAssertTrue(at.standardError.contains("found 1 part"), at.standardError)
        XCTAssertFalse(at.standardError.contains("1 parts"), at.standardError)

        try home.writeConfig("[map]\nwidth = \"wide\"\n")
        let config = try home.run("config", "show")
        XCTAssertTrue(config.standardError.contains("must be an integer"), config.standardError)

        for (count, noun, plural, expected) in [(1, "fix", "fixes", "1 fix"), (2, "fix", "fixes", "2 fixes"), (0, "note", nil, "0 notes")] {
            XCTAssertEqual(counted(count, noun, plural: plural), expected)
        }
        XCTAssertEqual(["integer", "number", "boolean", "string"].map(withArticle), ["an integer", "a number", "a boolean", "a string"])
    }
}
