import ArgumentParser
import Foundation
import Support
import Compose
import Outbox
import Diary
import Sync
import Export
import CoreCommands

struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write the outbox's notes as an ENEX file, which any Evernote client imports.",
        discussion: """
            ENEX (Evernote's export format, 4.0) needs no account, no API key and no network: \
            Evernote (File > Import), Joplin, Obsidian's importer, Apple Notes, UpNote and Notion \
            import it. Every note goes with its map, photos and files; a digest with its route \
            and GPX track.

            Without --new the file is a copy: nothing in the outbox changes. With --new the file \
            is where the notes go instead of a sync: it holds the notes no sync and no export has \
            taken yet, and once it is written they are `exported`, which `sync` never uploads. \
            `enlog queue retry ID` puts one back in the queue (if you never imported the file); \
            the next sync then first looks for it in Evernote by its enlog.id. --new never \
            replaces an existing file.

            Exit status: 0 when written (or nothing to export), 1 when notes had to be left out \
            (the rest is written), 73 when the file cannot be created, 74 when it cannot be \
            written, 75 when a sync is running (with --new).

            Examples:
              enlog export --enex diary.enex          every note, as a copy
              enlog export --enex new.enex --new      the queued notes, marked exported
              enlog export --enex "enlog-$(date +%F).enex" --new
              enlog export --enex - --date 2026-11-22 > day.enex
              enlog export --enex d.enex --only digests --since 2026-11-01
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: ArgumentHelp("Write ENEX to this file; - for standard output.", valueName: "file"))
    var enex: String
    @Flag(help: "Only notes not yet synced or exported, and mark them exported: the file is their destination.")
    var new = false
    @Option(help: ArgumentHelp("Only notes at fixes since this date (YYYY-MM-DD, or ISO 8601 date and time).", valueName: "date"))
    var since: String?
    @Option(help: ArgumentHelp("Only notes at fixes before this date (YYYY-MM-DD, or ISO 8601 date and time).", valueName: "date"))
    var until: String?
    @Option(help: ArgumentHelp("Only the notes of this day (YYYY-MM-DD in note.time_zone).", valueName: "date"))
    var date: String?
    @Option(help: ArgumentHelp("Only notes (no digests), or only digests.", valueName: "notes|digests"))
    var only: ExportSelection.Kind?
    @Option(help: ArgumentHelp("Only notes in this state (repeatable): \(OutboxNote.State.allCases.map(\.rawValue).joined(separator: ", ")).",
                               valueName: "state"))
    var state: [OutboxNote.State] = []
    @Flag(name: .shortAndLong, help: "Print one line per note on stderr (and why a note was left out).") var verbose = false
    @Flag(name: .shortAndLong, help: "Print nothing but errors.") var quiet = false

    func validate() throws {
        if only == .all { throw ValidationError("--only takes notes or digests") }
        if new, let other = state.first(where: { !ExportSelection.queued.contains($0) }) {
            throw ValidationError("--new takes only notes not yet synced or exported (pending, failed), not \(other.rawValue) ones")
        }
    }

    func run() async throws {
        let context = try global.context()
        let range = try DateRange.parse(since: since, until: until, date: date, zone: TrackDay.timeZone(config: context.config))
        let selection = ExportSelection(states: state.isEmpty ? nil : Set(state), kind: only ?? .all, from: range.from, to: range.to)
        let outbox = try context.outbox(new ? .change : .read)
        // No note goes "Address pending": with --new its address is looked up and kept; in a
        // copy, or when the lookup fails, it goes with its coordinates alone.
        // (A template that no longer loads renders nothing: the notes then go as queued.)
        let addresses = (try? context.noteRenderer()).map {
            ExportAddresses(outbox: outbox, renderer: $0, lookup: context.places(outbox),
                            budget: context.config.duration(.geocodingTimeout), keeps: new)
        }
        let export = ENEXExport(outbox: outbox, destination: enex == "-" ? .standardOutput : .file(enex),
                                selection: selection, markExported: new, addresses: addresses)
        let printer = SyncProgressPrinter(label: "export", terminal: !quiet && SyncProgressPrinter.drawsProgress(),
                                          verbose: verbose && !quiet, write: { FileHandle.standardError.write(Data($0.utf8)) })
        let summary: ENEXExport.Summary
        do {
            summary = try await export.run { event in
                switch event {
                case .started(let total): printer.start(total: total)
                case .written(let id, let title): printer.advance("note \(id) exported: \(title)")
                case .leftOut(let id, let reason): printer.notice("note \(id) left out: \(reason)")
                }
            }
        } catch ExportError.standardOutputFailed(let output) {
            printer.finish()
            throw output
        } catch {
            printer.finish()
            throw error
        }
        printer.finish()
        if !quiet {
            do {
                try report(summary)
            } catch let error as OutputError where !error.isClosedPipe && !summary.marked.isEmpty {
                throw ExportedButNotPrinted(file: summary.file, count: summary.marked.count, error: error)
            }
        }
        if let first = summary.firstLeftOut {
            throw ExportError.notesLeftOut(ids: summary.leftOut.keys.sorted(), first: first.reason)
        }
    }

    /// One line: what went where, and what the outbox now says of it. On stdout, unless the
    /// ENEX itself is there.
    private func report(_ summary: ENEXExport.Summary) throws {
        let say: (String) throws -> Void = enex == "-" ? { Terminal.standardError($0) } : { try Terminal.standardOutput($0) }
        guard summary.notes > 0 else {
            if !summary.leftOut.isEmpty {
                try say("no file written")
            } else {
                try say(new ? "nothing new to export: every note is synced or exported already" : "no note to export; no file written")
            }
            return
        }
        var parts: [String] = []
        if summary.digests > 0 { parts.append(counted(summary.digests, "digest")) }
        if summary.resources > 0 { parts.append(counted(summary.resources, "resource")) }
        parts.append(ByteCountFormatter.string(fromByteCount: Int64(summary.bytes), countStyle: .file))
        var line = "exported \(counted(summary.notes, "note")) (\(parts.joined(separator: ", "))) to \(summary.file)"
        if new {
            line += "; \(summary.marked.count == 1 ? "it is" : "they are") now exported: sync leaves \(summary.marked.count == 1 ? "it" : "them") alone"
            if summary.withoutPendingAddressOrMap > 0 {
                let count = summary.withoutPendingAddressOrMap
                let who = count == summary.notes ? (count == 1 ? "it" : "all of them") : "\(count) of them"
                line += "; \(who) went without the address or map \(count == 1 ? "it was" : "they were") waiting for"
            }
        }
        try say(line)
    }
}

extension ExportSelection.Kind: ExpressibleByArgument {}

/// `export --new` wrote its file and marked its notes, but could not say so on standard output.
struct ExportedButNotPrinted: ENLogError {
    let file: String
    let count: Int
    let error: OutputError

    var reason: String { "\(counted(count, "note")) went to \(file) and \(count == 1 ? "is" : "are") exported; could not print: \(error.detail)" }
    var recoverySuggestion: String? { "import that file; `enlog queue list --state exported` shows the notes" }
    var category: ErrorCategory { error.category }
}
