import ArgumentParser
import ENLogKit
import Foundation

@main
struct Enlog: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "enlog",
        abstract: "Keep a location diary in Evernote, from the terminal, online or not.",
        version: ENLogVersion.current,
        subcommands: [Log.self, Sync.self, Queue.self, History.self, Auth.self, Notebooks.self, Reachability.self, ConfigCommand.self, Validate.self]
    )

    /// Runs the command line, turning every failure into one line on stderr (with what to do
    /// about it, when there is something) and an exit code from `ExitStatus` (the table in README.md).
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let exit as ExitCode {
            Foundation.exit(exit.rawValue)
        } catch let error as any ENLogError {
            let suggestion = error.recoverySuggestion.map { " (\($0))" } ?? ""
            Terminal.standardError("enlog: error: \(error.reason)\(suggestion)")
            Foundation.exit(ExitStatus.of(error).rawValue)
        } catch {
            if exitCode(for: error) == .validationFailure {
                // Usage mistakes: argument-parser's message, but the project's usage exit code.
                Terminal.standardError(fullMessage(for: error))
                Foundation.exit(ExitStatus.usage.rawValue)
            }
            self.exit(withError: error)
        }
    }
}
