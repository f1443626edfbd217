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

struct Digest: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "digest",
        abstract: "Write one note for a day: its track (GPX), distance, time moving, places and route map.",
        discussion: """
            The day runs from its first instant to the next day's in note.time_zone (default: TZ, \
            else the system's): midnight, or 01:00 where clocks go forward at midnight. The note \
            carries the day's fixes as a GPX 1.1 attachment and, with map.style = tiles, the route \
            drawn on a map fitted to it. A day is digested once: asking again names the note it has \
            (drop that note with `enlog queue drop` to write it anew). Exit 66 when the day has no fix.

            With --since and --until, every day of the span that has fixes and no digest yet gets \
            one (--until's day is not included): a backfill after an import of years, resumable \
            (run it again and it goes on where it stopped). Each route map asks only for its own \
            tiles, through the tile cache; with many years, point map.tile_url at your own tile \
            server or set map.style = none (docs/stays.md).

            With --device, the digest of one phone's points alone (`enlog devices list`), titled \
            with its name and remembered apart: the whole history's digest of the day and each \
            device's are written once each. Exit 66 when the device sent no point that day.

            Examples:
              enlog digest                    yesterday
              enlog digest --date 2026-11-22
              enlog digest --no-sync --json
              enlog digest --since 2024-01-01 --until 2025-01-01 --no-sync
              enlog digest --device phone     yesterday, from one phone's points
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: ArgumentHelp("The day (YYYY-MM-DD; default: yesterday).", valueName: "date")) var date: String?
    @Option(help: ArgumentHelp("Backfill: the first day (YYYY-MM-DD).", valueName: "date")) var since: String?
    @Option(help: ArgumentHelp("Backfill: the day after the last (YYYY-MM-DD).", valueName: "date")) var until: String?
    @Flag(help: "Print the stored note as JSON.") var json = false
    @Flag(help: "Do not upload after writing.") var noSync = false
    @Option(help: ArgumentHelp("Only this phone's points (`enlog devices list`).", valueName: "name")) var device: String?

    func run() async throws {
        let context = try global.context()
        let config = context.config
        let zone = TrackDay.timeZone(config: config)
        if since != nil || until != nil {
            return try await DigestBackfill(context: context, since: since, until: until, date: date, json: json, noSync: noSync,
                                            device: device).run(zone: zone)
        }
        let day: TrackDay
        if let date {
            guard let named = TrackDay(date, timeZone: zone) else { throw ValidationError("--date '\(date)' is not a date like 2026-11-22") }
            day = named
        } else {
            day = TrackDay(containing: Date(), timeZone: zone).previous
        }
        let outbox = try context.outbox(.change)
        try await outbox.checkDevice(device)
        let account = (try? Account.credentialStore().loadIfPresent()).flatMap { $0 }.map { EvernoteAccount(credentials: $0).accountKey }
        let digest = context.digest(outbox: outbox, accountKey: account, device: device)
        switch try await digest.write(day) {
        case .alreadyThere(let id):
            Terminal.standardError("enlog: \(day.name) has \(device.map { "\($0)'s" } ?? "its") digest already: note \(id)")
            if json { try Terminal.standardOutput(try OutboxJSON.encode(try await outbox.note(id: id))) }
        case .written(let note, _, _, let mapProblem, let mapPending):
            if json {
                try Terminal.standardOutput(try OutboxJSON.encode(note))
            } else {
                try Terminal.standardOutput("logged note \(note.id!): \(note.title)")
            }
            if let mapProblem {
                Terminal.standardError(mapPending ? "enlog: note: no route map yet (\(mapProblem)); it is made before upload"
                                                  : "enlog: note: no route map (\(mapProblem))")
            }
            if !noSync, let credentials = try? Account.credentialStore().loadIfPresent() {
                let session = SyncSession(context: context, outbox: outbox, account: EvernoteAccount(credentials: credentials))
                if case .failed(let error) = await session.runOpportunistically(loggedNote: note.id!) {
                    Terminal.standardError("enlog: upload failed: \(error.reason); note \(note.id!) stays queued, run `enlog sync`")
                }
            }
        }
    }
}
