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

struct Log: AsyncParsableCommand, CarriesUndecodedArguments {
    static let configuration = CommandConfiguration(
        commandName: "log",
        abstract: "Log where you are: a fix becomes a validated ENML note in the outbox.",
        discussion: """
            The location comes from gpsd unless --at, --nmea or --photo says otherwise. The note is stored \
            even offline; the address is filled in before upload when it cannot be looked up now.

            Examples:
              enlog log                           a fix from gpsd (127.0.0.1:2947)
              enlog log --at 35.6812,139.7671,40  a position (and altitude) by hand
              enlog log --at -33.86,151.2         south or west: negative as it is
              enlog log --nmea drive.nmea         the last valid fix of an NMEA log
              enlog log --json --no-sync          print the note, do not upload
              enlog log --photo IMG_2041.jpg -m "Lunch at the market"
                                                  at the photo's place, with the photo
              enlog log -m "Tickets" --attach ticket.pdf --attach receipt.png
              enlog log -e                        write the words in $VISUAL or $EDITOR

            Words: each -m is a paragraph; --message-file adds a file's text (- reads \
            standard input); -e opens the editor with what those gave. Files: --attach FILE \
            (repeatable) carries a file in the note, its type read from its content. --photo takes \
            the place (and time) from a photo's EXIF GPS tags and attaches the photo: one note per \
            photo, or one note at the first photo's place with --one-note.
            """
    )

    @OptionGroup var global: GlobalOptions

    @OptionGroup var position: PositionOption
    var at: String? { position.at }

    @Option(help: ArgumentHelp("Take the last valid fix of an NMEA 0183 log (- reads standard input).", valueName: "file"))
    var nmea: String?

    @Option(help: ArgumentHelp("gpsd address", overriding: .gpsd, valueName: "host:port"))
    var gpsd: String?

    // Kept as text: Config checks them against the same ranges as config.toml and ENLOG_*.
    @Option(help: ArgumentHelp("Seconds to wait for a usable gpsd fix", overriding: .locationTimeout, valueName: "seconds"))
    var timeout: String?

    @Option(help: ArgumentHelp("Oldest acceptable gpsd fix, seconds; for --photo, at the photo's time", overriding: .maxAge, valueName: "seconds"))
    var maxAge: String?

    @Option(help: ArgumentHelp("Worst acceptable horizontal accuracy, metres", overriding: .minAccuracy, valueName: "metres"))
    var minAccuracy: String?

    @Flag(help: "Do not look up the address now; it is filled in before upload.")
    var noGeocode = false

    @Option(help: ArgumentHelp("'default', 'classic' or a directory with title.mustache and content.mustache.", valueName: "template"))
    var template: String?

    @Option(name: [.customShort("m"), .long],
            help: ArgumentHelp("Words for the note; each -m is a paragraph (repeatable).", valueName: "text"))
    var message: [String] = []

    @Option(help: ArgumentHelp("Read the words from a file (- reads standard input).", valueName: "file"))
    var messageFile: String?

    /// `MessageInput` checks the words of `-m` itself, naming the flag.
    var undecodedArgumentsCarried: [String] { message }

    @Flag(name: [.customShort("e"), .long], help: "Write the words in $VISUAL or $EDITOR (needs a terminal).")
    var edit = false

    @Option(help: ArgumentHelp("Carry this file in the note (repeatable); its type is read from its content.", valueName: "file"))
    var attach: [String] = []

    @Option(help: ArgumentHelp("Log where this photo was taken (EXIF GPS tags) and attach it (repeatable: a note per photo).", valueName: "file"))
    var photo: [String] = []

    @Flag(help: "With several --photo: one note at the first photo's place, carrying them all.")
    var oneNote = false

    @Flag(help: "Print the stored note as JSON.")
    var json = false

    @Flag(help: "Do not try to upload after logging.")
    var noSync = false

    func validate() throws {
        if [at != nil, nmea != nil, !photo.isEmpty].filter({ $0 }).count > 1 {
            throw ValidationError("give one of --at, --nmea and --photo")
        }
        if oneNote && photo.isEmpty { throw ValidationError("--one-note goes with --photo") }
        if messageFile == MessageInput.standardInputPath && nmea == NMEALogLocation.standardInputPath {
            throw ValidationError("--message-file - and --nmea - cannot both read standard input")
        }
        if edit && messageFile == MessageInput.standardInputPath {
            throw ValidationError("-e needs standard input for the editor: give --message-file a file, not -")
        }
    }

    func run() async throws {
        let context = try global.context(flags: [
            .gpsd: ("--gpsd", gpsd), .locationTimeout: ("--timeout", timeout),
            .maxAge: ("--max-age", maxAge), .minAccuracy: ("--min-accuracy", minAccuracy),
            .template: ("--template", template), .geocodingEnabled: ("--no-geocode", noGeocode ? "false" : nil),
        ])
        let config = context.config
        // Every input is read and checked before the location is taken and anything is stored.
        let files = try Attachments.load(attach)
        let sources: [(source: any LocationSource, files: [NoteResource])]
        if photo.isEmpty {
            sources = [(try LocationChoice(at: at, nmea: nmea).source(config: config), files)]
        } else {
            sources = try PhotoNote.plan(photos: photo, attachments: files, oneNote: oneNote,
                                         maxAge: config.number(.maxAge), minAccuracy: config.number(.minAccuracy))
                .map { ($0, $0.files) }
        }
        let words = try MessageInput(paragraphs: message, file: messageFile, edit: edit).read()
        // The location is taken before anything is opened: a fix that cannot be had leaves no outbox.
        var located: [(fix: Fix, files: [NoteResource])] = []
        for (source, files) in sources { located.append((try await source.currentFix(), files)) }
        let outbox = try context.outbox()
        // Read once, offline: the stored account, if any, owns the note and uploads it below.
        let credentials = try? Account.credentialStore().loadIfPresent()
        let account = credentials.map { EvernoteAccount(credentials: $0) }
        // fix → (address ∥ map) → rendered note → one outbox write: `LocationLogger.log`.
        let logger = try context.logger(outbox: outbox, accountKey: account?.accountKey, addressLater: noGeocode)
        var outcomes: [LocationLogger.Outcome] = []
        for (fix, files) in located {
            outcomes.append(try await logger.log(fix, historyFix: nil, message: words, attachments: files))
        }
        do {
            try report(outcomes)
        } catch let error as OutputError {
            // The notes are stored: a script that took the failure for "not logged" and ran `log`
            // again would store them twice.
            throw StoredButNotPrinted(ids: outcomes.map { $0.note.id! }, error: error)
        }
        if !noSync, let account, let last = outcomes.last {
            await uploadOpportunistically(context: context, outbox: outbox, account: account, logged: last.note.id!)
        }
    }

    private func report(_ outcomes: [LocationLogger.Outcome]) throws {
        if json {
            try Terminal.standardOutput(outcomes.count == 1
                ? try OutboxJSON.encode(outcomes[0].note, mapPending: outcomes[0].mapPending)
                : try OutboxJSON.encode(outcomes.map(\.note), mapsPending: Set(outcomes.filter(\.mapPending).map { $0.note.id! })))
        }
        for outcome in outcomes where !json {
            try Terminal.standardOutput("logged note \(outcome.note.id!): \(outcome.note.title)")
            if let problem = outcome.addressProblem {
                Terminal.standardError("enlog: note: no address yet (\(problem)); it is filled in before upload")
            }
            if let problem = outcome.mapProblem {
                Terminal.standardError(outcome.mapPending ? "enlog: note: no map yet (\(problem)); it is made before upload"
                                                          : "enlog: note: no map (\(problem))")
            }
        }
    }

    /// After the note is stored and reported, signed in: if the network is there, upload a few
    /// queued notes within a bounded time. Whatever happens, the logged note stays logged and
    /// `log` succeeds; the next `enlog sync` does the rest. What went wrong is one line on stderr.
    private func uploadOpportunistically(context: RunContext, outbox: OutboxStore, account: EvernoteAccount, logged: Int64) async {
        let session = SyncSession(context: context, outbox: outbox, account: account)
        let queued = "note \(logged) stays queued, run `enlog sync`"
        switch await session.runOpportunistically(loggedNote: logged) {
        case .skipped:
            break
        case .finished(let summary):
            if summary.uploaded > 0 && !json {
                Terminal.standardError("enlog: uploaded \(counted(summary.uploaded, "queued note")); \(summary.remaining) remaining")
            }
            // What this upload ran into; notes merely waiting (backoff, addresses) are `sync`'s to report.
            let ranIntoTrouble = summary.failure != nil || summary.stoppedBecause == .rateLimited
            if ranIntoTrouble, summary.verdict != .complete, let problem = SyncReport.problem(summary) {
                Terminal.standardError("enlog: upload stopped: \(problem)")
            }
        case .timedOut(let budget, let loggedNoteQueued, let remaining):
            let left = loggedNoteQueued ? queued : "\(counted(remaining, "note")) \(remaining == 1 ? "stays" : "stay") queued, run `enlog sync`"
            Terminal.standardError("enlog: upload timed out after \(budget.components.seconds) s; \(left)")
        case .failed(let error):
            Terminal.standardError("enlog: upload failed: \(error.reason); \(queued)")
        }
    }
}

/// `log` stored its notes but could not say so on standard output.
struct StoredButNotPrinted: ENLogError {
    let ids: [Int64]
    let error: OutputError

    var reason: String {
        let notes = ids.count == 1 ? "note \(ids[0]) is" : "notes \(ids.map(String.init).joined(separator: ", ")) are"
        return "\(notes) stored; could not print: \(error.detail)"
    }

    var recoverySuggestion: String? { "do not log \(ids.count == 1 ? "it" : "them") again; `enlog queue list` shows the outbox" }
    var category: ErrorCategory { error.category }
}
