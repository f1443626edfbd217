import Foundation
import GRDB
import Testing
@testable import Capture
@testable import Outbox

/// `enlog digest --device NAME`: the day's digest from one phone's points alone, remembered per
/// (day, device) apart from the whole history's.
@Suite("digest --device")
struct DigestDeviceTests {
    /// 2026-11-18 09:00 UTC.
    static let nine = Date(timeIntervalSince1970: 1_794_992_400)

    /// Points a minute apart at one place, from `start` for `minutes`.
    static func stay(_ latitude: Double, _ longitude: Double, from start: Date, minutes: Int) throws -> [Fix] {
        try (0..<minutes).map { minute in
            try Fix(latitude: latitude, longitude: longitude, horizontalAccuracy: 5, timestamp: start.addingTimeInterval(Double(60 * minute)), source: .phone)
        }
    }

    /// Phone a: 40 min at 52.5123 N, a 3 km move north-east, 40 min at 52.5380 N; phone b the
    /// same hours at 48.8765 N; one fix logged by hand (no device) at 50.1109 N.
    static func home() async throws -> EnlogHome {
        let home = try EnlogHome()
        let outbox = try OutboxStore(path: home.database)
        let a = try stay(52.512345, 13.401234, from: nine, minutes: 40)
            + (1...10).map { step in
                try Fix(latitude: 52.512345 + 0.00257 * Double(step), longitude: 13.401234 + 0.0025 * Double(step), horizontalAccuracy: 5,
                        timestamp: nine.addingTimeInterval(Double(2400 + 60 * step)), source: .phone)
            }
            + stay(52.538045, 13.426234, from: nine.addingTimeInterval(3060), minutes: 40)
        #expect(try await outbox.storePhonePoints(a, device: "a").added == a.count)
        let b = try stay(48.876543, 2.351234, from: nine, minutes: 100)
        #expect(try await outbox.storePhonePoints(b, device: "b").added == b.count)
        let logged = try home.run("log", "--at", "50.110922,8.682127", "--no-geocode", "--no-sync")
        #expect(logged.status == 0, "\(logged.standardError)")
        return home
    }

    static func note(_ result: ProcessResult) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
    }

    static func gpx(_ home: EnlogHome, note id: Int) async throws -> String {
        let resources = try await OutboxStore(path: home.database, access: .read).resources(of: Int64(id))
        let track = try #require(resources.first { $0.mime == "application/gpx+xml" })
        return String(decoding: track.body, as: UTF8.self)
    }

    @Test func aDevicesDigestTellsItsPointsAloneAndStandsBesideTheWholeHistorysDigest() async throws {
        let home = try await Self.home()
        let onlyA = try home.run("digest", "--date", "2026-11-18", "--device", "a", "--no-sync", "--json")
        #expect(onlyA.status == 0, "\(onlyA.standardError)")
        let noteA = try Self.note(onlyA)
        let title = try #require(noteA["title"] as? String)
        #expect(title.hasPrefix("Day 2026-11-18 (a): 3."), "the device in the title, its 3 km move: \(title)")
        let shown = try home.run("queue", "show", "\(noteA["id"] as? Int ?? -1)")
        #expect(shown.status == 0, "\(shown.standardError)")
        let content = shown.standardOutput
        #expect(content.contains("From the points of a alone."), "\(content)")
        // Its timeline: a's two stays, none of b's or the logged fix.
        #expect(content.contains("52.51") && content.contains("52.53"), "\(content)")
        #expect(!content.contains("48.87") && !content.contains("50.11"), "\(content)")
        let track = try await Self.gpx(home, note: try #require(noteA["id"] as? Int))
        #expect(track.components(separatedBy: "<trkpt").count - 1 == 90, "a's 90 points")
        #expect(track.contains("enlog 2026-11-18 a") && !track.contains("48.87"), "\(track.prefix(400))")

        // The whole history's digest of the day is not blocked by a's, nor a's by it.
        let whole = try home.run("digest", "--date", "2026-11-18", "--no-sync", "--json")
        #expect(whole.status == 0, "\(whole.standardError)")
        let wholeNote = try Self.note(whole)
        #expect((wholeNote["title"] as? String)?.hasPrefix("Day 2026-11-18: ") == true, "\(wholeNote)")
        let wholeTrack = try await Self.gpx(home, note: try #require(wholeNote["id"] as? Int))
        #expect(wholeTrack.components(separatedBy: "<trkpt").count - 1 == 190, "a's and b's points (the fix logged by hand is today's)")
        let onlyB = try home.run("digest", "--date", "2026-11-18", "--device", "b", "--no-sync", "--json")
        #expect(onlyB.status == 0, "\(onlyB.standardError)")
        let noteB = try Self.note(onlyB)
        #expect((noteB["title"] as? String)?.hasPrefix("Day 2026-11-18 (b): ") == true, "\(noteB)")
        let contentB = try home.run("queue", "show", "\(noteB["id"] as? Int ?? -1)").standardOutput
        #expect(contentB.contains("48.87") && !contentB.contains("52.51"), "\(contentB)")

        // Each once.
        let again = try home.run("digest", "--date", "2026-11-18", "--device", "a", "--no-sync")
        #expect(again.status == 0)
        #expect(again.standardError == "enlog: 2026-11-18 has a's digest already: note \(noteA["id"] as? Int ?? -1)\n")
        let wholeAgain = try home.run("digest", "--date", "2026-11-18", "--no-sync")
        #expect(wholeAgain.standardError == "enlog: 2026-11-18 has its digest already: note \(wholeNote["id"] as? Int ?? -1)\n")
        // The logged note and three digests.
        #expect(try home.notes().count == 4)
        // A digest on a's last point is no arrival: a's next note is measured from its last note's place.
        let anchor = try await OutboxStore(path: home.database, access: .read).latestNotedFix(device: "a")
        #expect(anchor == nil, "a has no note of its own")
    }

    @Test func aNameThatIsNoDeviceIsAUsageErrorAndADayWithoutItsPointsIs66() async throws {
        let home = try await Self.home()
        for command in [["digest", "--date", "2026-11-18"], ["digest", "--since", "2026-11-17", "--until", "2026-11-19"],
                        ["timeline", "--date", "2026-11-18"], ["places", "list"]] {
            let result = try home.run(command + ["--device", "phone"])
            #expect(result.status == 2, "\(command): \(result.standardError)")
            #expect(result.standardErrorLines == ["enlog: error: no device named phone (`enlog devices list` names them)"], "\(command)")
        }
        #expect(try home.notes().count == 1, "nothing written")
        let otherDay = try home.run("digest", "--date", "2026-11-19", "--device", "b", "--no-sync")
        #expect(otherDay.status == 66, "\(otherDay.standardError)")
        #expect(otherDay.standardError.contains("the history has no fix of b on 2026-11-19"), "\(otherDay.standardError)")
        // A device known by its points alone (removed, or an import's) is one.
        let backfill = try home.run("digest", "--since", "2026-11-17", "--until", "2026-11-20", "--device", "b", "--no-sync", "--json")
        #expect(backfill.status == 0, "\(backfill.standardError)")
        let days = try #require(JSONSerialization.jsonObject(with: Data(backfill.standardOutput.utf8)) as? [[String: Any]])
        #expect(days.map { $0["outcome"] as? String } == ["noFixes", "written", "noFixes"], "\(days)")
    }

    /// An outbox from before devices had digests: its digests are the whole history's, and a
    /// device's digest of the same day can still be written.
    @Test func anOlderOutboxsDigestsAreTheWholeHistorys() async throws {
        let home = try EnlogHome()
        try FileManager.default.createDirectory(atPath: home.directory.path("data"), withIntermediateDirectories: true)
        let queue = try DatabaseQueue(path: home.database)
        try OutboxSchema.migrator.migrate(queue, upTo: OutboxSchema.devicesMigration.identifier)
        try await queue.write { db in
            try db.execute(sql: """
                INSERT INTO fix (id, latitude, longitude, timestamp, source, createdAt, device)
                VALUES (1, 52.5, 13.4, '2026-11-18 09:00:00.000', 'phone', '2026-11-18 09:00:00.000', 'a')
                """)
            try db.execute(sql: """
                INSERT INTO note (id, uid, fixId, title, content, createdAt, updatedAt)
                VALUES (7, 'u7', 1, 'Day 2026-11-18', '<en-note/>', '2026-11-19 00:01:00.000', '2026-11-19 00:01:00.000')
                """)
            try db.execute(sql: "INSERT INTO digest (day, noteId, createdAt) VALUES ('2026-11-18', 7, '2026-11-19 00:01:00.000')")
        }
        try queue.close()
        let outbox = try OutboxStore(path: home.database)
        #expect(try await outbox.digestNote(day: "2026-11-18") == 7)
        #expect(try await outbox.digestNote(day: "2026-11-18", device: "a") == nil)
        #expect(try await outbox.digestKey(of: 7)?.device == nil)
        let written = try home.run("digest", "--date", "2026-11-18", "--device", "a", "--no-sync", "--json")
        #expect(written.status == 0, "\(written.standardError)")
        let id = try #require(try Self.note(written)["id"] as? Int)
        #expect(try await outbox.digestKey(of: Int64(id))?.device == "a")
        #expect(try await outbox.digestKey(of: Int64(id))?.day == "2026-11-18")
        // Dropping the note frees its (day, device) again.
        #expect(try home.run("queue", "drop", "\(id)", "--yes").status == 0)
        #expect(try await outbox.digestNote(day: "2026-11-18", device: "a") == nil)
        #expect(try await outbox.digestNote(day: "2026-11-18") == 7)
    }
}
