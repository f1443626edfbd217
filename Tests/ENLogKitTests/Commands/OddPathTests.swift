import Foundation
import Testing

/// Paths as odd as a file system allows, or as empty as a careless script makes them: a path is
/// always echoed on one line with its control characters escaped (a newline in it cannot forge a
/// line a script parses, an escape sequence cannot drive the terminal); an empty path is a
/// configuration error that leaves nothing behind; an outbox path that is no file is refused.
@Suite("odd and empty paths")
struct OddPathTests {
    /// A name that would forge an error line and clear the screen if printed as it is.
    static let forging = "x\nenlog: error: forged\u{1B}[2J"

    /// Commands given the forging path where they read or write a file (`PATH`), or as the outbox.
    static let echoes: [[String]] = [
        ["queue", "list", "--db", "PATH"],
        ["config", "show", "--config", "PATH"],
        ["log", "--nmea", "PATH", "--no-sync", "--no-geocode"],
        ["log", "--at", "1,1", "--no-sync", "--no-geocode", "--message-file", "PATH"],
        ["log", "--at", "1,1", "--no-sync", "--no-geocode", "--attach", "PATH"],
        ["log", "--photo", "PATH", "--no-sync", "--no-geocode"],
        ["log", "--at", "1,1", "--no-sync", "--no-geocode", "--template", "PATH"],
        ["import", "PATH"],
        ["watch", "--replay", "PATH"],
        ["validate", "PATH"],
    ]

    @Test(arguments: echoes)
    func aPathInAnErrorStaysOnItsLine(_ arguments: [String]) throws {
        let home = try EnlogHome()
        let path = home.directory.path(Self.forging)
        let result = try home.run(arguments.map { $0 == "PATH" ? path : $0 })
        #expect(result.status != 0 && result.status != 70, "\(result.standardError)")
        #expect(result.standardErrorLines.count == 1, "\(arguments): \(result.standardError)")
        #expect(result.standardError.contains("x\\x0Aenlog: error: forged\\x1B[2J"), "\(arguments): \(result.standardError)")
        #expect(!result.standardError.contains("\u{1B}") && !result.standardOutput.contains("\u{1B}"), "\(arguments)")
    }

    /// Paths echoed on standard output by commands that succeed.
    @Test func aPathInAReportStaysOnItsLine() throws {
        var home = try EnlogHome()
        let configHome = home.directory.path(Self.forging)
        home.extraEnvironment["XDG_CONFIG_HOME"] = configHome
        _ = try home.directory.file(Self.forging + "/enlog/credentials.json", contents: "{}")
        let logout = try home.run("auth", "logout")
        #expect(logout.status == 0, "\(logout.standardError)")
        #expect(logout.standardOutput.split(separator: "\n").count == 1 && logout.standardOutput.contains("x\\x0Aenlog"),
                "\(logout.standardOutput)")

        let tiles = try TileTestServer()
        defer { tiles.stop() }
        home.extraEnvironment.merge(["ENLOG_MAP_STYLE": "tiles", "ENLOG_MAP_TILE_URL": tiles.tileURL,
                                     "XDG_CACHE_HOME": home.directory.path("cache")]) { $1 }
        let picture = home.directory.path(Self.forging + ".png")
        let map = try home.run("map", "--at", "48.3,11.3", "-o", picture)
        #expect(map.status == 0, "\(map.standardError)")
        #expect(FileManager.default.fileExists(atPath: picture))
        #expect(map.standardOutput.split(separator: "\n").count == 1 && map.standardOutput.hasPrefix("wrote \(home.directory.path("x"))\\x0Aenlog"),
                "\(map.standardOutput)")
        #expect(!map.standardOutput.contains("\u{1B}"))
    }

    /// An empty path setting is a configuration error (a flag's, a usage error), before anything
    /// is opened: no outbox, no lock file in the working directory.
    @Test(arguments: [
        (["queue", "list"], ["ENLOG_DB": ""], 78),
        (["log", "--at", "1,1", "--no-sync", "--no-geocode"], ["ENLOG_DB": ""], 78),
        (["log", "--at", "1,1", "--no-sync", "--no-geocode"], ["ENLOG_NOTE_TEMPLATE": ""], 78),
        (["log", "--at", "1,1", "--no-sync", "--no-geocode"], ["ENLOG_NETWORK_CA_FILE": ""], 78),
        (["log", "--at", "1,1", "--no-sync", "--no-geocode", "--db", ""], [:], 2),
        (["config", "show", "--config", ""], [:], 2),
    ] as [([String], [String: String], Int32)])
    func anEmptyPathIsAConfigurationError(_ arguments: [String], _ environment: [String: String], _ status: Int32) throws {
        let home = try EnlogHome()
        let workingDirectory = try TemporaryDirectory()
        let result = try Subprocess.run(Subprocess.enlog, arguments, environment: home.environment.merging(environment) { $1 },
                                        currentDirectory: workingDirectory.url)
        #expect(result.status == status, "\(arguments) \(environment): \(result.standardError)")
        #expect(result.standardErrorLines.count == 1 && result.standardError.contains("is empty; it must be a path"),
                "\(result.standardError)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: workingDirectory.url.path).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: home.database))
    }

    /// A FIFO or a device as the outbox: refused at once (SQLite would wait for ever on the FIFO
    /// and call the device a "disk I/O error").
    @Test(arguments: ["fifo", "/dev/null"])
    func anOutboxThatIsNoFileIsRefused(_ kind: String) throws {
        let home = try EnlogHome()
        var path = kind
        if kind == "fifo" {
            path = home.directory.path("outbox.fifo")
            try #require(mkfifo(path, 0o600) == 0)
        }
        for arguments in [["queue", "list"], ["log", "--at", "1,1", "--no-sync", "--no-geocode"]] {
            let result = try RedirectedRun.run(Subprocess.enlog, arguments + ["--db", path], environment: home.environment,
                                               deadline: .seconds(60))
            #expect(!result.hung, "\(arguments) on \(kind)")
            #expect(result.status == 73, "\(arguments) on \(kind): \(result.standardError)")
            #expect(result.errorLines == ["enlog: error: cannot open outbox \(path): it is not a regular file (check that the path is a file in a directory you can write)"],
                    "\(result.standardError)")
        }
    }
}
