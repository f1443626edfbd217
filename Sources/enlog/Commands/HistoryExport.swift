import ArgumentParser
import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Auth
import Capture
import Compose
import Outbox
import Diary
import Sync
import Watch
import CoreCommands

/// What `enlog history` lists or exports: a window of time (`--since`, `--until`, or a whole day
/// with `--date`), every bound read in the one zone days are counted in (note.time_zone, else
/// TZ), and an optional track file format.
struct HistoryWindow: ParsableArguments {
    @Option(help: ArgumentHelp("Only fixes since this moment (YYYY-MM-DD in note.time_zone, or ISO 8601 date and time).",
                               valueName: "date"))
    var since: String?
    @Option(help: ArgumentHelp("Only fixes before this moment (YYYY-MM-DD in note.time_zone, or ISO 8601 date and time).",
                               valueName: "date"))
    var until: String?
    @Option(help: ArgumentHelp("Only the fixes of this day (YYYY-MM-DD in note.time_zone).", valueName: "date"))
    var date: String?
    @Option(help: ArgumentHelp("Write the fixes as a track file: gpx (1.1), geojson or csv.", valueName: "format"))
    var format: TrackFormat?

    /// The window's bounds (either may be open) in `zone`.
    func bounds(in zone: TimeZone) throws -> (start: Date?, end: Date?) {
        func moment(_ text: String?, _ flag: String) throws -> Date? {
            guard let text else { return nil }
            guard let date = TrackDay.moment(text, timeZone: zone) else {
                throw ValidationError("\(flag) '\(text)' is not a date like 2026-11-22 or 2026-11-22T08:00:00Z")
            }
            return date
        }
        if let date {
            guard since == nil, until == nil else { throw ValidationError("--date is a whole day: leave out --since and --until") }
            guard let day = TrackDay(date, timeZone: zone) else {
                throw ValidationError("--date '\(date)' is not a date like 2026-11-22")
            }
            return (day.start, day.end)
        }
        return (try moment(since, "--since"), try moment(until, "--until"))
    }

    /// Writes the fixes between `start` and `end` (with a note or not) as a track file on standard output.
    func export(_ format: TrackFormat, from outbox: OutboxStore, start: Date?, end: Date?) async throws {
        let records = try await outbox.history(from: start ?? .distantPast, to: end ?? .distantFuture)
        let fixes = try records.map { try $0.fix() }
        try Terminal.standardOutput(bytes: Data(TrackWriter.write(fixes, as: format, name: date.map { "enlog \($0)" } ?? "enlog history").utf8))
    }
}

extension TrackFormat: ExpressibleByArgument {}
