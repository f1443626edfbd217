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

struct Sync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Upload the queued notes to Evernote, each exactly once.",
        discussion: """
            Checks reachability by address first: offline, it returns at once. Exit status: 0 when \
            everything due went (or nothing was due, or --max was reached); when notes stay queued \
            or parked, 75 to try later (offline, no uplink, rate limited, quota, addresses to look \
            up), 69 when Evernote could not be reached or failed (connection, timeout, HTTP 5xx), \
            76 when it answered something that is not the protocol (an HTML page, garbage), 1 when \
            it refused a note (parked), 77 when it refused the token. -q still prints the error.

            Examples:
              enlog sync                 upload every note that is due
              enlog sync --max 20 -v     at most 20 notes, one line per note on stderr
              enlog sync --dry-run       say what would be uploaded
              enlog sync --json -q       a JSON summary for scripts, errors only on stderr
            """
    )

    @OptionGroup var global: GlobalOptions
    @Flag(help: "Print a JSON summary.") var json = false
    @Option(help: "Upload at most this many notes.") var max: Int?
    @Flag(help: "Say what would be uploaded; change nothing.") var dryRun = false
    @Flag(name: .shortAndLong, help: "Print nothing but errors.") var quiet = false
    @Flag(name: .shortAndLong, help: "Print one line per note (id, action, guid) on stderr.") var verbose = false

    func validate() throws {
        try NumericRange.noteCount.check(max, flag: "--max")
    }

    func run() async throws {
        let context = try global.context()
        let config = context.config
        let outbox = try context.outbox()
        // Progress only on a terminal; -q wins over -v.
        let printer = SyncProgressPrinter(terminal: !quiet && SyncProgressPrinter.drawsProgress(), verbose: verbose && !quiet,
                                          write: { StandardError.write($0) })
        let outcome: SyncSession.Outcome
        do {
            outcome = try await SyncSession(context: context, outbox: outbox, account: try await Account.signedIn(config))
                .run(maxNotes: max, dryRun: dryRun, observer: { printer.handle($0) })
        } catch {
            printer.finish()
            throw error
        }
        printer.finish()
        let summary = outcome.summary
        if json {
            try Terminal.standardOutput(try JSONOutput.encode(summary))
        } else if !quiet, case .synced = outcome {
            try Terminal.standardOutput(SyncReport.line(summary))
        }
        let status = ExitStatus.of(summary.verdict)
        guard status != .success else { return }
        // Even with -q: a failure is always one line on stderr.
        if let problem = SyncReport.problem(summary) { Terminal.standardError("enlog: error: \(problem)") }
        throw status.exitCode
    }
}

/// One line a person reads after a sync.
enum SyncReport {
    static func line(_ summary: SyncSummary) -> String {
        var parts = ["uploaded \(summary.uploaded)"]
        if summary.alreadyPresent > 0 { parts.append("\(summary.alreadyPresent) already on Evernote") }
        if summary.failed > 0 { parts.append("\(summary.failed) failed (retried later)") }
        if summary.parked > 0 { parts.append("\(summary.parked) parked (see `enlog queue list --state parked`)") }
        parts.append("\(summary.remaining) remaining")
        var line = parts.joined(separator: ", ")
        if summary.stoppedBecause != .completed { line += "; stopped: \(summary.stoppedBecause.explanation)" }
        if let notBefore = summary.notBefore { line += "; next try not before \(InstantText.string(notBefore))" }
        if let error = summary.lastError { line += "; last error: \(error)" }
        if let waiting = addressWait(summary) { line += "; " + waiting }
        if let maps = mapReport(summary) { line += "; " + maps }
        if let retry = retryWait(summary) { line += "; " + retry }
        return line
    }

    /// Why notes wait for their address, and until when.
    static func addressWait(_ summary: SyncSummary) -> String? {
        guard summary.waitingForAddress > 0 else { return nil }
        var text = summary.waitingForAddress == 1 ? "1 note waits for its address"
            : "\(summary.waitingForAddress) notes wait for their address"
        if let error = summary.lastAddressError { text += " (lookup failed: \(error))" }
        if let left = summary.addressTriesLeft {
            text += left > 0 ? ", looked up again at each sync and sent without it after \(left) more failed lookup\(left == 1 ? "" : "s")"
                : ", sent without it at the next sync"
        }
        return text
    }

    /// Maps made at sync time, notes that go without theirs, notes still waiting for theirs.
    static func mapReport(_ summary: SyncSummary) -> String? {
        var parts: [String] = []
        if summary.mapsMade > 0 { parts.append("made \(counted(summary.mapsMade, "map")) of notes logged without") }
        if summary.mapsGivenUp > 0 {
            parts.append("\(summary.mapsGivenUp == 1 ? "1 note goes" : "\(summary.mapsGivenUp) notes go") without its map")
        }
        if summary.waitingForMap > 0 {
            parts.append("\(summary.waitingForMap == 1 ? "1 note waits for its map" : "\(summary.waitingForMap) notes wait for their map")")
        }
        guard !parts.isEmpty else { return nil }
        let why = (summary.mapsGivenUp > 0 || summary.waitingForMap > 0) ? summary.lastMapError.map { " (\($0))" } ?? "" : ""
        return parts.joined(separator: ", ") + why
    }

    /// Notes waiting out their backoff after a failure, and when the first is due.
    static func retryWait(_ summary: SyncSummary) -> String? {
        guard summary.waitingForRetry > 0 else { return nil }
        let next = summary.nextRetryAt.map { " (next at \(InstantText.string($0)))" } ?? ""
        return "\(summary.waitingForRetry) wait\(summary.waitingForRetry == 1 ? "s" : "") to retry after a failure\(next)"
    }

    /// The `enlog: error:` line of a sync that did not complete (nil when it did).
    static func problem(_ summary: SyncSummary) -> String? {
        let left = summary.remaining == 1 ? "1 note stays queued" : "\(summary.remaining) notes stay queued"
        let why = summary.lastError.map { ": \($0)" } ?? ""
        switch summary.verdict {
        case .complete:
            return nil
        case .tryLater:
            switch summary.stoppedBecause {
            case .offline, .noUplink: return "\(summary.stoppedBecause.explanation); \(left) (run `enlog sync` \(summary.stoppedBecause == .offline ? "when online" : "later"))"
            case .rateLimited:
                let until = summary.notBefore.map { " until \(InstantText.string($0))" } ?? ""
                return "Evernote asked to slow down\(until)\(why); \(left)"
            default:
                if summary.failure == nil, summary.addressLookupsFailed > 0, let waiting = addressWait(summary) { return waiting }
                if summary.failure == nil, summary.mapsFailed > 0, let maps = mapReport(summary) {
                    return maps + "; made at the next `enlog sync`"
                }
                if summary.failure == nil, let retry = retryWait(summary) { return retry + "; `enlog sync` sends them when due" }
                return "\(left)\(why) (run `enlog sync` later)"
            }
        case .serviceUnavailable:
            let what = summary.stoppedBecause == .networkDown ? summary.stoppedBecause.explanation : "Evernote could not be reached or did not answer"
            return "\(what)\(why); \(left) (the next `enlog sync` retries them)"
        case .protocolError:
            return "Evernote's address answered something that is not Evernote's protocol\(why); \(left) (check the configured host and any proxy or captive portal)"
        case .notesRejected:
            return "Evernote refused \(summary.parked == 1 ? "a note" : "\(summary.parked) notes")\(why) (see `enlog queue list --state parked`; `enlog queue retry ID` after fixing)"
        }
    }
}
