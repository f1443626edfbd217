import Foundation
import Support

/// Times in track files: ISO 8601 in UTC, milliseconds when there are any (`InstantText`, the one
/// printer of instants), and read by hand (proleptic Gregorian day arithmetic) rather than
/// through a formatter per point: a day at 1 Hz is 86,400 of them, and Foundation's formatters
/// cost far more than the XML around them.
package enum TrackTime {
    package static func string(_ date: Date) -> String { InstantText.string(date, milliseconds: true) }

    /// ISO 8601 date and time with a zone (`Z` or ±hh:mm / ±hhmm), fractional seconds optional
    /// (any number of digits; kept to the millisecond): `2026-11-22T08:00:05.5+01:00`.
    package static func parse(_ text: String) -> Date? { parseStated(text)?.date }

    /// The instant, and the offset east of UTC (seconds) the text states: the clock it was
    /// written by, so the zone it was lived in. nil for `Z` (the instant only, as the JSON readers
    /// take it) or an offset outside `Fix.Limits.utcOffset`.
    package static func parseStated(_ text: String) -> (date: Date, utcOffset: Int?)? {
        let bytes = Array(text.utf8.drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D })
        var end = bytes.count
        while end > 0, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[end - 1]) { end -= 1 }
        var index = 0
        func number(_ digits: Int) -> Int64? {
            guard index + digits <= end else { return nil }
            var value: Int64 = 0
            for byte in bytes[index..<index + digits] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - 0x30)
            }
            index += digits
            return value
        }
        func expect(_ byte: UInt8) -> Bool {
            guard index < end, bytes[index] == byte else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect(0x2D), let month = number(2), expect(0x2D), let day = number(2),
              index < end, bytes[index] == 0x54 || bytes[index] == 0x74 else { return nil }
        index += 1
        guard let hour = number(2), expect(0x3A), let minute = number(2), expect(0x3A), let second = number(2),
              InstantText.isCalendarDate(year: year, month: month, day: day),
              Fix.Limits.isTimeOfDay(hour: Double(hour), minute: Double(minute), second: Double(second)) else { return nil }
        var milliseconds: Int64 = 0
        if expect(0x2E) {
            var scale: Int64 = 100, digits = 0
            while index < end, (0x30...0x39).contains(bytes[index]) {
                milliseconds += Int64(bytes[index] - 0x30) * scale
                scale /= 10
                index += 1
                digits += 1
            }
            guard digits > 0 else { return nil }
        }
        var offset: Int64 = 0
        var stated = false
        guard index < end else { return nil }
        switch bytes[index] {
        case 0x5A, 0x7A:   // Z
            index += 1
        case 0x2B, 0x2D:   // + -
            let sign: Int64 = bytes[index] == 0x2D ? -1 : 1
            index += 1
            guard let hours = number(2) else { return nil }
            _ = expect(0x3A)
            guard let minutes = number(2), hours < 24, minutes < 60 else { return nil }
            offset = sign * (hours * 3600 + minutes * 60)
            stated = true
        default:
            return nil
        }
        guard index == end else { return nil }
        let seconds = days(fromYear: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second - offset
        let date = Date(timeIntervalSince1970: Double(seconds) + Double(milliseconds) / 1000)
        return (date, stated && Fix.Limits.utcOffset.contains(Int(offset)) ? Int(offset) : nil)
    }

    package static func days(fromYear year: Int64, month: Int64, day: Int64) -> Int64 {
        InstantText.days(fromYear: year, month: month, day: day)
    }
}
