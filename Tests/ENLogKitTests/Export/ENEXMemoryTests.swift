import Foundation
import GRDB
import XCTest
@testable import Capture
@testable import Compose
@testable import Outbox

/// An export is streamed: ten thousand notes with their maps go out in memory that does not grow
/// with the outbox. Measured as the peak resident set of the enlog process alone (`MeasuredRun`),
/// against the size of what it wrote; never a time.
final class ENEXMemoryTests: XCTestCase {
    static let notes = 10_000
    static let mapBytes = 16 * 1024

    /// The outbox filled in this process, a transaction per thousand notes: each note with a
    /// map of its own bytes that its ENML references.
    static func fill(_ path: String, notes: Int = ENEXMemoryTests.notes) async throws {
        let store = try OutboxStore(path: path)
        var generator = SystemRandomNumberGenerator()
        let picture = (0..<Self.mapBytes).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let start = Date(timeIntervalSince1970: 1_795_330_800)
        for batch in stride(from: 0, to: notes, by: 1000) {
            let drafts = (batch..<min(batch + 1000, notes)).map { index -> (Fix, NoteDraft) in
                let body = Data(withUnsafeBytes(of: UInt64(index).bigEndian) { Array($0) } + picture)
                let hash = MapImage.md5Hex(body)
                let content = """
                    <?xml version="1.0" encoding="UTF-8"?>
                    <!DOCTYPE en-note SYSTEM "http://xml.evernote.com/pub/enml2.dtd">
                    <en-note><div>Note \(index)</div><div><en-media type="image/png" hash="\(hash)"/></div></en-note>
                    """
                var draft = NoteDraft(uid: UUID().uuidString, title: "Note \(index)", content: content, notebookName: nil,
                                      tags: ["LocationHistory"], subjectDate: start, source: "enlog", sourceApplication: "enlog")
                draft.resources = [NoteResource(hash: hash, body: body, mime: "image/png", width: 600, height: 400,
                                                fileName: "map.png", latitude: 48.1, longitude: 11.5)]
                let fix = try! Fix(latitude: 48.1, longitude: 11.5, timestamp: start.addingTimeInterval(Double(index)), source: .manual)
                return (fix, draft)
            }
            try await store.databaseWriter.write { db in
                for (fix, draft) in drafts {
                    var record = FixRecord(fix)
                    try record.insert(db)
                    _ = try OutboxStore.insert(draft, on: record, db, now: start)
                }
            }
        }
    }

    func testTenThousandNotesWithMapsExportInBoundedMemory() async throws {
        let home = try EnlogHome()
        try await Self.fill(home.database)
        let outboxBytes = try FileManager.default.attributesOfItem(atPath: home.database)[.size] as? Int ?? 0
        let file = home.directory.path("all.enex")
        let result = try RedirectedRun.run(Subprocess.enlog, ["export", "--enex", file, "--new", "-q"],
                                           environment: home.environment)
        XCTAssertFalse(result.hung, result.standardError)
        XCTAssertEqual(result.status, 0, result.standardError)
        let peakKiB = result.peakKilobytes
        let written = try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int ?? 0
        print("export of \(Self.notes) notes: outbox \(outboxBytes / 1_048_576) MiB, ENEX \(written / 1_048_576) MiB, peak RSS \(peakKiB / 1024) MiB")
        XCTAssertGreaterThan(written, Self.notes * Self.mapBytes * 4 / 3, "every map went out, in base64")
        // The whole export, or every map, in memory would be over 150 MiB; enlog itself (Swift,
        // Foundation, SQLite, libxml2) takes some 30, the streamed export 57 to 59 MB in all.
        XCTAssertLessThan(peakKiB, 100 * 1024, "peak resident set \(peakKiB) KiB for an ENEX of \(written / 1024) KiB")
        XCTAssertLessThan(peakKiB * 1024, written / 2)

        let states = try await OutboxStore(path: home.database, access: .read).counts()
        XCTAssertEqual(states[.exported], Self.notes)
        try ENEXReaders.validateAgainstDTD(file)
    }
}
