import ArgumentParser
import Foundation
import Support
import Configuration

/// The `main` of each enlog executable (`enlog`, and `enlog-serve`, which `enlog serve` runs):
/// parses the command line with the executable's root command, runs the command, and turns
/// every failure into one line on stderr (with what to do about it, when there is something) and
/// an exit code from `ExitStatus` (the table in docs/exit-status.md). With `--json`, the failure
/// is also one JSON object on stdout; the exit code is the same.
package enum CommandMain {
    /// On the main actor, as `main` itself is: called from `main` without a hop to the global
    /// executor, whose first use starts Dispatch's threads and opens their descriptors. With
    /// standard input closed (`<&-`) one of those would become fd 0 before `holdIfClosed` took
    /// it, and `--message-file -` would read an eventfd ("Invalid argument"; MessageTests).
    @MainActor
    package static func run<Root: ParsableCommand>(_ root: Root.Type) async -> Never {
        StandardInput.holdIfClosed()
        StandardOutput.prepare()
        var command: any ParsableCommand
        do {
            command = try Root.parseAsRoot()
        } catch {
            argumentParserExit(error, root: Root.self)
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
            Foundation.exit(ExitCode.success.rawValue)
        } catch let exit as ExitCode {
            Foundation.exit(exit.rawValue)
        } catch let error as OutputError where error.isClosedPipe {
            StandardOutput.endForClosedPipe()
        } catch let error as any ENLogError {
            let status = ExitStatus.of(error)
            fail(reason: error.reason, suggestion: error.recoverySuggestion ?? (status == .usage ? commandHelpHint(root: Root.self) : nil), status: status)
        } catch let error where isArgumentParsers(error) {
            // `--help` (argument-parser runs its own help command), a `ValidationError`, `CleanExit`.
            argumentParserExit(error, root: Root.self)
        } catch {
            // No typed error: a bug. Still one line and an exit code a script can tell apart.
            fail(reason: internalErrorMessage(for: error), suggestion: nil, status: ExitStatus.of(error))
        }
    }

    /// argument-parser's own errors (a parse error, `--help`, `--version`, a `ValidationError`).
    private static func argumentParserExit<Root: ParsableCommand>(_ error: any Error, root: Root.Type) -> Never {
        if Root.exitCode(for: error) == .validationFailure {
            // Usage mistakes: argument-parser's message on one line, the project's usage exit
            // code; a mistyped command or a bare file where an option is meant is told what was meant.
            let message = usageMessage(for: error, root: Root.self)
            if let advice = UsageAdvice.advice(arguments: Array(CommandLine.arguments.dropFirst()), parserMessage: message,
                                               root: CommandTree.of(Root.self)) {
                fail(reason: advice.reason, suggestion: advice.suggestion, status: .usage)
            }
            fail(reason: message, suggestion: usageHint(for: error, root: Root.self), status: .usage)
        }
        if Root.exitCode(for: error) == .success {
            // `--help`, `--version`, help of a subcommand: argument-parser would print them
            // with `print`, which ignores a full or closed standard output and exits 0 anyway.
            let text = Root.fullMessage(for: error)
            do {
                if !text.isEmpty { try StandardOutput.line(text) }
            } catch where error.isClosedPipe {
                StandardOutput.endForClosedPipe()
            } catch {
                fail(reason: error.reason, suggestion: nil, status: ExitStatus.of(error))
            }
            Foundation.exit(ExitCode.success.rawValue)
        }
        Root.exit(withError: error)
    }

    /// An error of argument-parser's own (some of its types, like the one `--help` throws, are
    /// not public): it has its own messages and exit codes.
    package static func isArgumentParsers(_ error: any Error) -> Bool {
        String(reflecting: type(of: error)).hasPrefix("ArgumentParser.")
    }

    /// "internal error: …" and the error as one line.
    package static func internalErrorMessage(for error: any Error) -> String {
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

    private static func usageMessage<Root: ParsableCommand>(for error: Error, root: Root.Type) -> String {
        let message = Root.message(for: error).trimmingCharacters(in: .whitespacesAndNewlines)
        let firstLine = message.split(separator: "\n").first.map(String.init) ?? message
        return firstLine.hasPrefix("Error: ") ? String(firstLine.dropFirst("Error: ".count)) : firstLine
    }

    /// argument-parser's "See 'enlog log --help' for more information." names the subcommand
    /// for a parsing error; for one thrown while running, the command line does.
    private static func usageHint<Root: ParsableCommand>(for error: Error, root: Root.Type) -> String {
        let full = Root.fullMessage(for: error)
        if let start = full.range(of: "See '"), let end = full[start.upperBound...].firstIndex(of: "'") {
            let named = full[start.upperBound..<end]
            if named != "enlog --help" { return "see `\(named)`" }
        }
        return commandHelpHint(root: Root.self)
    }

    /// "see `enlog queue show --help`": the subcommands named at the start of the command line.
    private static func commandHelpHint<Root: ParsableCommand>(root: Root.Type) -> String {
        var path = [Root._commandName]
        var commands: [any ParsableCommand.Type] = Root.configuration.subcommands
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
package protocol CarriesUndecodedArguments {
    /// The arguments as argument-parser decoded them.
    var undecodedArgumentsCarried: [String] { get }
}
