@testable import Capture
@testable import Compose
@testable import Outbox
import Foundation
import GRDB
import Testing

/// The outbox's records write their dates as `StorageTime` text instead of through GRDB's ICU
/// `DateFormatter`; the text must stay GRDB's, which reads it back and which older outboxes hold.
@Suite("stored dates: GRDB's text without ICU")
struct StorageTimeTests {
    /// Whole milliseconds over every time a fix may have (`Fix.Limits.time`, 1980–2099: ICU's
    /// calendar turns Julian before 1582, where the two would part), as GRDB's formatter writes them.
    @Test func writesWhatGRDBsFormatterWrites() {
        var generator = SystemRandomNumberGenerator()
        let first = Int64(Fix.Limits.time.lowerBound.timeIntervalSince1970 * 1000), last = Int64(Fix.Limits.time.upperBound.timeIntervalSince1970 * 1000)
        let extremes: [Int64] = [first, last, 951_782_400_000, 951_868_799_999, 1_710_000_000_123]
        let randomOnes = (0..<2000).map { _ in Int64.random(in: first...last, using: &generator) }
        for milliseconds in extremes + randomOnes {
            let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
            #expect(StorageTime.text(date) == String.fromDatabaseValue(date.databaseValue), "\(milliseconds) ms")
        }
    }

    /// Times between milliseconds (a clock's `Date()`, parsed fractions) round to the same
    /// millisecond both ways, so a bound GRDB writes for a query meets the text a record stored.
    @Test func roundsBetweenMillisecondsAsGRDBsFormatterDoes() {
        var generator = SystemRandomNumberGenerator()
        let first = Int64(Fix.Limits.time.lowerBound.timeIntervalSince1970 * 1000), last = Int64(Fix.Limits.time.upperBound.timeIntervalSince1970 * 1000)
        for _ in 0..<5000 {
            let seconds = Double(Int64.random(in: first...last, using: &generator)) / 1000 + Double.random(in: 0..<0.001, using: &generator)
            let date = Date(timeIntervalSince1970: seconds)
            #expect(StorageTime.text(date) == String.fromDatabaseValue(date.databaseValue), "\(seconds) s")
        }
    }

    /// The text read back (the phones' diary reads every point so) is the instant GRDB reads,
    /// to the millisecond; text of another form is left to GRDB.
    @Test func readsBackWhatGRDBReads() {
        var generator = SystemRandomNumberGenerator()
        let first = Int64(Fix.Limits.time.lowerBound.timeIntervalSince1970 * 1000), last = Int64(Fix.Limits.time.upperBound.timeIntervalSince1970 * 1000)
        let extremes: [Int64] = [first, last, 951_782_400_000, 951_868_799_999, 1_710_000_000_123]
        for milliseconds in extremes + (0..<2000).map({ _ in Int64.random(in: first...last, using: &generator) }) {
            let text = StorageTime.text(Date(timeIntervalSince1970: Double(milliseconds) / 1000))
            let read = Array(text.utf8).withUnsafeBufferPointer { StorageTime.date($0) }
            let grdb = Date.fromDatabaseValue(text.databaseValue)
            #expect(read.map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) } == milliseconds, "\(text)")
            #expect(read.map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) } == grdb.map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) }, "\(text)")
        }
        #expect(Array("2024-03-09 16:00:00".utf8).withUnsafeBufferPointer { StorageTime.date($0) } == Date(timeIntervalSince1970: 1_710_000_000))
        for other in ["2024-03-09T16:00:00.250", "2024-02-30 16:00:00.250", "2024-03-09 24:00:00.250", "2024-03-09 16:00:00,250",
                      "2024-03-09 16:00:00.2x0", "yesterday", "", "2024-03-09 16:00:00.2500"] {
            #expect(Array(other.utf8).withUnsafeBufferPointer { StorageTime.date($0) } == nil, "\(other)")
        }
    }

    /// A fix and its note go in through the records and come back as the same instants; the
    /// columns hold GRDB's text.
    @Test func recordsReadBackTheirDates() async throws {
        let directory = try TemporaryDirectory()
        let store = try OutboxStore(path: directory.path("outbox.sqlite"))
        let time = Date(timeIntervalSince1970: 1_710_000_000.25)
        let fix = try Fix(latitude: 48.1486, longitude: 11.5783, timestamp: time, source: .manual)
        let draft = NoteDraft(uid: UUID().uuidString, title: "t", content: "<en-note>t</en-note>", notebookName: "Diary", tags: [],
                              placeName: nil, subjectDate: time, source: "enlog", sourceApplication: "enlog/0.1",
                              account: "sandbox.evernote.com/alice")
        let note = try await store.enqueue(fix: fix, note: draft, now: time.addingTimeInterval(1))
        let fetched = try await store.note(id: try #require(note.id))
        #expect(fetched.subjectDate == time)
        #expect(fetched.createdAt == time.addingTimeInterval(1))
        let stored = try DatabaseQueue(path: directory.path("outbox.sqlite")).read { db in
            try Row.fetchOne(db, sql: "SELECT fix.timestamp, note.createdAt FROM note JOIN fix ON fix.id = note.fixId")
        }
        #expect(stored?[0] as String? == "2024-03-09 16:00:00.250")
        #expect(stored?[1] as String? == "2024-03-09 16:00:01.250")
    }
}
