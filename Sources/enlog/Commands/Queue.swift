import ArgumentParser
import ENLogKit
import Foundation

struct Queue: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Inspect and manage the notes waiting in the outbox.",
        subcommands: [List.self, Show.self, Retry.self, Drop.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List outbox notes, oldest first.")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print JSON.") var json = false
        @Option(help: ArgumentHelp("Only notes in this state: \(OutboxNote.State.allCases.map(\.rawValue).joined(separator: ", ")).", valueName: "state"))
        var state: OutboxNote.State?

        func run() async throws {
            let outbox = try global.openOutbox(try global.loadConfig(), for: .read)
            let notes = if let state { try await outbox.notes(state: state) } else { try await outbox.allNotes() }
            if json {
                Terminal.standardOutput(try OutboxJSON.encode(notes))
            } else if notes.isEmpty {
                Terminal.standardError("the outbox is empty" + (state.map { " of \($0.rawValue) notes" } ?? ""))
            } else {
                for note in notes { Terminal.standardOutput(OutboxJSON.line(note)) }
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print a note's ENML.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Note id (from `enlog queue list`).") var id: Int64

        func run() async throws {
            let note = try await global.openOutbox(try global.loadConfig(), for: .read).note(id: id)
            Terminal.standardOutput(note.content)
        }
    }

    struct Retry: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Put a failed or parked note back in line for upload.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Note id.") var id: Int64

        func run() async throws {
            let note = try await global.openOutbox(try global.loadConfig(), for: .change).retry(id)
            Terminal.standardOutput("note \(id) is \(note.state.rawValue) again")
        }
    }

    struct Drop: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a note from the outbox for good.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Note id.") var id: Int64
        @Flag(name: .shortAndLong, help: "Do not ask for confirmation.") var yes = false

        func run() async throws {
            let outbox = try global.openOutbox(try global.loadConfig(), for: .change)
            let note = try await outbox.note(id: id)
            if !yes {
                guard isatty(STDIN_FILENO) == 1 else {
                    throw ValidationError("refusing to drop note \(id) without confirmation; pass --yes")
                }
                FileHandle.standardError.write(Data("drop note \(id) (\(note.state.rawValue)) \"\(note.title)\"? [y/N] ".utf8))
                guard let answer = readLine(), ["y", "yes"].contains(answer.lowercased()) else {
                    Terminal.standardError("kept note \(id)")
                    return
                }
            }
            try await outbox.drop(id)
            Terminal.standardOutput("dropped note \(id)")
        }
    }
}

extension OutboxNote.State: ExpressibleByArgument {}

struct History: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List every fix logged, oldest first.")
    @OptionGroup var global: GlobalOptions
    @Option(help: ArgumentHelp("Only fixes since this date (YYYY-MM-DD, or ISO 8601 date and time).", valueName: "date"))
    var since: String?
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        let start = try since.map { text -> Date in
            guard let date = OutboxJSON.parseDate(text) else {
                throw ValidationError("--since '\(text)' is not a date like 2026-11-22 or 2026-11-22T08:00:00Z")
            }
            return date
        }
        let fixes = try await global.openOutbox(try global.loadConfig(), for: .read).history(since: start)
        if json {
            Terminal.standardOutput(try OutboxJSON.encode(fixes))
        } else {
            for fix in fixes { Terminal.standardOutput(OutboxJSON.line(fix)) }
        }
    }
}

struct ConfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config", abstract: "Show the effective configuration.", subcommands: [Show.self])

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print every setting, its value and where it came from; secrets are hidden.")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let config = try global.loadConfig()
            Terminal.standardOutput(json ? try ConfigReport.json(config) : ConfigReport.text(config))
        }
    }
}
