import ArgumentParser
import Foundation
import Compose
import Outbox

/// `--since`, `--until` and `--date` as the commands that select by time read them (`history
/// --format`, `export`): a whole day in `zone`, or either end of a range, each a day (local
/// midnight) or an ISO 8601 date and time.
enum DateRange {
    static func parse(since: String?, until: String?, date: String?, zone: TimeZone) throws -> (from: Date?, to: Date?) {
        if let date {
            guard since == nil, until == nil else { throw ValidationError("--date is a whole day: leave out --since and --until") }
            guard let day = TrackDay(date, timeZone: zone) else {
                throw ValidationError("--date '\(date)' is not a date like 2026-11-22")
            }
            return (day.start, day.end)
        }
        return (try since.map { try point($0, flag: "--since", zone: zone) }, try until.map { try point($0, flag: "--until", zone: zone) })
    }

    static func point(_ text: String, flag: String, zone: TimeZone) throws -> Date {
        guard let date = TrackDay.moment(text, timeZone: zone) else {
            throw ValidationError("\(flag) '\(text)' is not a date like 2026-11-22 or 2026-11-22T08:00:00Z")
        }
        return date
    }
}
