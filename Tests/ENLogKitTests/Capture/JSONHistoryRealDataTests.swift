@testable import Capture
import Foundation
import XCTest

/// What a reader made of a whole file: its items, or the error that refused it.
struct JSONHistoryOutcome: Equatable {
    var items: [HistoryItem] = []
    var error: HistoryFileError?

    var points: [HistoryPoint] { items.compactMap { if case .point(let point) = $0 { point } else { nil } } }
    var visits: [HistoryVisit] { items.compactMap { if case .visit(let visit) = $0 { visit } else { nil } } }
    var segments: [HistorySegment] { items.compactMap { if case .segment(let segment) = $0 { segment } else { nil } } }
    var skipped: [String: Int] {
        items.reduce(into: [:]) { counts, item in if case .skipped(let why) = item { counts[why.rawValue, default: 0] += 1 } }
    }

    /// Reads `bytes` with a new reader of `format`, fed `chunkSize` bytes at a time.
    static func read(_ format: HistoryFormat, _ bytes: [UInt8], chunkSize: Int) -> JSONHistoryOutcome {
        var outcome = JSONHistoryOutcome()
        guard var reader = JSONHistoryReaders.reader(for: format) else { return outcome }
        do {
            var start = 0
            while start < bytes.count {
                let end = min(start + chunkSize, bytes.count)
                try reader.feed(bytes[start..<end]) { outcome.items.append($0) }
                start = end
            }
            try reader.finish { outcome.items.append($0) }
        } catch let error as HistoryFileError {
            outcome.error = error
        } catch {
            XCTFail("not a HistoryFileError: \(error)")
        }
        return outcome
    }
}

/// Every JSON file in `../shared/location-history-real/`: recognized as the format SOURCES.tsv
/// names (or as none when enlog reads no such format), read the same in 1-byte, 7-byte and whole
/// chunks, and holding the points, visits and skips that an independent reading (Python's
/// json.load, Tests/support/history_counts.py) finds in it.
final class JSONHistoryRealDataTests: XCTestCase {
    static let directory = Fixtures.repositoryRoot.deletingLastPathComponent()
        .appendingPathComponent("shared/location-history-real")

    /// SOURCES.tsv's format column → what enlog must recognize (nil: no format of enlog's).
    static let expected: [String: HistoryFormat?] = [
        "records-json": .googleRecords, "semantic-history": .googleSemantic, "android-timeline": .androidTimeline,
        "ios-location-history": .iosTimeline, "timeline-edits": .timelineEdits, "owntracks-json": .ownTracksJSON,
        "geojson": .geojson, "geojson-coordtimes": .geojson, "overland-geojson": .geojson,
        "settings-json": HistoryFormat?.none, "polarsteps": HistoryFormat?.none,
    ]

    static func files() throws -> [(name: String, format: HistoryFormat?)] {
        let table = try String(contentsOf: directory.appendingPathComponent("SOURCES.tsv"), encoding: .utf8)
        return table.split(separator: "\n").dropFirst().compactMap { line in
            let columns = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard columns.count > 1, let format = expected[String(columns[1])] else { return nil }
            return (String(columns[0]), format)
        }
    }

    static func prefix(_ bytes: [UInt8]) -> ArraySlice<UInt8> {
        let start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        return bytes[start..<min(bytes.count, start + 64 << 10)]
    }

    func testEveryRealJSONFileIsRecognizedByContent() throws {
        let files = try Self.files()
        XCTAssertGreaterThan(files.count, 60)
        for file in files {
            let bytes = try [UInt8](Data(contentsOf: Self.directory.appendingPathComponent(file.name)))
            let format = bytes.isEmpty ? nil : file.format
            XCTAssertEqual(JSONHistorySniffer.format(of: Self.prefix(bytes)), format, file.name)
            for reader in JSONHistoryReaders.all {
                XCTAssertEqual(reader.recognizes(prefix: Self.prefix(bytes)), reader.format == format,
                               "\(reader.format) on \(file.name)")
            }
        }
    }

    func testChunkSizesDoNotChangeWhatIsRead() throws {
        for file in try Self.files() {
            guard let format = file.format else { continue }
            let bytes = try [UInt8](Data(contentsOf: Self.directory.appendingPathComponent(file.name)))
            let whole = JSONHistoryOutcome.read(format, bytes, chunkSize: max(bytes.count, 1))
            XCTAssertEqual(JSONHistoryOutcome.read(format, bytes, chunkSize: 7), whole, file.name)
            if bytes.count < 200_000 {
                XCTAssertEqual(JSONHistoryOutcome.read(format, bytes, chunkSize: 1), whole, file.name)
            }
        }
    }

    func testEveryRealJSONFileHoldsWhatAnIndependentReadingFinds() throws {
        let python = try PythonServer.interpreter(stdlibOnly: true)
        let script = PythonServer.supportDirectory.appendingPathComponent("history_counts.py").path
        for file in try Self.files() {
            guard let format = file.format else { continue }
            let url = Self.directory.appendingPathComponent(file.name)
            let bytes = try [UInt8](Data(contentsOf: url))
            let outcome = JSONHistoryOutcome.read(format, bytes, chunkSize: 64 << 10)
            if bytes.isEmpty {
                XCTAssertEqual(outcome.error?.place, .byte(0), file.name)
                continue
            }
            let result = try Subprocess.run(URL(fileURLWithPath: python), [script, format.rawValue, url.path])
            XCTAssertEqual(result.status, 0, "\(file.name): \(result.standardError)")
            let independent = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
            if independent["refused"] as? Bool == true {
                XCTAssertEqual(outcome.error?.reason, TimelineEditsMachine.noPositionsReason, file.name)
                XCTAssertEqual(outcome.error?.holdsNoPoints, true, "\(file.name): nothing to import, no failure")
                continue
            }
            XCTAssertNil(outcome.error, file.name)
            let points = (independent["points"] as? [[Any]] ?? []).map { row in
                [row[0] as! Double, row[1] as! Double, row[2] as! Double]
            }
            Self.assertSame(outcome.points.map { [$0.fix.latitude, $0.fix.longitude, $0.fix.timestamp.timeIntervalSince1970] },
                            points, "points of \(file.name)")
            let devices = (independent["points"] as? [[Any]] ?? []).map { $0[3] as? String ?? "" }.sorted()
            XCTAssertEqual(outcome.points.map { $0.device ?? "" }.sorted(), devices, "devices of \(file.name)")
            let visits = (independent["visits"] as? [[Any]] ?? []).map { row in
                [row[0] as! Double, row[1] as! Double, row[2] as! Double, row[3] as! Double]
            }
            Self.assertSame(outcome.visits.map { [$0.start.timeIntervalSince1970, $0.end.timeIntervalSince1970, $0.latitude, $0.longitude] },
                            visits, "visits of \(file.name)")
            XCTAssertEqual(outcome.skipped, independent["skipped"] as? [String: Int] ?? [:], "skips of \(file.name)")
            XCTAssertEqual(outcome.segments.count, independent["moves"] as? Int ?? 0, "moves (activity segments) of \(file.name)")
        }
    }

    /// Equal as multisets, each number within 1e-6 (a microsecond, or about 0.1 m).
    static func assertSame(_ mine: [[Double]], _ theirs: [[Double]], _ what: String, line: UInt = #line) {
        let order: ([Double], [Double]) -> Bool = { $0.lexicographicallyPrecedes($1) }
        let mine = mine.sorted(by: order), theirs = theirs.sorted(by: order)
        XCTAssertEqual(mine.count, theirs.count, what, line: line)
        for (a, b) in zip(mine, theirs) where zip(a, b).contains(where: { abs($0 - $1) > 1e-6 }) {
            XCTFail("\(what): \(a) ≠ \(b)", line: line)
            return
        }
    }
}
