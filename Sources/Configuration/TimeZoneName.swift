import Foundation
import Support

/// Time zone names read as the C library reads `TZ` (tzset(3), glibc), so that a note is stamped
/// with the offset `date` shows. Foundation reads `UTC+14` as 14 hours *ahead* of UTC (POSIX,
/// glibc and `date` mean 14 hours behind), turns `<+14>-14` and `:Europe/Paris` into UTC, and
/// knows no daylight-saving rule strings: so glibc answers what the offsets are, and this type
/// keeps only what glibc cannot answer (see `resolve`).
package enum TimeZoneName {
    /// Where glibc looks for a name first (`TZDIR` aside, which enlog does not follow).
    static let zoneinfo = "/usr/share/zoneinfo"

    /// The zone `text` names: a file of the tz database (`Europe/Paris`, `EST5EDT`, `UTC`, with
    /// or without glibc's leading `:`), else a POSIX rule `STD offset [DST [offset]
    /// [,start[/time],end[/time]]]` (`UTC+14` is 14 hours behind UTC; `<+14>-14` quotes a
    /// name, 14 hours ahead), whose offsets glibc gives. nil when `text` is none of these
    /// (glibc then uses UTC).
    ///
    /// What glibc cannot answer, and is kept here:
    /// - whether `text` is a rule at all: glibc reads any text, taking what it cannot parse for
    ///   UTC without a word (`Nowhere/Land` is a zone named "Nowhere" at +00:00), and enlog
    ///   warns instead (`isPosixRule`);
    /// - which Foundation `TimeZone` a rule with daylight saving is, which every date in enlog is
    ///   computed in: the tz database zone whose offsets equal glibc's at every change of
    ///   2010–2037 and between them (rules changed in many places up to 2007: the US, New
    ///   Zealand).
    package static func resolve(_ text: String) -> TimeZone? {
        let name = text.hasPrefix(":") ? String(text.dropFirst()) : text
        if let zone = databaseZone(name) { return zone }
        guard !text.hasPrefix(":"), isPosixRule(name) else { return nil }
        let clock = CLibraryClock(tz: name)
        let changes = clock.changes(from: Self.firstYear, to: Self.lastYear)
        if changes.isEmpty { return TimeZone(secondsFromGMT: clock.offsets(at: [Self.firstYear])[0]) }
        return matchingZone(clock, changes: changes)
    }

    /// 2010-01-01 and 2038-01-01, UTC: the years a rule is compared with the tz database in.
    private static let firstYear = 1_262_304_000
    private static let lastYear = 2_145_916_800

    /// `STD offset [DST [offset] [,start[/time],end[/time]]]` as POSIX writes it: a name of three
    /// or more letters or `<…>` of letters, digits and signs, an offset `[+-]hh[:mm[:ss]]`, and a
    /// change `Jn`, `n` or `Mm.w.d` with an optional `/time`.
    package static func isPosixRule(_ text: String) -> Bool {
        let name = "(?:[A-Za-z]{3,}|<[A-Za-z0-9+-]{3,}>)"
        let offset = "[+-]?(?:[01]?[0-9]|2[0-4])(?::[0-5]?[0-9](?::[0-5]?[0-9])?)?"
        let change = "(?:J(?:36[0-5]|3[0-5][0-9]|[12]?[0-9]{1,2})|(?:36[0-5]|3[0-5][0-9]|[12]?[0-9]{1,2})"
            + "|M(?:1[0-2]|[1-9])\\.[1-5]\\.[0-6])(?:/[+-]?[0-9]{1,3}(?::[0-5]?[0-9](?::[0-5]?[0-9])?)?)?"
        // Built at each call: a Regex is not Sendable, and a rule is read once or twice a run.
        let rule = try! Regex("\(name)\(offset)(?:\(name)(?:\(offset))?(?:,\(change),\(change))?)?")
        return text.wholeMatch(of: rule) != nil
    }

    /// A name that is a file of the tz database and a zone Foundation knows by that name: the
    /// same data glibc reads.
    private static func databaseZone(_ name: String) -> TimeZone? {
        var relative = name
        if relative.hasPrefix(zoneinfo + "/") { relative.removeFirst(zoneinfo.count + 1) }
        guard !relative.isEmpty, !relative.hasPrefix("/"), !relative.split(separator: "/").contains("..") else { return nil }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: zoneinfo + "/" + relative, isDirectory: &isDirectory),
              !isDirectory.boolValue else { return nil }
        return TimeZone(identifier: relative)
    }

    /// The tz database zone whose offsets equal glibc's for the rule on both sides of every
    /// change of 2010–2037 and halfway between them: the one the rule names when there is one
    /// (`CET`, `EST5EDT`), else the first of a continent's (Europe, the Americas, Asia,
    /// Australia and the Pacific first, Antarctica's research stations last).
    private static func matchingZone(_ clock: CLibraryClock, changes: [Int]) -> TimeZone? {
        var instants: [Int] = []
        for (index, change) in changes.enumerated() {
            instants += [change - 1, change]
            if index + 1 < changes.count { instants.append(change / 2 + changes[index + 1] / 2) }
        }
        let wanted = clock.offsets(at: instants)
        let dates = instants.map { Date(timeIntervalSince1970: TimeInterval($0)) }
        let regions = ["Europe/", "America/", "Asia/", "Australia/", "Pacific/", "Africa/", "Atlantic/", "Indian/"]
        func rank(_ identifier: String) -> Int {
            regions.firstIndex { identifier.hasPrefix($0) } ?? (identifier.hasPrefix("Antarctica/") ? regions.count + 1 : regions.count)
        }
        let named = clock.names.filter { !$0.isEmpty }
            + TimeZone.knownTimeZoneIdentifiers.sorted { (rank($0), $0) < (rank($1), $1) }
        for identifier in named {
            guard let zone = TimeZone(identifier: identifier),
                  zone.secondsFromGMT(for: dates[0]) == wanted[0], zone.secondsFromGMT(for: dates[1]) == wanted[1] else { continue }
            if zip(dates, wanted).allSatisfy({ zone.secondsFromGMT(for: $0) == $1 }) { return zone }
        }
        return nil
    }
}

/// The C library's clock for a `TZ` value: offsets from UTC as localtime_r(3) gives them
/// (`tm_gmtoff`), which is what `date` and every program around enlog shows.
///
/// glibc reads `TZ` only from the environment, into process-wide state: each reading sets the
/// variable, calls tzset(3), reads, and puts the variable and the state back, all under one
/// lock. enlog reads zones while it reads its configuration (at start, and when `watch` reloads
/// it); nothing else in enlog calls the C library's time zone functions.
struct CLibraryClock {
    let tz: String

    private static let lock = NSLock()

    /// Seconds east of UTC at each instant (seconds since 1970, UTC).
    func offsets(at instants: [Int]) -> [Int] {
        withZone { instants.map(Self.offset(at:)) }
    }

    /// The zone's names as glibc reads them from the rule (`CET` and `CEST`; a tz database zone
    /// of that name is the likeliest match).
    var names: [String] {
        let rule = tz.prefix { $0 != "," }
        guard let standard = rule.firstRange(of: /[0-9+-]/) else { return [String(rule)] }
        return [String(rule), String(rule[..<standard.lowerBound])]
    }

    /// The instants in `first..<last` at which the offset changes (the first second of each new
    /// offset), found day by day and then to the second.
    func changes(from first: Int, to last: Int) -> [Int] {
        withZone {
            var found: [Int] = []
            var before = Self.offset(at: first)
            var day = first
            while day < last {
                let next = min(day + 86_400, last)
                let after = Self.offset(at: next)
                if after != before {
                    var (low, high) = (day, next)   // offset(low) == before, offset(high) != before
                    while high - low > 1 {
                        let middle = low + (high - low) / 2
                        if Self.offset(at: middle) == before { low = middle } else { high = middle }
                    }
                    found.append(high)
                    before = after
                }
                day = next
            }
            return found
        }
    }

    private static func offset(at instant: Int) -> Int {
        var time = time_t(instant)
        var local = tm()
        guard localtime_r(&time, &local) != nil else { return 0 }
        return local.tm_gmtoff
    }

    private func withZone<Result>(_ body: () -> Result) -> Result {
        Self.lock.lock()
        defer { Self.lock.unlock() }
        let saved = getenv("TZ").map { String(cString: $0) }
        setenv("TZ", tz, 1)
        tzset()
        defer {
            if let saved { setenv("TZ", saved, 1) } else { unsetenv("TZ") }
            tzset()
        }
        return body()
    }
}
