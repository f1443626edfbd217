import ArgumentParser
import ENLogKit
import Foundation

struct Sync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Upload the queued notes to Evernote, each exactly once.",
        discussion: """
            Checks reachability by address first: offline, it returns at once (exit 75 when notes \
            are pending). Exit 0 when the queue is drained or nothing was due.

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
        let config = try global.loadConfig()
        let outbox = try global.openOutbox(config)
        // Progress only on a terminal; -q wins over -v.
        let printer = SyncProgressPrinter(terminal: !quiet && SyncProgressPrinter.drawsProgress(), verbose: verbose && !quiet,
                                          write: { FileHandle.standardError.write(Data($0.utf8)) })
        let outcome: SyncSession.Outcome
        do {
            outcome = try await SyncSession(config: config, outbox: outbox, account: try await Account.signedIn())
                .run(maxNotes: max, dryRun: dryRun, observer: { printer.handle($0) })
        } catch {
            printer.finish()
            throw error
        }
        printer.finish()
        guard case .synced(let summary) = outcome else {
            guard case .unreachable(let report, let waiting) = outcome else { return }
            let verdict = report.verdict == .offline ? "offline" : "no uplink"
            if !quiet {
                Terminal.standardError("enlog: \(verdict) (checked in \(Int(report.elapsedMilliseconds)) ms); \(counted(waiting, "note")) \(waiting == 1 ? "stays" : "stay") queued")
            }
            if json { Terminal.standardOutput(#"{"reachable": false, "remaining": \#(waiting)}"#) }
            if waiting > 0 { throw ExitStatus.temporary.exitCode }
            return
        }
        if json {
            Terminal.standardOutput(try JSONOutput.encode(summary))
        } else if !quiet {
            Terminal.standardOutput(SyncReport.line(summary))
        }
        // A `where` clause on a multi-pattern case binds to its last pattern only, so the
        // condition is spelled out: a run cut short by the service or network, notes left.
        let cutShort: Set<SyncSummary.StopReason> = [.rateLimited, .networkDown, .serviceFailing]
        if cutShort.contains(summary.stoppedBecause) && summary.remaining > 0 {
            throw ExitStatus.temporary.exitCode
        }
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
        if summary.stoppedBecause != .completed { line += "; stopped: \(summary.stoppedBecause.rawValue)" }
        if let notBefore = summary.notBefore { line += "; next try not before \(ISO8601DateFormatter().string(from: notBefore))" }
        if let error = summary.lastError { line += "; last error: \(error)" }
        return line
    }
}
