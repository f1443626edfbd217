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

/// `enlog history --format gpx|geojson|csv [--date DAY | --since … --until …]`: the history as a
/// track file on standard output.
struct HistoryExport: ParsableArguments {
    @Option(help: ArgumentHelp("Write the fixes as a track file: gpx (1.1), geojson or csv.", valueName: "format"))
    var format: TrackFormat?
    @Option(help: ArgumentHelp("Only the fixes of this day (YYYY-MM-DD in note.time_zone).", valueName: "date"))
    var date: String?
    @Option(help: ArgumentHelp("Only fixes before this date (YYYY-MM-DD, or ISO 8601 date and time).", valueName: "date"))
    var until: String?

    var isRequested: Bool { format != nil || date != nil || until != nil }

    func run(global: GlobalOptions, since: Date?) async throws {
        guard let format else { throw ValidationError("--date and --until go with --format gpx|geojson|csv") }
        let context = try global.context()
        let config = context.config
        let zone = TrackDay.timeZone(config: config)
        if date != nil, since != nil { throw ValidationError("--date is a whole day: leave out --since and --until") }
        let range = try DateRange.parse(since: nil, until: until, date: date, zone: zone)
        let (start, end) = (range.from ?? since, range.to)
        let outbox = try context.outbox(.read)
        let records = try await outbox.history(from: start ?? .distantPast, to: end ?? .distantFuture)
        let fixes = try records.map { try $0.fix() }
        try Terminal.standardOutput(bytes: Data(TrackWriter.write(fixes, as: format, name: date.map { "enlog \($0)" } ?? "enlog history").utf8))
    }
}

extension TrackFormat: ExpressibleByArgument {}
