import Foundation
import XCTest
@testable import Capture

/// `enlog log --photo`: the fix comes from EXIF GPS tags that exiftool wrote into a JPEG Pillow
/// made, and is compared with what exiftool reads back.
final class PhotoLocationTests: XCTestCase {
    var home: EnlogHome!

    override func setUp() async throws {
        home = try EnlogHome()
        home.extraEnvironment = ["ENLOG_GEOCODING_ENABLED": "false"]
    }

    /// exiftool's view of the position, signed by its references.
    func signed(_ exif: [String: Any]) throws -> (latitude: Double, longitude: Double, altitude: Double?) {
        let latitude = try XCTUnwrap(exif["GPSLatitude"] as? Double, "\(exif)")
        let longitude = try XCTUnwrap(exif["GPSLongitude"] as? Double, "\(exif)")
        let altitude = (exif["GPSAltitude"] as? Double).map { exif["GPSAltitudeRef"] as? Int == 1 ? -$0 : $0 }
        return (exif["GPSLatitudeRef"] as? String == "S" ? -latitude : latitude,
                exif["GPSLongitudeRef"] as? String == "W" ? -longitude : longitude, altitude)
    }

    func testTheFixIsWhatExiftoolWroteInEveryHemisphere() throws {
        let places: [(Double, Double, Double)] = [(-33.856784, -70.648270, -12.5), (35.681236, 139.767125, 40.2),
                                                  (-41.2865, 174.7762, 3), (64.1466, -21.9426, 0)]
        for (index, (latitude, longitude, altitude)) in places.enumerated() {
            let photo = try TestFiles.photo(home.directory.path("IMG_\(index).jpg"),
                                            tags: TestFiles.gpsTags(latitude: latitude, longitude: longitude, altitude: altitude,
                                                                    utc: "2026:11:20 03:15:30", takenAt: "2026:11:20 12:15:32",
                                                                    offset: "+09:00", accuracy: 4.5))
            let written = try signed(try TestFiles.exif(photo))
            let result = try home.run("log", "--photo", photo, "--no-sync")
            XCTAssertEqual(result.status, 0, result.standardError)
            let fix = try XCTUnwrap(try home.history().last)
            XCTAssertEqual(try XCTUnwrap(fix["latitude"] as? Double), written.latitude, accuracy: 1e-9, "\(fix)")
            XCTAssertEqual(try XCTUnwrap(fix["longitude"] as? Double), written.longitude, accuracy: 1e-9, "\(fix)")
            XCTAssertEqual(try XCTUnwrap(fix["altitude"] as? Double), try XCTUnwrap(written.altitude), accuracy: 1e-9)
            XCTAssertEqual(fix["horizontalAccuracy"] as? Double, 4.5)
            XCTAssertEqual(fix["source"] as? String, "photo")
            XCTAssertEqual(fix["timestamp"] as? String, "2026-11-20T03:15:30Z", "the GPS time, UTC")
            XCTAssertEqual(latitude < 0, written.latitude < 0)
            XCTAssertEqual(longitude < 0, written.longitude < 0)
            XCTAssertEqual(altitude < 0, try XCTUnwrap(written.altitude) < 0, "exiftool wrote the altitude's reference")
        }
        // history's text form names the source in its fifth column.
        let lines = try home.run("history", "--utc").standardOutput.split(separator: "\n")
        XCTAssertEqual(lines.count, 4)
        XCTAssertTrue(lines.allSatisfy { $0.split(separator: "\t").last == "photo" }, "\(lines)")
        XCTAssertTrue(lines[0].hasPrefix("2026-11-20T03:15:30Z\t-33.856784,-70.648270\talt -12.5 m\t±4.5 m"), "\(lines)")
    }

    func testAPhotoWithoutGPSTagsIsRefusedAndNothingIsStored() throws {
        let bare = try TestFiles.photo(home.directory.path("bare.jpg"), tags: ["DateTimeOriginal=2026:11:20 12:15:32"])
        let result = try home.run("log", "--photo", bare, "-m", "words", "--no-sync")
        XCTAssertEqual(result.status, ExitStatusCode.badLocation.rawValue, result.standardError)
        XCTAssertEqual(result.standardErrorLines.count, 1, result.standardError)
        XCTAssertTrue(result.standardError.contains("photo \(bare) has no GPS position"), result.standardError)
        XCTAssertFalse(FileManager.default.fileExists(atPath: home.database), "nothing stored, not even an outbox")

        // A latitude without its N/S reference is no position either.
        let halfTagged = try TestFiles.photo(home.directory.path("half.jpg"), tags: ["GPSLatitude=10", "GPSLongitude=20",
                                                                                    "GPSLongitudeRef=E", "GPSDateStamp=2026:11:20",
                                                                                    "GPSTimeStamp=03:15:30"])
        let half = try home.run("log", "--photo", halfTagged, "--no-sync")
        XCTAssertEqual(half.status, ExitStatusCode.badLocation.rawValue, half.standardError)
        XCTAssertTrue(half.standardError.contains("GPSLatitudeRef is missing"), half.standardError)

        // A PNG has no EXIF: the same error, not a crash; a missing photo is a missing file.
        let png = try TestFiles.image(home.directory.path("map.png"), format: "PNG")
        XCTAssertEqual(try home.run("log", "--photo", png, "--no-sync").status, ExitStatusCode.badLocation.rawValue)
        let missing = try home.run("log", "--photo", home.directory.path("nope.jpg"), "--no-sync")
        XCTAssertEqual(missing.status, ExitStatusCode.noInput.rawValue, missing.standardError)
        XCTAssertFalse(FileManager.default.fileExists(atPath: home.database))
    }

    /// The age limit is measured at the moment the photo was taken: a fix from 2019 taken as
    /// the shutter closed is fresh; a fix ten minutes older than the photo is not.
    func testTheAgeCheckIsRelativeToThePhotosTime() throws {
        let old = try TestFiles.photo(home.directory.path("old.jpg"),
                                      tags: TestFiles.gpsTags(latitude: 48.8584, longitude: 2.2945, utc: "2019:06:01 10:00:00",
                                                              takenAt: "2019:06:01 12:00:02", offset: "+02:00"))
        let fresh = try home.run("log", "--photo", old, "--max-age", "15", "--no-sync")
        XCTAssertEqual(fresh.status, 0, fresh.standardError)

        let stale = try TestFiles.photo(home.directory.path("stale.jpg"),
                                        tags: TestFiles.gpsTags(latitude: 48.8584, longitude: 2.2945, utc: "2026:11:20 10:00:00",
                                                                takenAt: "2026:11:20 11:10:00", offset: "+01:00"))
        let refused = try home.run("log", "--photo", stale, "--max-age", "15", "--no-sync")
        XCTAssertEqual(refused.status, ExitStatusCode.badLocation.rawValue, refused.standardError)
        XCTAssertTrue(refused.standardError.contains("fix is 600.0 s old, limit 15.0 s"), refused.standardError)
        XCTAssertEqual(try home.counts().notes, 1)
        XCTAssertEqual(try home.run("log", "--photo", stale, "--max-age", "900", "--no-sync").status, 0)

        // A stated accuracy meets the limit; an unstated one is taken as it is.
        let vague = try TestFiles.photo(home.directory.path("vague.jpg"),
                                        tags: TestFiles.gpsTags(latitude: 1, longitude: 2, utc: "2026:11:20 10:00:00", accuracy: 65))
        let inaccurate = try home.run("log", "--photo", vague, "--min-accuracy", "10", "--no-sync")
        XCTAssertEqual(inaccurate.status, ExitStatusCode.badLocation.rawValue, inaccurate.standardError)
        XCTAssertTrue(inaccurate.standardError.contains("accuracy 65.0 m is worse than the 10.0 m limit"), inaccurate.standardError)
        XCTAssertEqual(try home.run("log", "--photo", vague, "--min-accuracy", "100", "--no-sync").status, 0)
        XCTAssertEqual(try home.counts().notes, 3)
    }

    /// Without GPSHPositioningError the DOP gives the accuracy (× 19 m, as gpsd counts HDOP);
    /// without a GPS time the photo's own time (with its offset) is the fix's.
    func testDOPAndThePhotosOwnTimeStandInForWhatIsMissing() throws {
        let photo = try TestFiles.photo(home.directory.path("dop.jpg"), tags: [
            "GPSLatitude=12.5", "GPSLatitudeRef=N", "GPSLongitude=45.25", "GPSLongitudeRef=W", "GPSDOP=2.5",
            "DateTimeOriginal=2026:11:20 08:30:00", "OffsetTimeOriginal=-05:00"])
        let result = try home.run("log", "--photo", photo, "--min-accuracy", "50", "--no-sync")
        XCTAssertEqual(result.status, 0, result.standardError)
        let fix = try XCTUnwrap(try home.history().last)
        XCTAssertEqual(fix["horizontalAccuracy"] as? Double, 47.5)
        XCTAssertEqual(fix["timestamp"] as? String, "2026-11-20T13:30:00Z")
        XCTAssertEqual(fix["longitude"] as? Double, -45.25)

        // Neither a GPS time nor an offset to make the camera's clock a moment: no fix time, no note.
        let timeless = try TestFiles.photo(home.directory.path("timeless.jpg"), tags: [
            "GPSLatitude=12.5", "GPSLatitudeRef=N", "GPSLongitude=45.25", "GPSLongitudeRef=W",
            "DateTimeOriginal=2026:11:20 08:30:00"])
        let refused = try home.run("log", "--photo", timeless, "--no-sync")
        XCTAssertEqual(refused.status, ExitStatusCode.badLocation.rawValue, refused.standardError)
        XCTAssertTrue(refused.standardError.contains("no time"), refused.standardError)
        XCTAssertEqual(try home.counts().notes, 1)
    }

    func testSeveralPhotosMakeOneNoteEachOrOneNoteAtTheFirstPlace() throws {
        let first = try TestFiles.photo(home.directory.path("a.jpg"), tags: TestFiles.gpsTags(latitude: 35.1, longitude: 139.1, utc: "2026:11:20 03:00:00"))
        let second = try TestFiles.photo(home.directory.path("b.jpg"), tags: TestFiles.gpsTags(latitude: 35.2, longitude: 139.2, utc: "2026:11:20 04:00:00"), width: 80)
        let each = try home.run("log", "--photo", first, "--photo", second, "-m", "Two places", "--no-sync")
        XCTAssertEqual(each.status, 0, each.standardError)
        XCTAssertEqual(each.standardOutput.split(separator: "\n").count, 2, each.standardOutput)
        for (id, latitude) in [(1, 35.1), (2, 35.2)] {
            let note = try home.show(id)
            XCTAssertEqual(note["latitude"] as? Double, latitude)
            let resources = note["resources"] as? [[String: Any]] ?? []
            XCTAssertEqual(resources.map { $0["kind"] as? String }, ["attachment"])
            XCTAssertEqual(resources.first?["mime"] as? String, "image/jpeg")
            XCTAssertEqual(resources.first?["latitude"] as? Double, latitude, "the photo's resource carries its place")
            XCTAssertTrue((note["content"] as? String ?? "").contains("<div>Two places</div>"))
        }

        let one = try home.run("log", "--photo", first, "--photo", second, "--one-note", "--no-sync", "--json")
        XCTAssertEqual(one.status, 0, one.standardError)
        let note = try home.show(3)
        XCTAssertEqual(note["latitude"] as? Double, 35.1, "the first photo's place")
        let resources = note["resources"] as? [[String: Any]] ?? []
        XCTAssertEqual(resources.compactMap { $0["fileName"] as? String }, ["a.jpg", "b.jpg"])
        XCTAssertEqual(resources.compactMap { $0["width"] as? Int }, [64, 80])
        let content = note["content"] as? String ?? ""
        for resource in resources {
            XCTAssertTrue(content.contains("<en-media type=\"image/jpeg\" hash=\"\(resource["hash"] as? String ?? "?")\"/>"), content)
        }
        // One bad photo among good ones: nothing at all is stored.
        let bare = try TestFiles.photo(home.directory.path("bare.jpg"), tags: [])
        XCTAssertEqual(try home.run("log", "--photo", first, "--photo", bare, "--no-sync").status, ExitStatusCode.badLocation.rawValue)
        XCTAssertEqual(try home.counts().notes, 3)

        let usage = try home.run("log", "--photo", first, "--at", "1,2", "--no-sync")
        XCTAssertEqual(usage.status, ExitStatusCode.usage.rawValue, usage.standardError)
        XCTAssertEqual(try home.run("log", "--at", "1,2", "--one-note", "--no-sync").status, ExitStatusCode.usage.rawValue)
    }

    /// The camera's text in a GPS reference tag (a fuzzer's JPEG holds a line break there) stays
    /// on the error's one line, as does every other payload of a photo error.
    func testTagTextQuotedInAnErrorStaysOnOneLine() throws {
        let photo = [UInt8](try Data(contentsOf: Fixtures.root.appendingPathComponent("fuzz/exif/latitude-reference-with-line-break.jpg")))
        XCTAssertThrowsError(try PhotoPosition(photo: photo, path: "fuzz.jpg")) { error in
            guard case .badGPS = error as? PhotoError else { return XCTFail("\(error)") }
            XCTAssertFalse((error as? PhotoError)?.reason.contains(where: \.isNewline) ?? true, "\(error)")
        }
        for error in [PhotoError.noGPS(path: "a\nb"), .badGPS(path: "a\nb", detail: "c\r\nd")] {
            XCTAssertFalse(error.reason.contains(where: \.isNewline), error.reason)
        }
    }
}
