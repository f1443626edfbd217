import Foundation
import Support
import Configuration
import Capture
import Compose
import Outbox

/// "On this day" in a digest: where the user was on the same calendar date in each earlier year
/// of the history, told by the names of the places they stayed at and the places their notes
/// name. Years without a fix on that date are left out.
///
/// Dates are days of the digest's own zone (`note.time_zone`), from their first instant to the
/// next day's, as `TrackDay` has them. 29 February comes back once a year: in a leap year on its
/// own date (only earlier leap years have one), in other years with 28 February. So a digest of
/// 29 February 2028 looks at 29 February 2024 and 2020; one of 28 February 2027 looks at 28
/// February 2026, 2025, 2024… and at 29 February 2024 and 2020.
///
/// Bounded: the history's first fix is one lookup of the timestamp index, each earlier date one
/// more; only a date with fixes has its fixes, visits and notes read (a day's worth, as the
/// timeline reads them), and at most `yearsBack` years are looked at.
package enum OnThisDay {
    package struct Year: Sendable, Equatable {
        /// The earlier date, yyyy-MM-dd.
        package var day: String
        /// Named places in the order they were reached, else the longest stay's position, else
        /// where the day's fixes were.
        package var places: [String]
    }

    /// Older years than this are not looked at: a bound on the queries a digest makes.
    static let yearsBack = 100
    /// A day that took in more places than this lists its first ones.
    static let placesPerYear = 6

    /// The same date as `day` in each earlier year from `firstYear`, newest first; a date a year
    /// lacks (29 February) or the zone skipped is left out, and 29 February comes with 28
    /// February in a year without its own.
    static func earlierDates(of day: TrackDay, since firstYear: Int) -> [TrackDay] {
        let parts = day.name.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3 else { return [] }
        let (year, month, date) = (parts[0], parts[1], parts[2])
        func named(_ year: Int, _ month: Int, _ date: Int) -> TrackDay? {
            TrackDay(String(format: "%04d-%02d-%02d", year, month, date), timeZone: day.timeZone)
        }
        let withLeapDay = month == 2 && date == 28 && named(year, 2, 29) == nil
        var dates: [TrackDay] = []
        for earlier in stride(from: year - 1, through: max(firstYear, year - yearsBack), by: -1) {
            if let same = named(earlier, month, date) { dates.append(same) }
            if withLeapDay, let leapDay = named(earlier, 2, 29) { dates.append(leapDay) }
        }
        return dates
    }

    /// The earlier years of `day` that have fixes on its date, newest first.
    package static func years(of day: TrackDay, outbox: OutboxStore, detector: StayDetector) async throws -> [Year] {
        guard let first = try await outbox.firstFixTime() else { return [] }
        let firstYear = Int(TrackDay(containing: first, timeZone: day.timeZone).name.prefix(4)) ?? 0
        var years: [Year] = []
        var known: [PlaceRecord]?
        for date in earlierDates(of: day, since: firstYear) {
            guard try await outbox.hasFixes(from: date.start, to: date.end) else { continue }
            if known == nil { known = try await outbox.places() }
            years.append(try await year(date, outbox: outbox, detector: detector, known: known ?? []))
        }
        return years
    }

    /// One earlier date: the names of the places of its stays (the place book's, else an import's
    /// own) and of its notes, in time order, once each.
    static func year(_ date: TrackDay, outbox: OutboxStore, detector: StayDetector, known: [PlaceRecord]) async throws -> Year {
        let (found, points) = try await Timeline.stays(outbox: outbox, detector: detector, from: date.start, to: date.end)
        let lower = date.start.timeIntervalSince1970, upper = date.end.timeIntervalSince1970
        let stays = found.filter { $0.departure > lower && $0.arrival < upper }
        var named: [(time: Double, name: String)] = stays.compactMap { stay in
            let name = PlaceBook.nearest(to: stay, in: known).flatMap { known[$0].name } ?? stay.name
            return name.map { (stay.arrival, $0) }
        }
        for (note, fix) in try await outbox.notedPlaces(from: date.start, to: date.end) {
            if let name = note.placeName, !name.isEmpty { named.append((fix.timestamp.timeIntervalSince1970, name)) }
        }
        var places: [String] = []
        for (_, name) in named.sorted(by: { $0.time < $1.time }) where !places.contains(name) {
            places.append(name)
        }
        if places.isEmpty {
            if let longest = stays.max(by: { $0.duration < $1.duration }) {
                places = [Self.position(longest.latitude, longest.longitude)]
            } else {
                let moving = points.filter { (lower..<upper).contains($0.time) }
                if !moving.isEmpty {
                    let middle = moving[moving.count / 2]
                    places = ["on the move near " + Self.position(middle.latitude, middle.longitude)]
                }
            }
        }
        return Year(day: date.name, places: Array(places.prefix(placesPerYear)))
    }

    static func position(_ latitude: Double, _ longitude: Double) -> String {
        String(format: "%.5f, %.5f", latitude, longitude)
    }

    /// "2025: Home, Café Rosa", or "2024 (29 February): …" for a date other than the digest's own.
    static func line(_ year: Year, for day: TrackDay) -> String {
        var label = String(year.day.prefix(4))
        if year.day.dropFirst(4) != day.name.dropFirst(4), let earlier = TrackDay(year.day, timeZone: day.timeZone) {
            let formatter = TrackDay.formatter(day.timeZone)
            formatter.dateFormat = "d MMMM"
            label += " (\(formatter.string(from: earlier.start)))"
        }
        return "\(label): \(year.places.joined(separator: ", "))"
    }
}
