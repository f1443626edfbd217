import Foundation
import Support
import Configuration
import Network

/// An NMEA 0183 log, line by line through the reader `log --nmea` uses (comment lines, a first
/// line cut mid-sentence and bad checksums are skipped), so both agree on every log; a log
/// without a valid, dated fix is refused with the same reason `log --nmea` gives.
package struct NMEAHistoryReader: HistoryReader {
    package static let format = HistoryFormat.nmea

    private let path: String
    private var lines = HistoryLines()
    private var reader = NMEAFixReader()
    private var fixes = 0

    package init(path: String) {
        self.path = path
    }

    /// A sentence somewhere in the first bytes: `$` or `!`, a talker and type of five letters or
    /// digits, a comma. Real logs may start with `# comments` or half a sentence.
    package static func recognizes(prefix: ArraySlice<UInt8>) -> Bool {
        var index = prefix.startIndex
        while let start = prefix[index...].firstIndex(where: { $0 == UInt8(ascii: "$") || $0 == UInt8(ascii: "!") }) {
            let address = prefix[(start + 1)...].prefix(6)
            if address.count == 6, address.last == UInt8(ascii: ","),
               address.dropLast().allSatisfy({ (0x41...0x5A).contains($0) || (0x30...0x39).contains($0) }) { return true }
            index = start + 1
        }
        return false
    }

    package mutating func feed(_ chunk: ArraySlice<UInt8>, emit: (HistoryItem) throws -> Void) throws {
        var reader = self.reader
        var fixes = self.fixes
        defer {
            self.reader = reader
            self.fixes = fixes
        }
        try lines.feed(chunk) { line, _ in
            for fix in reader.read(line: line) {
                fixes += 1
                try emit(.point(HistoryPoint(fix: fix)))
            }
        }
    }

    package mutating func finish(emit: (HistoryItem) throws -> Void) throws {
        var reader = self.reader
        var fixes = self.fixes
        try lines.finish { line, _ in
            for fix in reader.read(line: line) {
                fixes += 1
                try emit(.point(HistoryPoint(fix: fix)))
            }
        }
        for fix in reader.finish() {
            fixes += 1
            try emit(.point(HistoryPoint(fix: fix)))
        }
        self.reader = reader
        if fixes == 0 {
            let error = NMEALogLocation(path: path).noFixError(reader)
            throw HistoryFileError(error.reason + (error.recoverySuggestion.map { " (\($0))" } ?? ""))
        }
    }
}
