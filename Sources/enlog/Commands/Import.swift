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

struct Import: AsyncParsableCommand, CarriesUndecodedArguments {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Bring location history from other programs and devices into the history.",
        discussion: """
            Each FILE may be a file, a folder (every file in it, in every subfolder) or a zip \
            archive (a Google Takeout download, a KMZ). The format is told by content, never by \
            the name: GPX, KML (gx:Track, Track, timed Placemarks; a TimeSpan is a stay), TCX, \
            CSV with a header naming latitude, longitude and time columns, OwnTracks .rec files, \
            NMEA 0183 logs, and the Google Timeline exports and JSON formats listed in the guide \
            (docs/import.md).

            Files of any size are streamed: memory stays bounded, and points are written 10,000 \
            to a transaction, so an import that is killed leaves whole chunks and running it again \
            adds only what is missing. A point whose time the history already has from the same \
            device is skipped, so importing twice adds nothing. A record that cannot be a point \
            (0,0, a time before 1980, no time) is skipped and counted by reason. A file that is \
            not a known format, empty, cut short or wrong is one error line naming the file and \
            where, exit 65, and adds nothing; the other files are still imported.

            On a terminal a progress line shows bytes, points and the time left.

            With --notes, notes are also written where `enlog watch` would have written them \
            (watch.min_distance, watch.min_interval, watch.max_interval, location.min_accuracy); \
            the file's points are then held in memory.

            Examples:
              enlog import walk.gpx
              enlog import drive.nmea --notes
              enlog import takeout-20250101.zip --json
              enlog import ~/owntracks/rec/
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: ArgumentHelp("Files, folders or zip archives of location history.", valueName: "file")) var files: [String]
    @Flag(help: "Also write notes with the watch thresholds.") var notes = false
    @Flag(help: "Print the summary as JSON.") var json = false

    /// The files are opened by their exact bytes (`HistoryImport.run(paths:)`).
    var undecodedArgumentsCarried: [String] { files }

    func validate() throws {
        if files.isEmpty { throw ValidationError("name at least one file, folder or zip archive to import") }
    }

    func run() async throws {
        let context = try global.context()
        let outbox = try context.outbox()
        let account = notes ? (try? Account.credentialStore().loadIfPresent()).flatMap { $0 }.map { EvernoteAccount(credentials: $0) } : nil
        // The names as the kernel passed them: one that is not UTF-8 is opened by its bytes.
        let paths = try files.map { file throws(UndecodedInputError) in
            guard let bytes = UndecodedInput.exactBytes(ofArgument: file) else { throw .argument(shown: TerminalText.escaped(file)) }
            return bytes
        }
        let (collect, json) = (notes, self.json)
        let reports = try await BlockingCall.run("enlog.import", onCancel: .abandon) { _ in
            var reports: [ImportReport] = []
            HistoryImport(outbox: outbox, progress: HistoryImportProgress.forTerminal(), collectFixes: collect).run(paths: paths) { report in
                // Errors as they happen, each one line; a lone failing file is reported by the caller.
                if let error = report.error, paths.count > 1 || report.path != HistoryPath.shown(paths[0]) || !reports.isEmpty {
                    Terminal.standardError("enlog: error: \(error.reason)" + (error.recoverySuggestion.map { " (\($0))" } ?? ""))
                }
                reports.append(ImportReport(report))
            }
            return reports
        }
        let imported = reports.filter { $0.report.error == nil && !$0.report.passedOver }
        // A lone failure about the one input named was not printed as it happened: thrown, said once.
        if reports.count == 1, files.count == 1, reports[0].report.path == files[0], let error = reports[0].report.error { throw error }
        var written = TrackImport.Notes()
        if notes {
            for file in imported {
                let done = try await TrackImport(outbox: outbox).writeNotes(along: file.report.fixes, context: context,
                                                                             accountKey: account?.accountKey) { outcome, _ in
                    if !json { Terminal.standardError("enlog: logged note \(outcome.note.id ?? 0): \(outcome.note.title)") }
                }
                written.written += done.written
                written.alreadyThere += done.alreadyThere
            }
        }
        let summary = ImportSummary(files: imported.map(\.report), passedOver: reports.filter(\.report.passedOver).count + imported.map(\.report.membersPassedOver).reduce(0, +),
                                    notes: notes ? written : nil)
        if json {
            try Terminal.standardOutput(try summary.json())
        } else if !imported.isEmpty {
            for line in summary.lines { try Terminal.standardOutput(line) }
        }
        if let worst = reports.compactMap(\.report.error).map({ ExitStatus.of($0) }).max(by: { $0.rawValue < $1.rawValue }) {
            throw ExitCode(worst.rawValue)
        }
    }
}

/// A file's report carried out of the import thread.
struct ImportReport: @unchecked Sendable {
    let report: HistoryImport.FileReport
    init(_ report: HistoryImport.FileReport) { self.report = report }
}
