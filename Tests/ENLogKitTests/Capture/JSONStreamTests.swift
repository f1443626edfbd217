@testable import Capture
import Foundation
import XCTest

/// The streaming JSON layer under the JSON history readers: hostile input ends in a
/// `HistoryFileError` at a byte offset, never a crash or unbounded memory; numbers and times are
/// read from bytes the way Foundation reads them.
final class JSONStreamTests: XCTestCase {
    private func records(_ body: String) -> [UInt8] { Array("{\"locations\": [\(body)]}".utf8) }

    private func failure(_ bytes: [UInt8], as format: HistoryFormat = .googleRecords, chunkSize: Int = 4096) -> HistoryFileError? {
        JSONHistoryOutcome.read(format, bytes, chunkSize: chunkSize).error
    }

    func testDeepNestingStopsAtTheLimitWithItsOffset() {
        let bytes = Array(repeating: UInt8(ascii: "["), count: 100_000)
        let failure = self.failure(bytes, as: .geojson)
        XCTAssertEqual(failure?.reason, "JSON nested deeper than \(JSONStream.maxDepth) levels")
        guard case .byte(let offset)? = failure?.place else { return XCTFail("no offset: \(String(describing: failure))") }
        XCTAssertLessThanOrEqual(offset, JSONStream.slice)
    }

    /// The place is the bracket that went one level too deep, whatever came before it and however
    /// the file is chunked (it was the start of yajl's slice: "byte 0" for any file under 64 KiB).
    func testDeepNestingNamesTheBracketThatWentTooDeep() {
        for (lead, chunkSize) in [(0, 4096), (1000, 7), (70_000, 4096), (200_001, 1 << 20)] {
            let bytes = Array(repeating: UInt8(ascii: " "), count: lead) + Array(repeating: UInt8(ascii: "["), count: 600)
            let failure = self.failure(bytes, as: .geojson, chunkSize: chunkSize)
            XCTAssertEqual(failure?.reason, "JSON nested deeper than \(JSONStream.maxDepth) levels")
            XCTAssertEqual(failure?.place, .byte(lead + JSONStream.maxDepth), "\(lead) bytes before, chunks of \(chunkSize)")
        }
    }

    /// A 100 MB string is refused once it passes the token limit: the stream never holds it.
    func testAHundredMegabyteStringIsRefusedEarly() throws {
        var reader = GoogleRecordsReader()
        var fed = 0
        let megabyte = [UInt8](repeating: UInt8(ascii: "a"), count: 1 << 20)
        var failure: HistoryFileError?
        do {
            let head = Array("{\"locations\": [{\"timestamp\": \"".utf8)
            try reader.feed(head[...]) { _ in }
            for _ in 0..<100 {
                try reader.feed(megabyte[...]) { _ in }
                fed += megabyte.count
            }
        } catch let error as HistoryFileError {
            failure = error
        }
        XCTAssertEqual(failure?.reason, "a JSON string or number longer than 1 MiB")
        XCTAssertLessThan(fed, 3 << 20, "the stream kept reading a string it should have refused")
    }

    func testTruncatedJSONIsAnErrorAtTheEnd() {
        let whole = records(#"{"latitudeE7": 485000000, "longitudeE7": 23000000, "timestampMs": "1500000000000"}"#)
        for cut in [1, 10, 30, whole.count - 1] {
            let failure = self.failure(Array(whole[..<cut]), chunkSize: 3)
            XCTAssertEqual(failure?.reason, "the file ends inside the JSON document (truncated)", "cut at \(cut)")
            XCTAssertEqual(failure?.place, .byte(cut))
        }
        XCTAssertEqual(failure([]), HistoryFileError("the file ends inside the JSON document (truncated)", at: .byte(0)))
    }

    func testInvalidUTF8AndGarbageAreErrorsWithTheirOffset() {
        var bytes = records(#"{"deviceTag": "ab"#)
        let bad = bytes.count
        bytes += [0xC3, 0x28] + Array(#""}"#.utf8) + Array("]}".utf8)
        let failure = self.failure(bytes, chunkSize: 1)
        XCTAssertTrue(failure?.reason.hasPrefix("not valid JSON: lexical error: invalid bytes in UTF8 string") == true, String(describing: failure))
        guard case .byte(let offset)? = failure?.place else { return XCTFail("no offset") }
        XCTAssertTrue((bad - 20...bad + 2).contains(offset), "offset \(offset), bad byte at \(bad)")

        XCTAssertEqual(self.failure(Array("{\"locations\": [}".utf8))?.place, .byte(16), "just past the offending byte")
        XCTAssertEqual(self.failure(Array("{\"a\":1} trailing".utf8))?.reason.hasPrefix("not valid JSON"), true)
    }

    func testByteOrderMarkIsDroppedEvenFedOneByteAtATime() {
        let bytes: [UInt8] = [0xEF, 0xBB, 0xBF] + records(#"{"latitudeE7": 1, "longitudeE7": 2, "timestamp": "2020-01-01T00:00:00Z"}"#)
        let outcome = JSONHistoryOutcome.read(.googleRecords, bytes, chunkSize: 1)
        XCTAssertNil(outcome.error)
        XCTAssertEqual(outcome.points.count, 1)
    }

    func testNumbersAreReadAsFoundationReadsThem() {
        for text in ["0.1", "-73.9857", "48.8566", "1e5", "-0", "123456789012345678901", "4.9e-324", "0.30000000000000004",
                     "179.99999999", "1500000000123", ".5", "+2.5"] {
            let bytes = Array(text.utf8)
            let mine = bytes.withUnsafeBytes { JSONNumberText.double($0[...]) }
            XCTAssertEqual(mine, Double(text) ?? strtod(text, nil), text)
        }
        for text in ["", "-", "abc", "1.2.3", "12a", "nan", "inf"] {
            XCTAssertNil(Array(text.utf8).withUnsafeBytes { JSONNumberText.double($0[...]) }, text)
        }
    }

    func testISOTimesInTheSpellingsExportsUse() throws {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let cases: [(String, String)] = [
            ("2012-12-15T14:21:29.460Z", "2012-12-15T14:21:29.460Z"),
            ("2023-08-27T17:04:26.999-05:00", "2023-08-27T22:04:26.999Z"),
            ("2015-10-01T08:00:00-0700", "2015-10-01T15:00:00.000Z"),
            ("2025-03-24 20:07:24 +0100", "2025-03-24T19:07:24.000Z"),
            ("2024-02-29T23:59:60Z", "2024-03-01T00:00:00.000Z"),
            ("2016-06-21", "2016-06-21T00:00:00.000Z"),
            ("2021-08-01T10:00+10", "2021-08-01T00:00:00.000Z"),
        ]
        for (text, expected) in cases {
            let seconds = Array(text.utf8).withUnsafeBytes { ISOTimeText.epochSeconds($0[...]) }
            let date = try XCTUnwrap(formatter.date(from: expected))
            XCTAssertEqual(seconds ?? .nan, date.timeIntervalSince1970, accuracy: 1e-6, text)
        }
        for text in ["2020-13-01T00:00:00Z", "2020-01-01T25:00:00Z", "2020-01-01T00:00:00Q", "yesterday", "2020-01-01T"] {
            XCTAssertNil(Array(text.utf8).withUnsafeBytes { ISOTimeText.epochSeconds($0[...]) }, text)
        }
    }
}
