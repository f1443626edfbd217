import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Capture

/// A calendar day in a time zone: from its first instant to the next day's (23 or 25 hours on the
/// days clocks change), named yyyy-MM-dd. What `--date`, `--since`, `--until` and a digest mean
/// by "a day". A day does not always start at midnight: where clocks go forward at 00:00
/// (America/Santiago on 2026-09-06, Asia/Beirut on 2026-03-29) it starts at 01:00.
package struct TrackDay: Sendable, Equatable, CustomStringConvertible {
    /// yyyy-MM-dd.
    package let name: String
    package let start: Date
    package let end: Date
    package let timeZone: TimeZone

    /// The day named `text` (YYYY-MM-DD) in `timeZone`; nil when it is no such date (or a day
    /// the zone skipped, as Samoa skipped 2011-12-30).
    package init?(_ text: String, timeZone: TimeZone) {
        let digits = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            digits[range].allSatisfy { (0x30...0x39).contains($0) } ? digits[range].reduce(0) { $0 * 10 + Int($1 - 0x30) } : nil
        }
        // Noon, not midnight: a day's midnight may not exist, its noon always does.
        guard digits.count == 10, digits[4] == 0x2D, digits[7] == 0x2D,
              let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let noon = Self.calendar(timeZone).date(from: DateComponents(year: year, month: month, day: day, hour: 12))
        else { return nil }
        self.init(containing: noon, timeZone: timeZone)
        guard name == text else { return nil }   // 2026-02-30 is March 2nd
    }

    /// The day `date` falls on in `timeZone`.
    package init(containing date: Date, timeZone: TimeZone) {
        let calendar = Self.calendar(timeZone)
        start = calendar.startOfDay(for: date)
        // The next day's first instant, which is not always 24 hours (nor a midnight) later.
        let tomorrow = calendar.date(byAdding: .day, value: 1, to: date) ?? date.addingTimeInterval(86_400)
        end = calendar.startOfDay(for: tomorrow)
        name = Self.formatter(timeZone).string(from: start)
        self.timeZone = timeZone
    }

    /// A moment as `--since` and `--until` take it: an ISO 8601 date and time with its zone, or
    /// a day (YYYY-MM-DD) in `timeZone`, meaning its first instant. The same zone as `--date`'s.
    package static func moment(_ text: String, timeZone: TimeZone) -> Date? {
        if text.utf8.count > 10 { return TrackTime.parse(text) }
        return TrackDay(text, timeZone: timeZone)?.start
    }

    /// The day before this one.
    package var previous: TrackDay {
        TrackDay(containing: start.addingTimeInterval(-1), timeZone: timeZone)
    }

    package var description: String { name }

    /// "Sunday, 22 November 2026", in English whatever the locale (notes are read by people, but
    /// enlog's own text is English throughout).
    package var longName: String {
        let formatter = Self.formatter(timeZone)
        formatter.dateFormat = "EEEE, d MMMM yyyy"
        return formatter.string(from: start)
    }

    static func calendar(_ timeZone: TimeZone) -> Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        calendar.locale = Locale(identifier: "en_US_POSIX")
        return calendar
    }

    /// POSIX locale, Gregorian calendar, `yyyy` (never the week-year), the zone given.
    package static func formatter(_ timeZone: TimeZone) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.calendar = calendar(timeZone)
        formatter.timeZone = timeZone
        formatter.dateFormat = "yyyy-MM-dd"
        formatter.isLenient = false
        return formatter
    }

    /// The configured zone (`note.time_zone`), else the system's: the zone notes are written in.
    package static func timeZone(config: Config) -> TimeZone {
        NoteStyle(config: config).timeZone
    }
}
