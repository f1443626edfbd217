import Foundation
import Synchronization
import Testing
@testable import Support
@testable import Configuration
@testable import Network
@testable import Capture
@testable import Outbox
@testable import Diary
@testable import Watch
@testable import Serve

/// `enlog serve` with `watch.digest`: each device's digest of its day (`DayDigest` of its points),
/// at the day's end by the clock (and at start for a day that ended while nothing ran), or when
/// the device sends a point of a later day; never the whole history's.
@Suite("serve: each device's digest at the end of its day")
struct PhoneDiaryDigestTests {
    /// 2026-11-18 09:00 UTC.
    static let eighteenth = Date(timeIntervalSince1970: 1_794_992_400)

    /// What the diary reported, collected across tasks.
    final class Reports: Sendable {
        private let list = Mutex<[WatchReport]>([])
        func add(_ report: WatchReport) { list.withLock { $0.append(report) } }
        var all: [WatchReport] { list.withLock { $0 } }
        func digests(written: Bool = true) -> [WatchReport] {
            all.filter { $0.event == "digest" && $0.fields["written"] == .bool(written) }
        }

        /// Waits (generously: a loaded machine) until `done` holds.
        func wait(_ done: (Reports) -> Bool) async -> Bool {
            for _ in 0..<1200 {
                if done(self) { return true }
                try? await Task.sleep(for: .milliseconds(100))
            }
            return done(self)
        }
    }

    struct Setup {
        let home: EnlogHome
        let outbox: OutboxStore
        let context: RunContext
    }

    static func setup() throws -> Setup {
        let home = try EnlogHome()
        let environment = ["HOME": home.directory.url.path, "ENLOG_DB": home.database, "ENLOG_WATCH_DIGEST": "true",
                           "ENLOG_NOTE_TIME_ZONE": "UTC", "ENLOG_MAP_STYLE": "none", "ENLOG_GEOCODING_ENABLED": "false"]
        let paths = XDGPaths(environment: environment)
        let config = try Config(filePath: paths.configFile, fileContents: nil, paths: paths, environment: environment)
        let context = RunContext(config: config)
        return Setup(home: home, outbox: try context.outbox(), context: context)
    }

    static func points(_ latitude: Double, from start: Date, minutes: Int) throws -> [Fix] {
        try (0..<minutes).map { minute in
            try Fix(latitude: latitude, longitude: 13.4, horizontalAccuracy: 5, timestamp: start.addingTimeInterval(Double(60 * minute)), source: .phone)
        }
    }

    static func diary(_ setup: Setup, now: Date, reports: Reports) -> PhoneDiary {
        PhoneDiary(outbox: setup.outbox, context: setup.context, dependencies: PhoneDiary.Dependencies(
            account: { nil }, report: { reports.add($0) },
            // No network changes here: the digests are the subject.
            networkChanges: { AsyncStream { $0.finish() } }, now: { now }))
    }

    /// Just past midnight after the 18th: one digest for each device that sent points that day,
    /// none for a device without, none of the whole history (which a fix logged by hand is in).
    @Test func atTheDaysEndEachDeviceWithPointsGetsItsOwnDigest() async throws {
        let setup = try Self.setup()
        _ = try await setup.outbox.storePhonePoints(try Self.points(52.51, from: Self.eighteenth, minutes: 30), device: "a")
        _ = try await setup.outbox.storePhonePoints(try Self.points(48.87, from: Self.eighteenth, minutes: 20), device: "b")
        #expect(try await setup.outbox.addDevice(DeviceRecord(name: "c", secretHash: [1], createdAt: Self.eighteenth)))
        // A fix of no device that day (gpsd's, an import's): the whole history's, not serve's.
        _ = try await setup.outbox.importFixes([try Fix(latitude: 50.11, longitude: 8.68, timestamp: Self.eighteenth, source: .gpx)])

        let reports = Reports()
        let diary = Self.diary(setup, now: Self.eighteenth.addingTimeInterval(15 * 3600 + 120), reports: reports)   // 2026-11-19 00:02
        #expect(await reports.wait { $0.digests().count == 2 }, "\(reports.all.map(\.message))")
        await diary.finish()
        #expect(Set(reports.digests().compactMap { if case .string(let name) = $0.fields["device"] { name } else { nil } }) == ["a", "b"])
        let a = try #require(try await setup.outbox.digestNote(day: "2026-11-18", device: "a"))
        let b = try #require(try await setup.outbox.digestNote(day: "2026-11-18", device: "b"))
        #expect(try await setup.outbox.note(id: a).title.hasPrefix("Day 2026-11-18 (a): "))
        #expect(try await setup.outbox.note(id: b).title.hasPrefix("Day 2026-11-18 (b): "))
        #expect(try await setup.outbox.digestNote(day: "2026-11-18") == nil, "serve writes no whole-history digest")
        #expect(try await setup.outbox.digestNote(day: "2026-11-18", device: "c") == nil, "c sent nothing")

        // Started again the same night: written ones are not written again.
        let again = Reports()
        let restarted = Self.diary(setup, now: Self.eighteenth.addingTimeInterval(15 * 3600 + 600), reports: again)
        #expect(await again.wait { $0.digests(written: false).count == 2 }, "\(again.all.map(\.message))")
        await restarted.finish()
        #expect(again.digests().isEmpty)
    }

    /// A phone offline over midnight: its day is over when it sends a point of a later day,
    /// also right after a restart (its last point before is read from the history), and each
    /// day of a batch that spans several gets its digest.
    @Test func aPointOfALaterDayEndsTheDevicesDay() async throws {
        let setup = try Self.setup()
        _ = try await setup.outbox.storePhonePoints(try Self.points(52.51, from: Self.eighteenth, minutes: 30), device: "a")
        let reports = Reports()
        // 2026-11-21 12:00: the 20th, which the clock says is over, has no points at start.
        let diary = Self.diary(setup, now: Self.eighteenth.addingTimeInterval(3 * 86_400 + 3 * 3600), reports: reports)

        // A batch with the 19th's points and one of the 21st: the 18th (before the batch, in
        // the history) and the 19th are over; the 21st is not.
        let batch = try Self.points(52.52, from: Self.eighteenth.addingTimeInterval(86_400), minutes: 10)
            + [try Fix(latitude: 52.53, longitude: 13.4, horizontalAccuracy: 5, timestamp: Self.eighteenth.addingTimeInterval(3 * 86_400), source: .phone)]
        _ = try await setup.outbox.storePhonePoints(batch, device: "a")
        diary.pointsCommitted()
        #expect(await reports.wait { $0.digests().count == 2 }, "\(reports.all.map(\.message))")
        await diary.finish()
        #expect(try await setup.outbox.digestNote(day: "2026-11-18", device: "a") != nil)
        #expect(try await setup.outbox.digestNote(day: "2026-11-19", device: "a") != nil)
        #expect(try await setup.outbox.digestNote(day: "2026-11-21", device: "a") == nil, "the 21st goes on")
        #expect(reports.digests().count == 2)
    }
}
