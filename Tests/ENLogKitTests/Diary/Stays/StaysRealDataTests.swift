import Foundation
import Testing
@testable import Capture
@testable import Outbox
@testable import Diary

/// The stays found in the fixes of every real export of `../shared/location-history-real/`
/// (`enlog import` into a fresh outbox, then the detector over all its fixes): never two stays
/// over the same time, never a stay or a move between two that ends before it starts. Where the
/// export carries its own visits (Google's Semantic Location History), how many of them the
/// fixes alone find is written to standard output (the lead's figure for the report).
@Suite("stays in the fixes of every real export")
struct StaysRealDataTests {
    static var entries: [ImportRealDataTests.Entry] { ImportRealDataTests.entries }

    @Test(arguments: entries)
    func staysNeitherOverlapNorRunBackwards(_ entry: ImportRealDataTests.Entry) async throws {
        let home = try EnlogHome()
        let result = try home.run("import", entry.path)
        guard result.status == 0 else { return }   // refused: ImportRealDataTests checks how
        let outbox = try OutboxStore(path: home.database)
        let far = Date(timeIntervalSince1970: -2_208_988_800), future = Date(timeIntervalSince1970: 4_102_444_800)
        let points = try await outbox.stayFixes(from: far, to: future).map {
            StayDetector.Point(latitude: $0.latitude, longitude: $0.longitude, accuracy: $0.accuracy, time: $0.time,
                               anchor: $0.typed)
        }
        let stays = StayDetector().stays(in: points)
        for stay in stays {
            #expect(stay.arrival <= stay.departure, "\(entry.file): \(stay)")
        }
        for (earlier, later) in zip(stays, stays.dropFirst()) {
            #expect(earlier.departure <= later.arrival, "\(entry.file): a move from \(earlier) to \(later) runs backwards")
        }
        let visits = try await outbox.stayVisits(from: far, to: future)
        if !visits.isEmpty, !points.isEmpty {
            // A visit is found when a stay overlaps half of it or more, centre within 250 m
            // (Google's visit centre is the place's, the fixes' is where the phone was).
            func finds(_ stay: StayDetector.Stay, _ visit: OutboxStore.StayVisit) -> Bool {
                let overlap: Double = min(stay.departure, visit.end) - max(stay.arrival, visit.start)
                let half: Double = (visit.end - visit.start) / 2
                return overlap >= half && Fix.metres(stay.latitude, stay.longitude, visit.latitude, visit.longitude) <= 250
            }
            let found = visits.filter { visit in stays.contains { finds($0, visit) } }
            print("stays-real \(entry.file): \(points.count) fixes, \(visits.count) visits, \(stays.count) stays, "
                  + "\(found.count) visits found")
        }
    }
}
