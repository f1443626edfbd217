import Foundation
import Support
import Configuration
import Network

/// Lines of a text format fed in chunks of any size: each complete line (without its `\n` or
/// `\r\n`) with its number, the part after the last newline kept for the next chunk. A line is
/// bounded too, so a file without newlines cannot fill the memory.
///
/// With `quotedFields` (CSV), a line break inside double quotes belongs to its field, not the
/// end of a record: a record then spans lines and is given with the number of its first.
package struct HistoryLines {
    /// Longer than any record of a line-based history format.
    static let maximumLine = 1 << 20

    private let quotedFields: Bool
    private var pending: [UInt8] = []
    /// Inside double quotes at the end of what was scanned (`quotedFields` only): an odd number
    /// of quotes so far in the record (`""`, a quote in a quoted field, counts two).
    private var insideQuotes = false
    /// Line breaks inside quotes in the pending record.
    private var breaksInside = 0
    package private(set) var number = 0

    package init(quotedFields: Bool = false) {
        self.quotedFields = quotedFields
    }

    package mutating func feed(_ chunk: ArraySlice<UInt8>, _ line: (ArraySlice<UInt8>, Int) throws -> Void) throws {
        var start = chunk.startIndex
        while let newline = recordEnd(in: chunk, from: start) {
            let first = number + 1
            number += 1 + breaksInside
            breaksInside = 0
            if pending.isEmpty {
                try line(Self.trimmed(chunk[start..<newline]), first)
            } else {
                pending.append(contentsOf: chunk[start..<newline])
                try bounded()
                try line(Self.trimmed(pending[...]), first)
                pending.removeAll(keepingCapacity: true)
            }
            start = newline + 1
        }
        pending.append(contentsOf: chunk[start...])
        try bounded()
    }

    /// The next `\n` from `start` that ends a record; the quotes and breaks before it counted.
    private mutating func recordEnd(in chunk: ArraySlice<UInt8>, from start: Int) -> Int? {
        guard quotedFields else { return chunk[start...].firstIndex(of: 0x0A) }
        var index = start
        while index < chunk.endIndex {
            switch chunk[index] {
            case 0x22: insideQuotes.toggle()
            case 0x0A:
                if !insideQuotes { return index }
                breaksInside += 1
            default: break
            }
            index += 1
        }
        return nil
    }

    package mutating func finish(_ line: (ArraySlice<UInt8>, Int) throws -> Void) throws {
        guard !pending.isEmpty else { return }
        let first = number + 1
        number += 1 + breaksInside
        try line(Self.trimmed(pending[...]), first)
        pending.removeAll()
    }

    private func bounded() throws(HistoryFileError) {
        if pending.count > Self.maximumLine {
            throw HistoryFileError(insideQuotes ? "a quoted field not closed within \(Self.maximumLine >> 20) MiB"
                                   : "a line longer than \(Self.maximumLine >> 20) MiB: this is no line-based history", at: .line(number + 1))
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
