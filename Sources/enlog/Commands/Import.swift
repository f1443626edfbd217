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
            where, exit 65, and adds nothing; the other files are still imported. A file that \
            holds no points by its nature (Takeout's Settings.json, archive_browser.html, a \
            Timeline Edits.json of place aggregates only) is listed as "nothing to import" and \
            fails nothing. A zip archive's files are listed one by one, as a folder's are.

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
        let account = notes ? EvernoteAccount.stored() : nil
        // The names as the kernel passed them: one that is not UTF-8 is opened by its bytes.
        let paths = try files.map { file throws(UndecodedInputError) in
            guard let bytes = UndecodedInput.exactBytes(ofArgument: file) else { throw .argument(shown: TerminalText.escaped(file)) }
            return bytes
        }
        let (collect, json) = (notes, self.json)
        let reports = try await BlockingCall.run("enlog.import", onCancel: .abandon) { _ in
            var reports: [ImportReport] = []
            HistoryImport(outbox: outbox, progress: HistoryImportProgress.forTerminal(), collectFixes: collect).run(paths: paths) { report in
                // Each failing file is one line as it happens, and only here.
                if let error = report.error { Terminal.standardError(Self.errorLine(error)) }
                reports.append(ImportReport(report))
            }
            return reports
        }
        // Files read to their end: those that brought points or stays, and those holding none by nature.
        let read = reports.filter { $0.report.error == nil && !$0.report.passedOver }
        let imported = read.filter { $0.report.nothingToImport == nil }
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
        let failures = reports.compactMap { report in report.report.error.map { (report.report.path, $0) } }
        let summary = ImportSummary(files: read.map(\.report), passedOver: reports.filter(\.report.passedOver).count,
                                    notes: notes ? written : nil,
                                    failures: failures.map { .init(path: $0.0, message: $0.1.reason, exitCode: ExitStatus.of($0.1).rawValue) })
        if json {
            try Terminal.standardOutput(try summary.json())
        } else if !read.isEmpty || summary.passedOver > 0 {
            for line in summary.lines { try Terminal.standardOutput(line) }
        }
        if let worst = failures.map({ ExitStatus.of($0.1) }).max(by: { $0.rawValue < $1.rawValue }) {
            throw ExitCode(worst.rawValue)
        }
    }

    /// A failing file as the line every enlog error is: its reason, and what to do when there is something.
    static func errorLine(_ error: HistoryImportError) -> String {
        "enlog: error: \(error.reason)\(error.recoverySuggestion.map { " (\($0))" } ?? "")"
    }
}

/// A file's report carried out of the import thread.
struct ImportReport: Sendable {
    let report: HistoryImport.FileReport
    init(_ report: HistoryImport.FileReport) { self.report = report }
}
