import Foundation
import XCTest
@testable import Compose
@testable import Outbox
@testable import Diary

/// The stays in the digest: found with the configured stays.* settings however the digest is made.
extension DigestTests {
    /// The day of `TimelineCommandTests.csv()` imported (three stays: home, the café, a Google visit).
    func importStaysDay() throws {
        let file = try home.directory.file("stays-day.csv", contents: TimelineCommandTests.csv())
        let imported = try home.run("import", file.path)
        XCTAssertEqual(imported.status, 0, imported.standardError)
    }

    /// The items of the digest's timeline.
    static func timelineItems(_ content: String) -> [String] {
        guard let section = content.components(separatedBy: "<h3>Timeline</h3><ul>").dropFirst().first,
              let list = section.components(separatedBy: "</ul>").first else { return [] }
        return list.components(separatedBy: "<li>").dropFirst().map { $0.replacingOccurrences(of: "</li>", with: "") }
    }

    /// Offline when written, the digest is made again by sync with its route: with the configured
    /// stays.* (only stays of two hours and more: the visit alone), not the defaults (three stays).
    func testADigestSyncMakesAgainFindsItsStaysWithTheConfiguredSettings() async throws {
        try importStaysDay()
        home.extraEnvironment["ENLOG_STAYS_MIN_DURATION"] = "7200"
        try await tiles.configure("status=500")
        let digest = try home.run("digest", "--date", TimelineCommandTests.day, "--no-sync")
        XCTAssertEqual(digest.status, 0, digest.standardError)
        XCTAssertTrue(digest.standardError.contains("no route map yet ("), digest.standardError)

        try await tiles.reset()
        let sync = try home.run("sync")
        XCTAssertEqual(sync.status, 0, sync.standardError)
        let notes = try await serverNotes()
        let note = try XCTUnwrap(notes.first { ($0["title"] as? String)?.hasPrefix("Day \(TimelineCommandTests.day)") == true })
        let resources = note["resources"] as? [[String: Any]] ?? []
        XCTAssertEqual(resources.compactMap { $0["mime"] as? String }.sorted(), ["application/gpx+xml", "image/png"], "made again with its route")
        let content = note["content"] as? String ?? ""
        // The visit the only stay; the day's first move (the track's start to it) and its total around it.
        let items = Self.timelineItems(content)
        let stays = items.filter { !$0.hasPrefix("Moving: ") && !$0.contains("[") }
        XCTAssertEqual(stays.count, 1, "\(content)")
        XCTAssertTrue(stays.first?.hasSuffix("Café Rosa") == true, "\(items)")
        XCTAssertTrue(items.last?.hasPrefix("Moving: ") == true, "\(items)")
    }

    /// The digest's route map marks each of the day's stays with a ring.
    func testTheDigestsRouteMapMarksTheStays() async throws {
        try importStaysDay()
        let digest = try home.run("digest", "--date", TimelineCommandTests.day, "--no-sync", "--json")
        XCTAssertEqual(digest.status, 0, digest.standardError)
        let id = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(digest.standardOutput.utf8)) as? [String: Any])?["id"] as? Int)
        let outbox = try OutboxStore(path: home.database, access: .read)
        let resources = try await outbox.resources(of: Int64(id))
        let png = try XCTUnwrap(resources.first { $0.mime == MapImage.mimeType }?.body)

        let timeline = try home.run("timeline", "--date", TimelineCommandTests.day, "--json")
        let stays = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(timeline.standardOutput.utf8)) as? [String: Any])?["stays"] as? [[String: Any]])
        XCTAssertEqual(stays.count, 3, timeline.standardOutput)
        let places = stays.map { (latitude: $0["latitude"] as? Double ?? 0, longitude: $0["longitude"] as? Double ?? 0) }
        let day = try XCTUnwrap(TrackDay(TimelineCommandTests.day, timeZone: TimeZone(identifier: "Europe/Berlin")!))
        let fixes = try await outbox.history(from: day.start, to: day.end)
        let onImage = RouteStaysTests.projection(of: fixes.map { ($0.latitude, $0.longitude) } + places)
        // Home, where the day starts, the café on the way, and the visit, where it ends.
        XCTAssertTrue(try RouteStaysTests.ringed(png, places.map { onImage($0.latitude, $0.longitude) }))
    }
}
