import ArgumentParser
import Foundation
import Support
import Configuration
import Compose
import Outbox
import Diary
import CoreCommands

struct TimelineCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "timeline",
        abstract: "Tell a day as the places you stayed at and the moves between them.",
        discussion: """
            Stays are found in every fix of the history (notes, watch's track, imports) with the \
            stays.* settings; an import's own visits (Google Timeline) are stays for their span. \
            The day runs from its first instant to the next day's in the zone it was lived in, as \
            for `enlog digest`: the offset an import states for its times (Google's newer exports), \
            else note.time_zone. Every time is printed with its offset. A stay that began the day \
            before is shown whole, with its date. docs/stays.md says how stays are found.

            Examples:
              enlog timeline                        today
              enlog timeline --date 2026-11-22 --json
              enlog timeline --since 2026-11-01 --until 2026-12-01 --json
              enlog timeline --device phone         the stays of one phone's points
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: ArgumentHelp("The day (YYYY-MM-DD in note.time_zone; default: today).", valueName: "date")) var date: String?
    @Option(help: ArgumentHelp("From this moment instead of a day (YYYY-MM-DD or ISO 8601).", valueName: "date")) var since: String?
    @Option(help: ArgumentHelp("Up to this moment (YYYY-MM-DD or ISO 8601).", valueName: "date")) var until: String?
    @Flag(help: "Print the timeline as JSON.") var json = false
    @Option(help: ArgumentHelp("Only this phone's points (`enlog devices list`); imports' visits left out.", valueName: "name"))
    var device: String?

    func run() async throws {
        try await OutboxStore.$deviceScope.withValue(device) { try await timeline() }
    }

    func timeline() async throws {
        let context = try global.context()
        let zone = TrackDay.timeZone(config: context.config)
        var range = try DateRange.parse(since: since, until: until, date: date, zone: zone)
        let (outbox, writable) = try context.outboxWritableIfPossible()
        try await outbox.checkDevice(device)
        // A day is read in the zone it was lived in (an import's stated offsets), else note.time_zone.
        var dayZone = zone
        if let date, let lived = try await LivedZones.day(date, outbox: outbox, fallback: zone) {
            range = (lived.start, lived.end)
            dayZone = lived.timeZone
        }
        let today = TrackDay(containing: Date(), timeZone: zone)
        let start = range.from ?? (since == nil && until == nil ? today.start : .distantPast)
        let end = range.to ?? (since == nil && until == nil ? today.end : Date())
        guard start < end else { throw ValidationError("--since must come before --until") }
        let detector = StayDetector(config: context.config)
        let timeline = try await Timeline.build(outbox: outbox, detector: detector,
                                                places: PlaceBook(context: context, outbox: outbox, detector: detector,
                                                                  keeping: writable),
                                                from: start, to: end, timeZone: dayZone)
        if json {
            try Terminal.standardOutput(try JSONOutput.encode(timeline))
        } else {
            try Terminal.standardOutput(TimelineText.lines(timeline).joined(separator: "\n"))
        }
    }
}
