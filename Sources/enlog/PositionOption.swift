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

/// `--at LAT,LON[,ALT]`, shared by the commands that take a position by hand.
struct PositionOption: ParsableArguments {
    // Unconditional: the value is taken as it is, so a southern or western position
    // (`--at -33.86,151.2`) is a value, not an unknown flag.
    @Option(parsing: .unconditional,
            help: ArgumentHelp("A position given by hand, in decimal degrees; negative values work as they are (--at -33.86,151.2).",
                               valueName: "lat,lon[,alt]"))
    var at: String?
}
