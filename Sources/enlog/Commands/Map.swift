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

struct MapCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "map",
        abstract: "Render the map image a note would carry, as a PNG (to preview a style, or to bench).",
        discussion: """
            Uses the [map] settings: tiles from map.tile_url through the tile cache, or the keyed
            note.static_map_url with map.style = static. Without -o the PNG goes to standard output,
            which must not be a terminal.
            """
    )

    @OptionGroup var global: GlobalOptions

    @OptionGroup var position: PositionOption

    @Option(help: ArgumentHelp("Horizontal accuracy, drawn as a circle.", valueName: "metres"))
    var accuracy: Double?

    @Option(name: [.short, .customLong("output")], help: ArgumentHelp("Write the PNG here.", valueName: "file.png"))
    var output: String?

    @Option(help: ArgumentHelp("Zoom level, 0–19", overriding: .mapZoom, valueName: "zoom"))
    var zoom: String?

    @Option(help: ArgumentHelp("Width in pixels", overriding: .mapWidth, valueName: "pixels"))
    var width: String?

    @Option(help: ArgumentHelp("Height in pixels", overriding: .mapHeight, valueName: "pixels"))
    var height: String?

    @Option(help: ArgumentHelp("tiles or static", overriding: .mapStyle, valueName: "style"))
    var style: String?

    @Option(help: ArgumentHelp("Longest wait for the images", overriding: .mapTimeout, valueName: "seconds"))
    var timeout: String?

    func validate() throws {
        try NumericRange.accuracyMetres.check(accuracy, flag: "--accuracy")
    }

    func run() async throws {
        guard let at = position.at else { throw ValidationError("give the position with --at LAT,LON") }
        // Numbers stay text: Config checks them against the same ranges as config.toml and ENLOG_*.
        let context = try global.context(flags: [
            .mapZoom: ("--zoom", zoom), .mapWidth: ("--width", width), .mapHeight: ("--height", height),
            .mapStyle: ("--style", style), .mapTimeout: ("--timeout", timeout),
        ])
        let position = try ManualLocation(at, horizontalAccuracy: accuracy)
        if output == nil && isatty(STDOUT_FILENO) == 1 {
            throw ValidationError("refusing to write a PNG to a terminal: give -o FILE.png or redirect the output")
        }
        let renderer = context.maps
        let image = try await renderer.render(latitude: position.latitude, longitude: position.longitude,
                                              accuracy: position.horizontalAccuracy)
        await renderer.finishCaching()
        guard let output else {
            try Terminal.standardOutput(bytes: image.png)
            return
        }
        do {
            try image.png.write(to: URL(fileURLWithPath: output), options: Self.replacesByRenaming(output) ? .atomic : [])
        } catch {
            throw MapOutputError(path: output, detail: (error as NSError).localizedFailureReason ?? error.localizedDescription)
        }
        let counts = image.statistics
        try Terminal.standardOutput("wrote \(TerminalText.escaped(output)): \(image.width)×\(image.height) PNG, \(image.png.count) bytes, md5 \(image.md5); "
            + "images: \(counts.fromMemory) from memory, \(counts.fromDisk) from disk, \(counts.downloaded) downloaded, "
            + "\(counts.revalidated) revalidated, \(counts.staleUsed) stale"
            + (counts.renderedFromCache ? "; the picture itself from the cache (made before from the same tiles)" : ""))
    }
}

extension MapCommand {
    /// Whether -o's file is written as a new file renamed over the old one, so that no reader
    /// ever sees half a picture: when it is a regular file or not there yet. Anything else is
    /// written in place, because a rename would replace it: a device (`-o /dev/null`, which
    /// the rename would turn into a regular file, for every program, when run as root), a FIFO,
    /// or a symbolic link (the picture goes to the file it points to).
    static func replacesByRenaming(_ path: String) -> Bool {
        var status = stat()
        guard lstat(path, &status) == 0 else { return true }
        return status.st_mode & S_IFMT == S_IFREG
    }
}

/// The PNG could not be written where -o said.
struct MapOutputError: ENLogError {
    let path: String
    let detail: String
    var reason: String { "cannot write \(path): \(detail)" }
    var category: ErrorCategory { .cannotWrite }
    var recoverySuggestion: String? { "choose a writable path with -o" }
}
