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

struct Queue: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queue",
        abstract: "Inspect and manage the notes waiting in the outbox.",
        discussion: """
            Notes move through pending, sending and synced, or failed (retried later) and parked \
            (kept, not retried); or exported: written to an ENEX file by `enlog export --new`, \
            which sync leaves alone.

            Examples:
              enlog queue list --state failed    failed notes, with their last error
              enlog queue show 3 --json          a note's state, metadata and ENML
              enlog queue retry 3                put a failed or parked note back in line
              enlog queue drop 3 --yes           delete a note without asking
            """,
        subcommands: [List.self, Show.self, Retry.self, Drop.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List outbox notes, oldest first.",
            discussion: """
                One line per note: id, state, time queued, title, then "(address pending)" and "(map pending)" \
                for a note still waiting for its address or its map, and the error of a failed or parked one. \
                The time queued is local time in note.time_zone with its offset (2026-11-22T09:00:05+01:00); \
                --utc prints it in UTC. --json gives every time in UTC.

                Examples:
                  enlog queue list
                  enlog queue list --state parked
                  enlog queue list --json
                """)
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print JSON.") var json = false
        @Flag(help: "Print the time queued in UTC rather than in note.time_zone.") var utc = false
        @Option(help: ArgumentHelp("Only notes in this state: \(OutboxNote.State.allCases.map(\.rawValue).joined(separator: ", ")).", valueName: "state"))
        var state: OutboxNote.State?

        func run() async throws {
            let context = try global.context()
            let outbox = try context.outbox(.read)
            let zones = LivedZones(fallback: TrackDay.timeZone(config: context.config))
            let notes = if let state { try await outbox.notes(state: state) } else { try await outbox.allNotes() }
            let mapsPending = try await outbox.noteIdsWithPendingMaps()
            let exports = try await outbox.exportRecords()
            if json {
                try Terminal.standardOutput(try OutboxJSON.encode(notes, mapsPending: mapsPending, exports: exports))
            } else if notes.isEmpty {
                Terminal.standardError("the outbox is empty" + (state.map { " of \($0.rawValue) notes" } ?? ""))
            } else {
                for note in notes {
                    try Terminal.standardOutput(OutboxJSON.line(note, mapPending: note.id.map(mapsPending.contains) ?? false,
                                                                export: note.id.flatMap { exports[$0] },
                                                                time: utc ? OutboxJSON.timestamp : zones.text))
                }
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show",
            abstract: "Print a note's ENML.",
            discussion: """
                Examples:
                  enlog queue show 3                      the ENML
                  enlog queue show 3 --json               state, metadata and ENML as JSON
                  enlog queue show 3 | enlog validate -   check it
                  enlog queue show 3 --resource HASH > x.pdf   a map or attachment

                The note's resources are listed on stderr, one line each: "resource" (its map) or \
                "attachment" (a file or photo you attached), hash, type, size in pixels, bytes, file \
                name; with --json under "resources", each with its "kind".
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Note id (from `enlog queue list`).") var id: Int64
        @Flag(help: "Print the note's state and metadata with its ENML, as JSON.") var json = false
        @Option(help: ArgumentHelp("Write this resource's bytes to standard output (not a terminal).", valueName: "hash"))
        var resource: String?

        func run() async throws {
            let outbox = try global.context().outbox(.read)
            let note = try await outbox.note(id: id)
            let resources = try await outbox.resources(of: id)
            if let resource {
                guard let found = resources.first(where: { $0.hash == resource.lowercased() }) else {
                    throw ValidationError("note \(id) has no resource \(resource)"
                        + (resources.isEmpty ? " (it has none)" : " (it has \(resources.map(\.hash).joined(separator: ", ")))"))
                }
                if isatty(STDOUT_FILENO) == 1 {
                    throw ValidationError("refusing to write \(found.mime) bytes to a terminal: redirect the output (> \(found.fileName ?? "file"))")
                }
                try Terminal.standardOutput(bytes: found.body)
                return
            }
            if json {
                let pending = try await outbox.pendingMap(of: id) != nil
                try Terminal.standardOutput(try OutboxJSON.encodeWithContent(note, resources: resources, mapPending: pending,
                                                                             export: try await outbox.exportRecord(of: id)))
            } else {
                try Terminal.standardOutput(note.content)
                for resource in resources { Terminal.standardError(OutboxJSON.line(resource)) }
                if try await outbox.pendingMap(of: id) != nil { Terminal.standardError("map pending: made before upload") }
            }
        }
    }

    struct Retry: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "retry",
            abstract: "Put a failed, parked, exported or stuck note back in line for upload.",
            discussion: """
                A note left `sending` by a sync that died or timed out is looked up in Evernote by \
                the next sync before it is created, so it is never uploaded twice. Refused (exit 75) \
                while a sync is running. Also lifts the wait a rate limit from Evernote imposed. \
                An exported note is for when its ENEX file was never imported: the next sync still \
                looks for it first, in every notebook, by its enlog.id.

                Examples:
                  enlog queue retry 3 && enlog sync
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Note id.") var id: Int64

        func run() async throws {
            let outbox = try global.context().outbox(.change)
            let result = try await SendingNoteRecovery.retry(id, outbox: outbox)
            // Asking for a retry is asking not to wait: Evernote's rate limit, if it still holds,
            // is met again by the next sync, which then waits anew.
            let lifted = try await outbox.liftRateLimitHold()
            try Terminal.standardOutput("note \(id) is \(result.note.state.rawValue) again"
                + (result.wasSending ? "; the next sync first checks whether Evernote already has it" : "")
                + (result.wasExported ? "; the next sync first looks for it in Evernote, in case its ENEX file was imported" : "")
                + (lifted.map { "; the wait for Evernote's rate limit (until \(InstantText.string($0))) is lifted" } ?? ""))
        }
    }

    struct Drop: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "drop",
            abstract: "Delete a note from the outbox for good.",
            discussion: """
                Asks first on a terminal; elsewhere it refuses without --yes.

                Examples:
                  enlog queue drop 3
                  enlog queue drop 3 --yes
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Note id.") var id: Int64
        @Flag(name: .shortAndLong, help: "Do not ask for confirmation.") var yes = false

        func run() async throws {
            let outbox = try global.context().outbox(.change)
            let note = try await outbox.note(id: id)
            if !yes {
                guard isatty(STDIN_FILENO) == 1 else {
                    throw ValidationError("refusing to drop note \(id) without confirmation; pass --yes")
                }
                StandardError.write(TerminalText.oneLine("drop note \(id) (\(note.state.rawValue)) \"\(note.title)\"? [y/N] "))
                guard let answer = readLine(), ["y", "yes"].contains(answer.lowercased()) else {
                    Terminal.standardError("kept note \(id)")
                    return
                }
            }
            let result = try await SendingNoteRecovery.drop(id, outbox: outbox)
            try Terminal.standardOutput("dropped note \(id)")
            if result.wasSending {
                Terminal.standardError("enlog: note: note \(id) was being sent when its sync stopped; it may already be in Evernote")
            }
        }
    }
}

extension OutboxNote.State: ExpressibleByArgument {}

struct History: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "List the fixes notes were written at, oldest first.",
        discussion: """
            One line per fix, always five tab-separated columns: time, latitude,longitude, \
            altitude, accuracy, source ("-" when unknown). --track also lists the fixes without \
            a note: the route watch keeps and imported tracks; without it, a line on stderr says \
            how many such fixes the span holds. --format exports every fix. \
            The time is local time where the fix was lived, with its offset \
            (2017-05-02T21:17:00+10:00): the offset its import stated (Google's newer exports), \
            else note.time_zone's; --utc prints UTC. --json and --format keep UTC. \
            --since and --until are read in note.time_zone (default: TZ, else the system's); \
            --date is the day in the zone it was lived in, as for `enlog timeline`.

            Examples:
              enlog history --since 2026-11-01
              enlog history --since 2026-11-22T08:00:00Z --json
              enlog history --track --since 2026-11-22
              enlog history | cut -f2
              enlog history --date 2026-11-22
              enlog history --date 2026-11-22 --format gpx > day.gpx
            """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var window: HistoryWindow
    @Flag(help: "Print JSON.") var json = false
    @Flag(help: "Also list fixes without a note (the track watch keeps, imported tracks).") var track = false
    @Flag(help: "Print times in UTC rather than where each fix was lived.") var utc = false

    func run() async throws {
        if window.format != nil && json { throw ValidationError("--json and --format are two outputs: choose one") }
        let context = try global.context()
        let config = context.config
        var (start, end) = try window.bounds(in: config.timeZone)
        let outbox = try context.outbox(.read)
        // A day is read in the zone it was lived in (an import's stated offsets), else note.time_zone.
        if let date = window.date, let lived = try await LivedZones.day(date, outbox: outbox, fallback: config.timeZone) {
            (start, end) = (lived.start, lived.end)
        }
        if let format = window.format { return try await window.export(format, from: outbox, start: start, end: end) }
        let fixes = try await outbox.history(since: start, until: end, notedOnly: !track)
        if json {
            try Terminal.standardOutput(try OutboxJSON.encode(fixes))
        } else {
            // The offsets stated around the listed fixes only, not the whole history's.
            var zones = LivedZones(fallback: config.timeZone)
            if !utc, let first = fixes.first, let last = fixes.last {
                zones = try await LivedZones.load(outbox: outbox, from: first.timestamp, to: last.timestamp.addingTimeInterval(1),
                                                  fallback: config.timeZone)
            }
            for fix in fixes {
                try Terminal.standardOutput(OutboxJSON.line(fix, time: { fix in
                    if utc { return OutboxJSON.timestamp(fix.timestamp) }
                    if let offset = fix.utcOffset { return LivedZones.text(fix.timestamp, offset: offset) }
                    return zones.text(fix.timestamp)
                }))
            }
        }
        if !track {
            // The track and imports are most of a history: say they are there and how to see them.
            let left = try await outbox.unnotedFixCount(since: start, until: end)
            if left > 0 { Terminal.standardError(Self.trackHint(left)) }
        }
    }

    /// "enlog: 3605 more fixes without a note here …": on standard error, so the columns stay as they are.
    static func trackHint(_ count: Int) -> String {
        "enlog: \(count) more fix\(count == 1 ? "" : "es") without a note in this span (watch's track, imports): "
            + "--track lists \(count == 1 ? "it" : "them"), --format gpx exports the track"
    }
}

struct ConfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config", abstract: "Show the effective configuration.",
        discussion: """
            Examples:
              enlog config show
              enlog config show --json
            """,
        subcommands: [Show.self])

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show",
            abstract: "Print every setting, its value and where it came from; secrets are hidden.",
            discussion: """
                The text form is TOML that can be pasted into config.toml; unset settings and secrets \
                are commented out. Each line ends with where its value came from and the variable that \
                overrides it.

                Examples:
                  enlog config show
                  enlog config show --json
                  ENLOG_GEOCODING_TIMEOUT=5 enlog config show
                """)
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let config = try global.loadConfig()
            try Terminal.standardOutput(json ? try ConfigReport.json(config) : ConfigReport.text(config))
        }
    }
}
