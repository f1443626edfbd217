import Foundation
import XCTest
@testable import Diary

/// A Google Takeout download as people have it, made at test time from the real exports of
/// `../shared/location-history-real/`: Records.json, a Semantic month, a `Timeline Edits.json` of
/// place aggregates only (all Takeout holds since 2025), `Settings.json` and `archive_browser.html`.
/// The files that hold no points by nature are named "nothing to import" and fail nothing; the
/// zip is summed up file by file exactly as the same files in a folder; a bad member is one line
/// on standard error, once, and `--json` still holds the whole summary.
final class TakeoutImportTests: XCTestCase {
    static let real = Fixtures.repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared/location-history-real")

    /// Real file → its place in a Takeout download.
    static let members: [(real: String, member: String)] = [
        ("records-json--hossain-khan-kgeo-timeline--records.json", "Takeout/Location History (Timeline)/Records.json"),
        ("semantic-history--hossain-khan-kgeo-timeline--semantic-2021-august.json",
         "Takeout/Location History (Timeline)/Semantic Location History/2021/2021_AUGUST.json"),
        ("timeline-edits--hossain-khan-kgeo-timeline--timeline-edits.json", "Takeout/Location History (Timeline)/Timeline Edits.json"),
        ("settings-json--hossain-khan-kgeo-timeline--settings.json", "Takeout/Location History (Timeline)/Settings.json"),
    ]

    static let archiveBrowser = """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8"><title>Archive Overview</title></head>
        <body><h1>Your Google data archive</h1><p>Location History (Timeline): 4 files</p></body></html>

        """

    /// The Takeout laid out in `folder`, with `extra` members (name → text) beside the real ones.
    func lay(out folder: String, extra: [String: String] = [:]) throws {
        for (real, member) in Self.members {
            let target = folder + "/" + member
            try FileManager.default.createDirectory(atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: Self.real.appendingPathComponent(real).path, toPath: target)
        }
        for (member, text) in extra.merging(["Takeout/archive_browser.html": Self.archiveBrowser], uniquingKeysWith: { $1 }) {
            let target = folder + "/" + member
            try FileManager.default.createDirectory(atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try text.write(toFile: target, atomically: true, encoding: .utf8)
        }
    }

    /// `folder` zipped as Takeout zips it (its members under their paths in the folder).
    func zip(_ folder: String, to zip: String) throws {
        let python = try PythonServer.interpreter(stdlibOnly: true)
        let made = try Subprocess.run(URL(fileURLWithPath: python), ["-c", """
            import os, sys, zipfile
            root, target = sys.argv[1], sys.argv[2]
            with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as z:
                for base, dirs, files in sorted(os.walk(root)):
                    dirs.sort()
                    for name in sorted(files):
                        path = os.path.join(base, name)
                        z.write(path, os.path.relpath(path, root))
            """, folder, zip])
        XCTAssertEqual(made.status, 0, made.standardError)
    }

    func json(_ result: ProcessResult) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any], result.standardOutput)
    }

    /// Each file's entry without the folder or archive it was in, for comparing a zip with a folder.
    func entries(_ summary: [String: Any], under prefix: String) throws -> [String: NSDictionary] {
        let files = try XCTUnwrap(summary["files"] as? [[String: Any]])
        return Dictionary(uniqueKeysWithValues: files.map { file in
            var entry = file
            let path = entry.removeValue(forKey: "path") as? String ?? ""
            return (String(path.dropFirst(prefix.count)), entry as NSDictionary)
        })
    }

    func testATakeoutZipImportsWhatItHoldsAndNamesWhatHoldsNothing() throws {
        let home = try EnlogHome()
        let folder = home.directory.path("takeout")
        try lay(out: folder)
        let archive = home.directory.path("takeout-20250101T000000Z-001.zip")
        try zip(folder, to: archive)

        let result = try home.run("import", archive)
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertEqual(result.standardError, "", "nothing failed, nothing to say on standard error")
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        let prefix = archive + "!Takeout/"
        for (member, holds) in [("Location History (Timeline)/Timeline Edits.json", "no raw-signal positions"),
                                ("Location History (Timeline)/Settings.json", "Settings.json"),
                                ("archive_browser.html", "web page")] {
            XCTAssertTrue(lines.contains { $0.hasPrefix(prefix + member + ": nothing to import: ") && $0.contains(holds) },
                          "\(member): \(result.standardOutput)")
        }
        XCTAssertTrue(lines.contains { $0.hasPrefix(prefix + "Location History (Timeline)/Records.json: read ") }, result.standardOutput)
        XCTAssertTrue(lines.contains { $0.hasPrefix(prefix + "Location History (Timeline)/Semantic Location History/2021/2021_AUGUST.json: read ") },
                      result.standardOutput)

        // --json: the summary, file by file, the same as the same files in a folder.
        let again = try home.run("import", archive, "--json")
        XCTAssertEqual(again.status, 0, again.standardError)
        let fromZip = try json(again)
        XCTAssertEqual(fromZip["nothingToImport"] as? Int, 3, again.standardOutput)
        XCTAssertEqual((fromZip["errors"] as? [Any])?.count, 0)
        XCTAssertEqual((fromZip["files"] as? [Any])?.count, 5)
        XCTAssertEqual(fromZip["added"] as? Int, 0, "all there after the first run")

        let other = try EnlogHome()
        let fromFolder = try json(try other.run("import", folder, "--json"))
        let first = try json(try EnlogHome().run("import", archive, "--json"))
        XCTAssertEqual(try entries(first, under: archive + "!"), try entries(fromFolder, under: folder + "/"))
        for key in ["read", "added", "format", "nothingToImport", "passedOver"] {
            XCTAssertEqual(first[key] as? NSObject, fromFolder[key] as? NSObject, key)
        }
        XCTAssertGreaterThan(first["read"] as? Int ?? 0, 0)
        XCTAssertGreaterThan((first["visits"] as? [String: Any])?["read"] as? Int ?? 0, 0)
    }

    /// A member cut short fails alone: one line on standard error naming it, exit 65, and the
    /// summary of the rest on standard output, in JSON too.
    func testABadMemberFailsOnceAndTheSummaryStays() throws {
        let home = try EnlogHome()
        let folder = home.directory.path("takeout")
        try lay(out: folder, extra: ["Takeout/Fit/ride.gpx": HistoryImportTests.gpx(points: 5, cutShort: true)])
        let archive = home.directory.path("takeout.zip")
        try zip(folder, to: archive)

        let result = try home.run("import", archive, "--json")
        XCTAssertEqual(result.status, ExitStatusCode.badLocation.rawValue, result.standardError)
        XCTAssertEqual(result.standardErrorLines.count, 1, result.standardError)
        XCTAssertTrue(result.standardError.contains(archive + "!Takeout/Fit/ride.gpx line "), result.standardError)
        let summary = try json(result)
        let errors = try XCTUnwrap(summary["errors"] as? [[String: Any]])
        XCTAssertEqual(errors.count, 1)
        XCTAssertEqual(errors.first?["path"] as? String, archive + "!Takeout/Fit/ride.gpx")
        XCTAssertEqual(errors.first?["exitCode"] as? Int, 65)
        XCTAssertEqual((summary["files"] as? [Any])?.count, 5)
        XCTAssertGreaterThan(summary["added"] as? Int ?? 0, 0)

        let plain = try EnlogHome().run("import", archive)
        XCTAssertEqual(plain.status, ExitStatusCode.badLocation.rawValue)
        XCTAssertEqual(plain.standardErrorLines.count, 1, plain.standardError)
        XCTAssertEqual(plain.standardOutput.split(separator: "\n").count, 5, plain.standardOutput)
    }

    /// Named on their own, the files that hold no points are no failure either.
    func testAFileHoldingNoPointsAloneIsNothingToImport() throws {
        let home = try EnlogHome()
        let html = try home.directory.file("archive_browser.html", contents: Self.archiveBrowser)
        for path in [html.path, Self.real.appendingPathComponent(Self.members[2].real).path,
                     Self.real.appendingPathComponent(Self.members[3].real).path] {
            let result = try home.run("import", path)
            XCTAssertEqual(result.status, 0, "\(path): \(result.standardError)")
            XCTAssertEqual(result.standardError, "", path)
            XCTAssertTrue(result.standardOutput.hasPrefix("nothing to import: "), "\(path): \(result.standardOutput)")
        }
    }
}
