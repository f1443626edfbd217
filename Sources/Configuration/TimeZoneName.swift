import Foundation
import Support

/// Time zone names read as the C library reads `TZ` (tzset(3), glibc), so that a note is stamped
/// with the offset `date` shows. Foundation reads `UTC+14` as 14 hours *ahead* of UTC (POSIX,
/// glibc and `date` mean 14 hours behind), turns `<+14>-14` and `:Europe/Paris` into UTC, and
/// knows no daylight-saving rule strings.
public enum TimeZoneName {
    /// Where glibc looks for a name first (`TZDIR` aside, which enlog does not follow).
    static let zoneinfo = "/usr/share/zoneinfo"

    /// The zone `text` names: a file of the tz database (`Europe/Paris`, `EST5EDT`, `UTC`, with
    /// or without glibc's leading `:`), else a POSIX rule `STD offset [DST [offset]
    /// [,start[/time],end[/time]]]` whose offset is what local time adds to reach UTC
    /// (`UTC+14` is 14 hours behind UTC; `<+14>-14` quotes a name, 14 hours ahead). A rule with
    /// daylight saving becomes the tz database zone that keeps the same clock from 2010 to 2037
    /// (rules changed in many places up to 2007: the US, New Zealand).
    /// nil when `text` is none of these (glibc then uses UTC).
    public static func resolve(_ text: String) -> TimeZone? {
        let name = text.hasPrefix(":") ? String(text.dropFirst()) : text
        if let zone = databaseZone(name) { return zone }
        guard !text.hasPrefix(":"), let rule = PosixZoneRule(name) else { return nil }
        guard let daylight = rule.daylight else { return TimeZone(secondsFromGMT: -rule.standardOffset) }
        return matchingZone(rule, daylight: daylight)
    }

    /// A name that is a file of the tz database and a zone Foundation knows by that name.
    private static func databaseZone(_ name: String) -> TimeZone? {
        var relative = name
        if relative.hasPrefix(zoneinfo + "/") { relative.removeFirst(zoneinfo.count + 1) }
        guard !relative.isEmpty, !relative.hasPrefix("/"), !relative.split(separator: "/").contains("..") else { return nil }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: zoneinfo + "/" + relative, isDirectory: &isDirectory),
              !isDirectory.boolValue else { return nil }
        return TimeZone(identifier: relative)
    }

    /// The tz database zone whose offsets equal the rule's around every change of 2010–2037:
    /// the one the rule names when there is one (`CET`, `EST5EDT`), else the first of a
    /// continent's (Europe, the Americas, Asia, Australia and the Pacific first, Antarctica's
    /// research stations last).
    private static func matchingZone(_ rule: PosixZoneRule, daylight: PosixZoneRule.Daylight) -> TimeZone? {
        var instants: [Int] = []
        for year in 2010...2037 {
            for change in [rule.start(of: year, daylight), rule.end(of: year, daylight)] {
                instants += [change - 3600, change + 3600]
            }
            instants.append(rule.start(of: year, daylight) / 2 + rule.end(of: year, daylight) / 2)
        }
        let dates = instants.map { Date(timeIntervalSince1970: TimeInterval($0)) }
        let wanted = instants.map { -rule.offset(at: $0) }
        let regions = ["Europe/", "America/", "Asia/", "Australia/", "Pacific/", "Africa/", "Atlantic/", "Indian/"]
        func rank(_ identifier: String) -> Int {
            regions.firstIndex { identifier.hasPrefix($0) } ?? (identifier.hasPrefix("Antarctica/") ? regions.count + 1 : regions.count)
        }
        let named = [rule.standardName, rule.databaseName].compactMap { $0 }
            + TimeZone.knownTimeZoneIdentifiers.sorted { (rank($0), $0) < (rank($1), $1) }
        for identifier in named {
            guard let zone = TimeZone(identifier: identifier),
                  zone.secondsFromGMT(for: dates[0]) == wanted[0], zone.secondsFromGMT(for: dates[2]) == wanted[2] else { continue }
            if zip(dates, wanted).allSatisfy({ zone.secondsFromGMT(for: $0) == $1 }) { return zone }
        }
        return nil
    }
}

/// A POSIX `TZ` rule as tzset(3) reads it. Offsets are POSIX's: seconds local time adds to
/// reach UTC (positive west of Greenwich).
package struct PosixZoneRule {
    struct Daylight {
        var offset: Int
        var start: Change
        var end: Change
    }

    /// When daylight saving starts or ends, in the local time then in force.
    struct Change {
        enum Day { case julianNoLeap(Int), zeroBased(Int), weekday(month: Int, week: Int, day: Int) }
        var day: Day
        var time: Int
    }

    var standardName: String
    var standardOffset: Int
    var daylight: Daylight?
    /// The name the tz database gives such a rule in whole hours (`EST5EDT`, `CST6CDT`).
    var databaseName: String?

    init?(_ text: String) {
        var scanner = Scanner(Array(text.utf8))
        guard let name = scanner.name(), let offset = scanner.offset(hoursUpTo: 24) else { return nil }
        standardName = name
        standardOffset = offset
        if scanner.atEnd { return }
        guard scanner.name() != nil else { return nil }
        let daylightOffset = scanner.startsOffset ? scanner.offset(hoursUpTo: 24) : offset - 3600
        guard let daylightOffset else { return nil }
        // Without a rule glibc uses the US one (its `posixrules` default).
        var rules = scanner.atEnd ? Scanner(Array(",M3.2.0,M11.1.0".utf8)) : scanner
        guard rules.take(UInt8(ascii: ",")), let start = rules.change(), rules.take(UInt8(ascii: ",")),
              let end = rules.change(), rules.atEnd else { return nil }
        daylight = Daylight(offset: daylightOffset, start: start, end: end)
        if offset % 3600 == 0, let daylightName = String(decoding: text.utf8.prefix { $0 != 0x2C }, as: UTF8.self)
            .split(whereSeparator: \.isNumber).last {
            databaseName = "\(name)\(offset / 3600)\(daylightName)"
        }
    }

    /// Seconds local time adds to reach UTC at `instant` (seconds since 1970, UTC).
    func offset(at instant: Int) -> Int {
        guard let daylight else { return standardOffset }
        let year = Self.civilYear(instant - standardOffset)
        let start = start(of: year, daylight), end = end(of: year, daylight)
        let inDaylight = start < end ? (start <= instant && instant < end) : (instant < end || instant >= start)
        return inDaylight ? daylight.offset : standardOffset
    }

    /// The instants (UTC) daylight saving starts and ends in `year`.
    func start(of year: Int, _ daylight: Daylight) -> Int {
        Self.localDay(daylight.start.day, year: year) * 86_400 + daylight.start.time + standardOffset
    }

    func end(of year: Int, _ daylight: Daylight) -> Int {
        Self.localDay(daylight.end.day, year: year) * 86_400 + daylight.end.time + daylight.offset
    }

    /// Days from 1970-01-01 to the change's day in `year`.
    static func localDay(_ day: Change.Day, year: Int) -> Int {
        let january1 = daysFromCivil(year, 1, 1)
        switch day {
        case .julianNoLeap(let n):
            // 1...365, February 29 never counted.
            return january1 + n - 1 + (isLeap(year) && n >= 60 ? 1 : 0)
        case .zeroBased(let n):
            return january1 + n
        case .weekday(let month, let week, let weekday):
            let first = daysFromCivil(year, month, 1)
            let firstWeekday = ((first % 7) + 11) % 7   // 1970-01-01 was a Thursday (4)
            var day = first + (weekday - firstWeekday + 7) % 7 + (week - 1) * 7
            let nextMonth = month == 12 ? daysFromCivil(year + 1, 1, 1) : daysFromCivil(year, month + 1, 1)
            while day >= nextMonth { day -= 7 }   // week 5: the last such weekday of the month
            return day
        }
    }

    static func isLeap(_ year: Int) -> Bool { InstantText.isLeap(Int64(year)) }

    static func civilYear(_ instant: Int) -> Int {
        Int(InstantText.civil(fromDays: InstantText.floorDivision(Int64(instant), 86_400)).year)
    }

    package static func daysFromCivil(_ year: Int, _ month: Int, _ day: Int) -> Int {
        Int(InstantText.days(fromYear: Int64(year), month: Int64(month), day: Int64(day)))
    }

    /// Reads the rule's parts from its bytes.
    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { index == bytes.count }
        var startsOffset: Bool { !atEnd && (isDigit(bytes[index]) || bytes[index] == 0x2B || bytes[index] == 0x2D) }

        func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }
        func isLetter(_ byte: UInt8) -> Bool { (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) }

        mutating func take(_ byte: UInt8) -> Bool {
            guard !atEnd, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        /// Three or more letters, or `<…>` of three or more letters, digits, `+` and `-`.
        mutating func name() -> String? {
            let start = index
            if take(UInt8(ascii: "<")) {
                while !atEnd, bytes[index] != UInt8(ascii: ">") {
                    guard isLetter(bytes[index]) || isDigit(bytes[index]) || bytes[index] == 0x2B || bytes[index] == 0x2D else { return nil }
                    index += 1
                }
                guard index - start - 1 >= 3, take(UInt8(ascii: ">")) else { return nil }
                return String(decoding: bytes[start + 1..<index - 1], as: UTF8.self)
            }
            while !atEnd, isLetter(bytes[index]) { index += 1 }
            return index - start >= 3 ? String(decoding: bytes[start..<index], as: UTF8.self) : nil
        }

        mutating func number(digits: ClosedRange<Int>) -> Int? {
            let start = index
            while !atEnd, isDigit(bytes[index]), index - start < digits.upperBound { index += 1 }
            guard digits.contains(index - start) else { return nil }
            return bytes[start..<index].reduce(0) { $0 * 10 + Int($1 - 0x30) }
        }

        /// `[+-]hh[:mm[:ss]]` in seconds.
        mutating func offset(hoursUpTo limit: Int) -> Int? {
            let sign = take(UInt8(ascii: "-")) ? -1 : 1
            if sign == 1 { _ = take(UInt8(ascii: "+")) }
            guard let hours = number(digits: 1...3), hours <= limit else { return nil }
            var seconds = hours * 3600
            if take(UInt8(ascii: ":")) {
                guard let minutes = number(digits: 1...2), minutes < 60 else { return nil }
                seconds += minutes * 60
                if take(UInt8(ascii: ":")) {
                    guard let secs = number(digits: 1...2), secs < 60 else { return nil }
                    seconds += secs
                }
            }
            return sign * seconds
        }

        /// `Jn`, `n` or `Mm.w.d`, then an optional `/time` (default 02:00).
        mutating func change() -> Change? {
            let day: Change.Day
            if take(UInt8(ascii: "J")) {
                guard let n = number(digits: 1...3), (1...365).contains(n) else { return nil }
                day = .julianNoLeap(n)
            } else if take(UInt8(ascii: "M")) {
                guard let month = number(digits: 1...2), (1...12).contains(month), take(UInt8(ascii: ".")),
                      let week = number(digits: 1...1), (1...5).contains(week), take(UInt8(ascii: ".")),
                      let weekday = number(digits: 1...1), weekday <= 6 else { return nil }
                day = .weekday(month: month, week: week, day: weekday)
            } else {
                guard let n = number(digits: 1...3), n <= 365 else { return nil }
                day = .zeroBased(n)
            }
            var time = 7200
            if take(UInt8(ascii: "/")) {
                guard let given = offset(hoursUpTo: 167) else { return nil }
                time = given
            }
            return Change(day: day, time: time)
        }
    }
}
