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

@main
struct Enlog: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "enlog",
        abstract: "Keep a location diary in Evernote, from the terminal, online or not.",
        discussion: """
            Examples:
              enlog log                          log where you are (a fix from gpsd)
              enlog log --at -33.86,151.2        log a position given by hand
              enlog sync                         upload the queued notes
              enlog export --enex diary.enex     the notes as a file Evernote imports
              enlog queue list                   see what is waiting
              enlog COMMAND --help               more about one command

            Settings come from $XDG_CONFIG_HOME/enlog/config.toml, ENLOG_* variables and flags; \
            `enlog config show` prints them. The manual page is enlog(1) (scripts/bootstrap installs it; \
            `swift package generate-manual` makes it).

            Shell completions (docs/install.md says where each shell looks for them):
              enlog --generate-completion-script bash > enlog.bash
              enlog --generate-completion-script zsh > _enlog
              enlog --generate-completion-script fish > enlog.fish

            Exit status:
            \(ExitStatus.helpTable)
            """,
        version: ENLogVersion.current,
        subcommands: [Log.self, Watch.self, ServeCommand.self, Devices.self, Sync.self, Queue.self, History.self, Import.self, Digest.self, TimelineCommand.self, Places.self, ExportCommand.self, Auth.self, Notebooks.self, Reachability.self, MapCommand.self, ConfigCommand.self, Validate.self]
    )

    /// Runs the command line, turning every failure into one line on stderr (with what to do
    /// about it, when there is something) and an exit code from `ExitStatus` (the table in docs/exit-status.md).
    /// With `--json`, the failure is also one JSON object on stdout; the exit code is the same.
    static func main() async {
        StandardInput.holdIfClosed()
        StandardOutput.prepare()
        var command: any ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            argumentParserExit(error)
        }
        do {
            // Before anything is opened: an argument or variable that is not UTF-8 and that the
            // command cannot carry as bytes would otherwise name another file (UndecodedInput).
            let carried = (command as? CarriesUndecodedArguments)?.undecodedArgumentsCarried ?? []
            if let undecodable = UndecodedInput.firstUndecodableArgument(carried: carried) ?? UndecodedInput.firstUndecodableVariable() {
                throw undecodable
            }
            try Config.applyInputTimeout()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let exit as ExitCode {
            Foundation.exit(exit.rawValue)
        } catch let error as OutputError where error.isClosedPipe {
            StandardOutput.endForClosedPipe()
        } catch let error as any ENLogError {
            let status = ExitStatus.of(error)
            fail(reason: error.reason, suggestion: error.recoverySuggestion ?? (status == .usage ? commandHelpHint : nil), status: status)
        } catch let error where isArgumentParsers(error) {
            // `--help` (argument-parser runs its own help command), a `ValidationError`, `CleanExit`.
            argumentParserExit(error)
        } catch {
            // No typed error: a bug. Still one line and an exit code a script can tell apart.
            fail(reason: internalErrorMessage(for: error), suggestion: nil, status: ExitStatus.of(error))
        }
    }

    /// argument-parser's own errors (a parse error, `--help`, `--version`, a `ValidationError`).
    private static func argumentParserExit(_ error: any Error) -> Never {
        if exitCode(for: error) == .validationFailure {
            // Usage mistakes: argument-parser's message on one line, the project's usage exit
            // code; a mistyped command or a bare file where an option is meant is told what was meant.
            if let advice = UsageAdvice.advice(arguments: Array(CommandLine.arguments.dropFirst()), parserMessage: usageMessage(for: error)) {
                fail(reason: advice.reason, suggestion: advice.suggestion, status: .usage)
            }
            fail(reason: usageMessage(for: error), suggestion: usageHint(for: error), status: .usage)
        }
        if exitCode(for: error) == .success {
            // `--help`, `--version`, help of a subcommand: argument-parser would print them
            // with `print`, which ignores a full or closed standard output and exits 0 anyway.
            let text = fullMessage(for: error)
            do {
                if !text.isEmpty { try StandardOutput.line(text) }
            } catch where error.isClosedPipe {
                StandardOutput.endForClosedPipe()
            } catch {
                fail(reason: error.reason, suggestion: nil, status: ExitStatus.of(error))
            }
            Foundation.exit(ExitCode.success.rawValue)
        }
        self.exit(withError: error)
    }

    /// An error of argument-parser's own (some of its types, like the one `--help` throws, are
    /// not public): it has its own messages and exit codes.
    static func isArgumentParsers(_ error: any Error) -> Bool {
        String(reflecting: type(of: error)).hasPrefix("ArgumentParser.")
    }

    /// "internal error: …" and the error as one line.
    static func internalErrorMessage(for error: any Error) -> String {
        let text = String(describing: error).split(whereSeparator: \.isNewline).joined(separator: " ")
        return "internal error: " + (text.count > 300 ? String(text.prefix(300)) + "…" : text)
    }

    private static func fail(reason: String, suggestion: String?, status: ExitStatus) -> Never {
        Terminal.standardError("enlog: error: \(reason)\(suggestion.map { " (\($0))" } ?? "")")
        if wantsJSON {
            struct Failure: Encodable {
                struct Details: Encodable { var message: String; var suggestion: String?; var exitCode: Int32 }
                var error: Details
            }
            let failure = Failure(error: .init(message: reason, suggestion: suggestion, exitCode: status.rawValue))
            if let json = try? JSONOutput.encode(failure) { try? Terminal.standardOutput(json) }
        }
        Foundation.exit(status.rawValue)
    }

    /// `--json` among the options (not after `--`, where it would be an argument).
    private static var wantsJSON: Bool {
        CommandLine.arguments.dropFirst().prefix { $0 != "--" }.contains("--json")
    }

    private static func usageMessage(for error: Error) -> String {
        let message = message(for: error).trimmingCharacters(in: .whitespacesAndNewlines)
        let firstLine = message.split(separator: "\n").first.map(String.init) ?? message
        return firstLine.hasPrefix("Error: ") ? String(firstLine.dropFirst("Error: ".count)) : firstLine
    }

    /// argument-parser's "See 'enlog log --help' for more information." names the subcommand
    /// for a parsing error; for one thrown while running, the command line does.
    private static func usageHint(for error: Error) -> String {
        let full = fullMessage(for: error)
        if let start = full.range(of: "See '"), let end = full[start.upperBound...].firstIndex(of: "'") {
            let named = full[start.upperBound..<end]
            if named != "enlog --help" { return "see `\(named)`" }
        }
        return commandHelpHint
    }

    /// "see `enlog queue show --help`": the subcommands named at the start of the command line.
    private static var commandHelpHint: String {
        var path = ["enlog"]
        var commands: [any ParsableCommand.Type] = configuration.subcommands
        for argument in CommandLine.arguments.dropFirst() {
            guard let next = commands.first(where: { $0._commandName == argument }) else { break }
            path.append(argument)
            commands = next.configuration.subcommands
        }
        return "see `\((path + ["--help"]).joined(separator: " "))`"
    }
}

/// A command that opens some of its arguments by their exact bytes, so they may be any bytes
/// (`import`'s files), or checks them itself (`log -m`): those are not refused for not being UTF-8.
protocol CarriesUndecodedArguments {
    /// The arguments as argument-parser decoded them.
    var undecodedArgumentsCarried: [String] { get }
}
