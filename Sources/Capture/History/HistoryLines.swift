import Foundation
import Support
import Configuration
import Network

/// Lines of a text format fed in chunks of any size: each complete line (without its `\n` or
/// `\r\n`) with its number, the part after the last newline kept for the next chunk. A line is
/// bounded too, so a file without newlines cannot fill the memory.
package struct HistoryLines {
    /// Longer than any record of a line-based history format.
    static let maximumLine = 1 << 20

    private var pending: [UInt8] = []
    package private(set) var number = 0

    package init() {}

    package mutating func feed(_ chunk: ArraySlice<UInt8>, _ line: (ArraySlice<UInt8>, Int) throws -> Void) throws {
        var start = chunk.startIndex
        while let newline = chunk[start...].firstIndex(of: 0x0A) {
            number += 1
            if pending.isEmpty {
                try line(Self.trimmed(chunk[start..<newline]), number)
            } else {
                pending.append(contentsOf: chunk[start..<newline])
                try bounded()
                try line(Self.trimmed(pending[...]), number)
                pending.removeAll(keepingCapacity: true)
            }
            start = newline + 1
        }
        pending.append(contentsOf: chunk[start...])
        try bounded()
    }

    package mutating func finish(_ line: (ArraySlice<UInt8>, Int) throws -> Void) throws {
        guard !pending.isEmpty else { return }
        number += 1
        try line(Self.trimmed(pending[...]), number)
        pending.removeAll()
    }

    private func bounded() throws(HistoryFileError) {
        if pending.count > Self.maximumLine {
            throw HistoryFileError("a line longer than \(Self.maximumLine >> 20) MiB: this is no line-based history", at: .line(number + 1))
        }
    }

    private static func trimmed(_ line: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        line.last == 0x0D ? line.dropLast() : line
    }

    /// The first line of `prefix` that is not blank, as text.
    package static func firstLine(_ prefix: ArraySlice<UInt8>) -> String? {
        for line in prefix.split(separator: 0x0A, omittingEmptySubsequences: true) {
            let text = String(decoding: trimmed(line), as: UTF8.self)
            if !HistoryPoints.trimmed(Substring(text)).isEmpty { return text }
        }
        return nil
    }
}

/// Times as history files write them: ISO 8601 with a zone (`TrackTime`), the same with a space
/// for the `T` or before the zone (`2025-06-01 13:02:03.000000 +00:00`, database dumps), without
/// a zone (read as UTC), and seconds or milliseconds since 1970 (12 digits or more: milliseconds).
package enum HistoryTimes {
    package static func parse(_ text: String) -> Date? { parseStated(text)?.date }

    /// The instant, and the offset from UTC the text states (`+01:00`, `+0100`); nil for epoch
    /// digits, `Z`, `UTC` or no zone: those say the instant, not the clock it was lived by.
    package static func parseStated(_ text: String) -> (date: Date, utcOffset: Int?)? {
        let trimmed = String(HistoryPoints.trimmed(Substring(text)))
        guard let first = trimmed.utf8.first else { return nil }
        if (0x30...0x39).contains(first) || first == UInt8(ascii: "-"), !trimmed.utf8.contains(UInt8(ascii: ":")),
           let number = Double(trimmed), number.isFinite {
            let integerDigits = trimmed.utf8.prefix { $0 != UInt8(ascii: ".") }.count { (0x30...0x39).contains($0) }
            return (Date(timeIntervalSince1970: integerDigits >= 12 ? number / 1000 : number), nil)
        }
        if let stated = TrackTime.parseStated(trimmed) { return stated }
        var normalized = trimmed
        if normalized.count > 10, normalized[normalized.index(normalized.startIndex, offsetBy: 10)] == " " {
            normalized.replaceSubrange(normalized.index(normalized.startIndex, offsetBy: 10)...normalized.index(normalized.startIndex, offsetBy: 10), with: "T")
        }
        normalized = normalized.replacingOccurrences(of: " +", with: "+").replacingOccurrences(of: " -", with: "-")
            .replacingOccurrences(of: " Z", with: "Z").replacingOccurrences(of: " UTC", with: "Z")
        if let stated = TrackTime.parseStated(normalized) { return stated }
        return TrackTime.parseStated(normalized + "Z")
    }
}
