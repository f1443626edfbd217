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

    static func main() async {
        await CommandMain.run(Enlog.self)
    }
}
