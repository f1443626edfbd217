import Foundation
import Testing
@testable import Compose

/// Every command that prints, with standard output full (/dev/full), closed (`>&-`), or a pipe
/// whose reader is gone: one error line and exit 74, or for a closed pipe the quiet end a filter
/// has (SIGPIPE, 141); never a crash. `log` says the note it stored is stored.
@Suite("standard output that cannot be written")
struct OutputFailureTests {
    /// A command line and whether it changes the outbox before it prints (`log`).
    struct Command: Sendable, CustomStringConvertible {
        var arguments: [String]
        var logs = false
        var needsTiles = false
        var description: String { arguments.joined(separator: " ") }
    }

    static let attachment = "an attachment\n"

    static let commands: [Command] = [
        Command(arguments: ["log", "--at", "48.3,11.3", "--no-sync", "--no-geocode"], logs: true),
        Command(arguments: ["log", "--at", "48.3,11.3", "--no-sync", "--no-geocode", "--json"], logs: true),
        Command(arguments: ["queue", "list"]),
        Command(arguments: ["queue", "list", "--json"]),
        Command(arguments: ["queue", "show", "1"]),
        Command(arguments: ["queue", "show", "1", "--json"]),
        Command(arguments: ["queue", "show", "1", "--resource", MapImage.md5Hex(Array(attachment.utf8))]),
        Command(arguments: ["queue", "drop", "2", "--yes"]),
        Command(arguments: ["history"]),
        Command(arguments: ["history", "--json", "--track"]),
        Command(arguments: ["history", "--format", "gpx"]),
        Command(arguments: ["history", "--format", "geojson"]),
        Command(arguments: ["history", "--format", "csv"]),
        Command(arguments: ["import", Fixtures.root.appendingPathComponent("nmea/walk.nmea").path]),
        Command(arguments: ["config", "show"]),
        Command(arguments: ["config", "show", "--json"]),
        Command(arguments: ["validate", "--json", Fixtures.enml("valid")[0].path]),
        Command(arguments: ["reachability", "--probe", "127.0.0.1:1"]),
        Command(arguments: ["auth", "status", "--json"]),
        Command(arguments: ["auth", "logout"]),
        Command(arguments: ["map", "--at", "48.3,11.3"], needsTiles: true),
        Command(arguments: ["export", "--enex", "-"]),
        Command(arguments: ["export", "--enex", "-", "--new"]),
        // argument-parser's own output, printed before any command runs.
        Command(arguments: ["--help"]),
        Command(arguments: ["--version"]),
        Command(arguments: ["log", "--help"]),
        Command(arguments: ["help", "queue"]),
    ]

    static let outputs: [RedirectedRun.Output] = [.file("/dev/full"), .closed, .closedPipe]

    /// An outbox with two notes (the first carrying a file) and an imported track.
    static func preparedHome(tiles: TileTestServer?) throws -> EnlogHome {
        var home = try EnlogHome()
        if let tiles {
            home.extraEnvironment = ["ENLOG_MAP_STYLE": "tiles", "ENLOG_MAP_TILE_URL": tiles.tileURL,
                                     "XDG_CACHE_HOME": home.directory.path("cache"),
                                     "ENLOG_GEOCODING_CONTACT": "output-test@example.org"]
        }
        let file = try home.directory.file("attached.txt", contents: attachment)
        for arguments in [["--attach", file.path], []] {
            let logged = try home.run(["log", "--at", "48.1486,11.5783", "--no-sync", "--no-geocode"] + arguments)
            try #require(logged.status == 0, "\(logged.standardError)")
        }
        try #require(try home.run("import", Fixtures.root.appendingPathComponent("nmea/walk.nmea").path).status == 0)
        return home
    }

    @Test(arguments: commands, outputs)
    func aFailedWriteIsOneErrorLineNotACrash(_ command: Command, _ output: RedirectedRun.Output) throws {
        let tiles = command.needsTiles ? try TileTestServer() : nil
        defer { tiles?.stop() }
        let home = try Self.preparedHome(tiles: tiles)
        let notesBefore = try home.counts().notes
        let result = try RedirectedRun.run(Subprocess.enlog, command.arguments, environment: home.environment,
                                           standardOutput: output)
        let context = "\(command) \(output): status \(result.status), stderr: \(result.standardError)"
        #expect(!result.hung, "\(context)")
        #expect(result.signal == nil || result.signal == SIGPIPE, "killed: \(context)")
        #expect(!result.standardError.contains("Fatal error"), "\(context)")
        if command.arguments.contains("--new") {
            #expect(try home.run("queue", "list", "--state", "exported").standardOutput.isEmpty, "nothing marked: \(context)")
        }
        if command.logs {
            // Stored, and said so, whatever happened to the output.
            #expect(try home.counts().notes == notesBefore + 1, "\(context)")
            #expect(result.status == 74, "\(context)")
            #expect(result.errorLines.count == 1 && result.errorLines[0].hasPrefix("enlog: error: note \(notesBefore + 1) is stored; could not print: "),
                    "\(context)")
            return
        }
        switch output {
        case .closedPipe:
            // The conventional end of a filter whose reader left: no word, SIGPIPE's status.
            #expect(result.status == 128 + SIGPIPE, "\(context)")
            #expect(result.errorLines.isEmpty, "\(context)")
        case .file:
            #expect(result.status == 74, "\(context)")
            #expect(result.errorLines == ["enlog: error: cannot write to standard output: No space left on device"], "\(context)")
        case .closed:
            #expect(result.status == 74, "\(context)")
            #expect(result.errorLines == ["enlog: error: cannot write to standard output: standard output is closed"], "\(context)")
        }
    }

    /// Standard error full or closed as well: the exit status still tells, and nothing crashes.
    @Test func standardErrorThatCannotBeWrittenIsNoCrash() throws {
        let home = try Self.preparedHome(tiles: nil)
        let result = try RedirectedRun.run(Subprocess.enlog, ["queue", "show", "1"],
                                           environment: home.environment, standardOutput: .file("/dev/full"),
                                           standardError: .file("/dev/full"))
        #expect(result.status == 74 && result.signal == nil, "status \(result.status)")
        let closed = try RedirectedRun.run(Subprocess.enlog, ["queue", "show", "1"],
                                           environment: home.environment, standardError: .closed)
        #expect(closed.status == 0 && closed.signal == nil, "status \(closed.status)")
        #expect(closed.standardOutput.hasPrefix("<?xml"), "\(closed.standardOutput)")
    }
}
