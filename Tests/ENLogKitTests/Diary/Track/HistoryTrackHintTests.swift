import Foundation
import XCTest

/// `history` without `--track` lists the fixes notes were written at; the imported track is
/// not lost from sight: a line on standard error says how many fixes it holds and how to see them.
final class HistoryTrackHintTests: XCTestCase {
    /// `history` without `--track` says how many imported fixes the span holds and how to see them.
    func testHistorySaysWhereTheImportedTrackIs() throws {
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        let file = try home.directory.file("walk.gpx", contents: HistoryImportTests.gpx(points: 30))
        XCTAssertEqual(try home.run("import", file.path).status, 0)
        let history = try home.run("history")
        XCTAssertEqual(history.status, 0, history.standardError)
        XCTAssertEqual(history.standardOutput, "")
        XCTAssertTrue(history.standardError.contains("30 more fixes without a note"), history.standardError)
        XCTAssertTrue(history.standardError.contains("--track"), history.standardError)
        let track = try home.run("history", "--track")
        XCTAssertEqual(track.standardOutput.split(separator: "\n").count, 30)
        XCTAssertEqual(track.standardError, "")
        let otherDay = try home.run("history", "--date", "2020-01-01")
        XCTAssertEqual(otherDay.standardError, "", "a span without such fixes says nothing")
    }
}
