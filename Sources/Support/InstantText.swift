import Foundation

/// The one way enlog prints an instant, wherever it appears (history, JSON, track files,
/// messages): ISO 8601 in UTC, `2026-11-22T08:00:05Z`, by proleptic Gregorian day arithmetic.
/// Foundation's ISO8601DateFormatter switches to the Julian calendar before 1582 (year 1 came
/// out as 0001-01-03 in `history` and 0001-01-01 in exports).
package enum InstantText {
    /// - Parameter milliseconds: add `.mmm` when the instant has any (track files keep them).
    package static func string(_ date: Date, milliseconds: Bool = false) -> String {
        if let beyond = beyondTheCalendar(date) { return beyond }
        let total = Int64((date.timeIntervalSince1970 * 1000).rounded(milliseconds ? .toNearestOrAwayFromZero : .down))
        let days = floorDivision(total, 86_400_000)
        let ofDay = total - days * 86_400_000
        var text = dateAndTime(days: days, secondsOfDay: ofDay / 1000, dateSeparator: "-", between: "T")
        if milliseconds && ofDay % 1000 != 0 { text += "." + pad(ofDay % 1000, 3) }
        return text + "Z"
    }

    /// The wall-clock time `offsetSeconds` east of UTC, by the same arithmetic: `2026/11/22 09:00:05`
    /// (`dateSeparator` "/"), or ISO 8601's `2026-11-22T09:00:05` (`dateSeparator` "-", `between` "T").
    /// Seconds are cut, not rounded, as clocks show them.
    package static func localTime(_ date: Date, offsetSeconds: Int, dateSeparator: String, between: String) -> String {
        if let beyond = beyondTheCalendar(date) { return beyond }
        let total = Int64(date.timeIntervalSince1970.rounded(.down)) + Int64(offsetSeconds)
        let days = floorDivision(total, 86_400)
        return dateAndTime(days: days, secondsOfDay: total - days * 86_400, dateSeparator: dateSeparator, between: between)
    }

    /// The calendar arithmetic's reach: about 3 million years either side of 1970, far inside
    /// Int64's milliseconds (and any offset added), and far beyond any instant a fix may hold.
    static let calendarSeconds = 1e14

    /// An instant past `calendarSeconds` (or infinite, or NaN) as its seconds since the epoch:
    /// only a refused value from outside is one (a phone's time of 1e300), and the error that
    /// refuses it prints it; its milliseconds as an Int64 trapped.
    private static func beyondTheCalendar(_ date: Date) -> String? {
        let seconds = date.timeIntervalSince1970
        guard !(seconds.magnitude < calendarSeconds) else { return nil }
        return "\(seconds) s since 1970-01-01T00:00:00Z"
    }

    /// `yyyy-MM-dd` (with `dateSeparator`), `between`, `HH:mm:ss`: the text both printers share.
    private static func dateAndTime(days: Int64, secondsOfDay seconds: Int64, dateSeparator: String, between: String) -> String {
        let (year, month, day) = civil(fromDays: days)
        return pad(year, 4) + dateSeparator + pad(month, 2) + dateSeparator + pad(day, 2) + between
            + pad(seconds / 3600, 2) + ":" + pad(seconds / 60 % 60, 2) + ":" + pad(seconds % 60, 2)
    }

    /// An offset from UTC as ISO 8601 writes it: `+01:00`, `-03:30`, `+00:00`.
    package static func offset(_ seconds: Int) -> String {
        let minutes = Int64(abs(seconds) / 60)
        return (seconds < 0 ? "-" : "+") + pad(minutes / 60, 2) + ":" + pad(minutes % 60, 2)
    }

    package static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    package static func floorDivision(_ a: Int64, _ b: Int64) -> Int64 {
        a >= 0 ? a / b : -((-a + b - 1) / b)
    }

    package static func isLeap(_ year: Int64) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    /// Whether the proleptic Gregorian calendar has this day: every reader of dates asks, so that
    /// a 30 February or a 31 April is no date rather than rolled over into the next month.
    package static func isCalendarDate(year: Int64, month: Int64, day: Int64) -> Bool {
        guard (1...12).contains(month), day >= 1 else { return false }
        switch month {
        case 2: return day <= (isLeap(year) ? 29 : 28)
        case 4, 6, 9, 11: return day <= 30
        default: return day <= 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
    package static func days(fromYear year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = floorDivision(y, 400)
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date of a day since 1970-01-01 (civil_from_days).
    package static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = floorDivision(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
