import ArgumentParser
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

struct Validate: ParsableCommand, CarriesUndecodedArguments {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Validate ENML notes offline, as Evernote's service would.",
        discussion: """
            Problems are printed to stderr as PATH:LINE:COL: error: MESSAGE. \
            Exit status: 0 all valid, 1 some invalid, 2 usage or unreadable file.

            Examples:
              enlog validate note.enml             one file
              enlog validate notes/                every *.enml below a directory
              enlog queue show 3 | enlog validate -    standard input
              enlog validate --json notes/ > report.json
            """
    )

    @Flag(help: "Print one JSON document on stdout describing every file.")
    var json = false

    @Flag(name: .shortAndLong, help: "Print nothing on stderr; only the exit status tells.")
    var quiet = false

    @Argument(help: "ENML files, directories (searched for *.enml), or - for stdin.")
    var paths: [String]

    func validate() throws {
        guard !paths.isEmpty else { throw ValidationError("name at least one file, directory or -") }
        // Standard input can be read once: a second `-` would report the same document twice.
        guard paths.filter({ $0 == "-" }).count <= 1 else {
            throw ValidationError("'-' (standard input) can be named only once")
        }
    }

    /// The paths are opened by their exact bytes (`ENMLBatchValidator.validate(pathBytes:)`).
    var undecodedArgumentsCarried: [String] { paths }

    func run() throws {
        let bytes = try paths.map { path throws(UndecodedInputError) in
            guard let bytes = UndecodedInput.exactBytes(ofArgument: path) else { throw .argument(shown: TerminalText.escaped(path)) }
            return bytes
        }
        let results = ENMLBatchValidator().validate(pathBytes: bytes)
        if !quiet {
            for result in results {
                for line in ENMLReportFormat.compilerLines(for: result) { Terminal.standardError(line) }
            }
        }
        if json { try Terminal.standardOutput(try ENMLReportFormat.json(for: results)) }
        if results.contains(where: { if case .failure = $0.outcome { true } else { false } }) {
            throw ExitStatus.usage.exitCode
        }
        if !results.allSatisfy(\.isValid) { throw ExitStatus.invalidNote.exitCode }
    }
}
