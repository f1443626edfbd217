import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Capture

/// A calendar day in a time zone: midnight to midnight there (23 or 25 hours on the days clocks
/// change), named yyyy-MM-dd. What `--date` and a digest mean by "a day".
public struct TrackDay: Sendable, Equatable, CustomStringConvertible {
    /// yyyy-MM-dd.
    public let name: String
    public let start: Date
    public let end: Date
    public let timeZone: TimeZone

    /// The day named `text` (YYYY-MM-DD) in `timeZone`; nil when it is no such date.
    public init?(_ text: String, timeZone: TimeZone) {
        let formatter = Self.formatter(timeZone)
        guard text.utf8.count == 10, let date = formatter.date(from: text), formatter.string(from: date) == text else { return nil }
        self.init(containing: date, timeZone: timeZone)
    }

    /// The day `date` falls on in `timeZone`.
    public init(containing date: Date, timeZone: TimeZone) {
        let calendar = Self.calendar(timeZone)
        start = calendar.startOfDay(for: date)
        end = calendar.date(byAdding: .day, value: 1, to: start) ?? start.addingTimeInterval(86_400)
        name = Self.formatter(timeZone).string(from: start)
        self.timeZone = timeZone
    }

    /// The day before this one.
    public var previous: TrackDay {
        TrackDay(containing: start.addingTimeInterval(-1), timeZone: timeZone)
    }

    public var description: String { name }

    /// "Sunday, 22 November 2026", in English whatever the locale (notes are read by people, but
    /// enlog's own text is English throughout).
    public var longName: String {
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
    public static func timeZone(config: Config) -> TimeZone {
        NoteStyle(config: config).timeZone
    }
}
