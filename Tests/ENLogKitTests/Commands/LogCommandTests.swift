import Foundation
import GRDB
import Testing
@testable import Compose

/// `enlog` run as a user runs it, against a private outbox and config directory.
struct EnlogHome {
    let directory: TemporaryDirectory
    var database: String { directory.path("data/enlog.sqlite") }
    var configHome: String { directory.path("config") }
    var extraEnvironment: [String: String] = [:]

    init() throws { directory = try TemporaryDirectory() }

    var environment: [String: String] {
        var environment = ["PATH": "/usr/bin:/bin", "HOME": directory.url.path, "ENLOG_DB": database,
                           "XDG_CONFIG_HOME": configHome, "TZ": "UTC",
                           // No map unless a test asks for one (with its local tile server): the
                           // default tile URL is the public OSM server, which no test may reach.
                           "ENLOG_MAP_STYLE": "none"]
        environment.merge(extraEnvironment) { $1 }
        return environment
    }

    /// The environment as `NAME=value` entries, for `ChildProcess`.
    var environmentEntries: [String] { environment.map { "\($0)=\($1)" } }

    /// `enlog ARGS…` started in the background, its output discarded.
    func start(_ arguments: [String], extraEnvironment: [String: String] = [:]) throws -> ChildProcess {
        try ChildProcess(Subprocess.enlog, arguments,
                         environment: environment.merging(extraEnvironment) { $1 }.map { "\($0)=\($1)" },
                         captureOutput: false)
    }

    func run(_ arguments: String..., standardInput: Data? = nil) throws -> ProcessResult {
        try run(arguments, standardInput: standardInput)
    }

    func run(_ arguments: [String], standardInput: Data? = nil) throws -> ProcessResult {
        try Subprocess.run(Subprocess.enlog, arguments, standardInput: standardInput, environment: environment)
    }

    func writeConfig(_ text: String) throws {
        _ = try directory.file("config/enlog/config.toml", contents: text)
    }

    func notes() throws -> [[String: Any]] {
        let result = try run("queue", "list", "--json")
        try #require(result.status == 0, "\(result.standardError)")
        return try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as! [[String: Any]]
    }

    /// `orphans`: notes without their fix plus fixes without a note (neither exists after `log`);
    /// `notesWithoutFix` alone for `watch`, whose track is fixes without notes.
    func counts() throws -> (notes: Int, fixes: Int, orphans: Int, notesWithoutFix: Int, integrity: String) {
        let queue = try DatabaseQueue(path: database)
        return try queue.read { db in
            let notesWithoutFix = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM note WHERE fixId NOT IN (SELECT id FROM fix)")!
            return (try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM note")!,
                    try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM fix")!,
                    notesWithoutFix + (try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM fix WHERE id NOT IN (SELECT fixId FROM note)")!),
                    notesWithoutFix,
                    try String.fetchOne(db, sql: "PRAGMA integrity_check")!)
        }
    }
}

@Suite("enlog log and the outbox commands")
struct LogCommandTests {
    @Test func loggingAPositionStoresAValidNoteWithItsMetadata() throws {
        let home = try EnlogHome()
        let result = try home.run("log", "--at", "35.681236,139.767125,40.5", "--no-geocode")
        #expect(result.status == 0, "\(result.standardError)")
        // The default title names the place; with no address yet, the coordinates stand in.
        #expect(result.standardOutput.hasPrefix("logged note 1: 35.681236,139.767125"), "\(result.standardOutput)")
        let notes = try home.notes()
        #expect(notes.count == 1)
        let note = notes[0]
        #expect(note["state"] as? String == "pending")
        #expect(note["addressPending"] as? Bool == true)
        #expect(note["latitude"] as? Double == 35.681236)
        #expect(note["longitude"] as? Double == 139.767125)
        #expect(note["tags"] as? [String] == ["LocationHistory"])
        let title = note["title"] as! String
        #expect(title == "35.681236,139.767125", "\(title)")
        let content = try home.run("queue", "show", "1")
        #expect(content.status == 0)
        #expect(ENMLValidator().validate(content.standardOutput).isValid)
        #expect(content.standardOutput.contains("openstreetmap.org/?mlat=35.681236&amp;mlon=139.767125"))
        #expect(content.standardOutput.contains("Altitude: 40.5 m"))
    }

    @Test func anNMEALogGivesItsLastValidFix() throws {
        let home = try EnlogHome()
        let result = try home.run("log", "--nmea", TestPaths.nmea("walk.nmea"), "--no-geocode")
        #expect(result.status == 0, "\(result.standardError)")
        let history = try home.run("history", "--json")
        let fixes = try JSONSerialization.jsonObject(with: Data(history.standardOutput.utf8)) as! [[String: Any]]
        #expect(fixes.count == 1)
        #expect(fixes[0]["source"] as? String == "nmea")
    }

    @Test func anNMEALogOnStandardInput() throws {
        let home = try EnlogHome()
        let log = try Data(contentsOf: URL(fileURLWithPath: TestPaths.nmea("walk.nmea")))
        let result = try home.run("log", "--nmea", "-", "--no-geocode", "--no-sync", standardInput: log)
        #expect(result.status == 0, "\(result.standardError)")
        let notes = try home.notes()
        #expect(notes.count == 1)
        #expect(abs((notes.first?["latitude"] as? Double ?? 0) - (48 + 8.9230 / 60)) < 1e-6, "walk.nmea's last fix")

        let empty = try home.run("log", "--nmea", "-", "--no-geocode", "--no-sync", standardInput: Data())
        #expect(empty.status == ExitStatusCode.badLocation.rawValue, "\(empty.standardError)")
        #expect(empty.standardErrorLines == ["enlog: error: NMEA log standard input is empty (point to a file of NMEA sentences such as $GPGGA,... and $GPRMC,...)"])
    }

    /// Issue 9: a sentence with a valid checksum and a latitude of 99° is skipped, not fatal; a log
    /// with nothing else names the file and the line.
    @Test func anImpossibleSentenceIsSkippedAndOnlyNamedWhenNothingElseIsLeft() throws {
        let home = try EnlogHome()
        let good = NMEA.sentence("GPGGA,101500.00,4808.9210,N,01134.6930,E,1,09,0.8,520.1,M,47.3,M,,")
            + NMEA.sentence("GPRMC,101500.00,A,4808.9210,N,01134.6930,E,2.7,54.1,090324,3.1,E,A")
        let bad = NMEA.sentence("GPGGA,101501.00,9908.9230,N,01134.6966,E,1,09,0.5,521.2,M,47.3,M,,")
            + NMEA.sentence("GPRMC,101501.00,A,9908.9230,N,01134.6966,E,2.7,54.1,090324,3.1,E,A")
        let mixed = try home.directory.file("mixed.nmea", contents: good + bad)
        let logged = try home.run("log", "--nmea", mixed.path, "--no-geocode", "--no-sync")
        #expect(logged.status == 0, "\(logged.standardError)")
        #expect(abs((try home.notes().first?["latitude"] as? Double ?? 0) - (48 + 8.921 / 60)) < 1e-6)

        let onlyBad = try home.directory.file("only-bad.nmea", contents: bad)
        let refused = try home.run("log", "--nmea", onlyBad.path, "--no-geocode", "--no-sync")
        #expect(refused.status == ExitStatusCode.badLocation.rawValue)
        #expect(refused.standardErrorLines.count == 1, "\(refused.standardError)")
        #expect(refused.standardError.contains(onlyBad.path) && refused.standardError.contains("line 1"), "\(refused.standardError)")
        #expect(!refused.standardError.contains("--at") && !refused.standardError.contains("decimal degrees"))
        #expect(try home.notes().count == 1)
    }

    @Test(arguments: [
        (["--at", "91,0"], ExitStatusCode.badLocation, "latitude"),
        (["--at", "0,181"], .badLocation, "longitude"),
        (["--at", "nan,0"], .badLocation, "nan"),
        (["--at", "48.85;2.29"], .badLocation, "48.85;2.29"),
        (["--at", "1,2,3,4"], .badLocation, "1,2,3,4"),
        (["--nmea", "/nonexistent/log.nmea"], .noInput, "/nonexistent/log.nmea"),
        (["--at", "1,2", "--template", "/nonexistent/template"], .noInput, "template"),
        (["--gpsd", "127.0.0.1:1", "--timeout", "1"], .noFix, "gpsd"),
        (["--gpsd", "not-an-endpoint:x"], .usage, "not-an-endpoint"),
    ])
    func badInputGetsOneLineAndItsOwnExitCode(_ arguments: [String], _ expected: ExitStatusCode, _ mention: String) throws {
        let home = try EnlogHome()
        let result = try Subprocess.run(Subprocess.enlog, ["log", "--no-geocode"] + arguments, environment: home.environment)
        #expect(result.status == expected.rawValue, "\(arguments): \(result.standardError)")
        #expect(result.standardErrorLines.count == 1, "\(result.standardError)")
        #expect(result.standardError.lowercased().contains(mention.lowercased()), "\(result.standardError)")
        #expect(try !FileManager.default.fileExists(atPath: home.database) || home.counts().notes == 0)
    }

    @Test func aTemplateRenderingInvalidENMLStoresNothing() throws {
        let home = try EnlogHome()
        let template = home.directory.url.appendingPathComponent("bad-template")
        _ = try home.directory.file("bad-template/title.mustache", contents: "Trip {{time}}")
        _ = try home.directory.file("bad-template/content.mustache", contents: """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE en-note SYSTEM "http://xml.evernote.com/pub/enml2.dtd">
            <en-note><p class="x">{{coordinates}}</p></en-note>
            """)
        let result = try home.run("log", "--at", "1,2", "--no-geocode", "--template", template.path)
        #expect(result.status == ExitStatusCode.invalidNote.rawValue)
        #expect(result.standardError.contains("invalid ENML"))
        #expect(result.standardError.contains("class"))
        #expect(try !FileManager.default.fileExists(atPath: home.database) || home.counts().notes == 0)
    }

    @Test func aUserTemplateIsUsedAndItsValuesAreEscaped() throws {
        let home = try EnlogHome()
        _ = try home.directory.file("mine/title.mustache", contents: "{{% CONTENT_TYPE: TEXT}}At {{coordinates}} & more")
        _ = try home.directory.file("mine/content.mustache", contents: """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE en-note SYSTEM "http://xml.evernote.com/pub/enml2.dtd">
            <en-note><h1>{{time}}</h1><p>{{source}}</p></en-note>
            """)
        try home.writeConfig("[note]\ntemplate = \"\(home.directory.path("mine"))\"\ntags = [\"trip\", \"2026\"]\nnotebook = \"Travel\"\n")
        let result = try home.run("log", "--at", "1.5,2.5", "--no-geocode")
        #expect(result.status == 0, "\(result.standardError)")
        let note = try home.notes()[0]
        #expect(note["title"] as? String == "At 1.500000,2.500000 & more")
        #expect(note["tags"] as? [String] == ["trip", "2026"])
        #expect(note["notebook"] as? String == "Travel")
    }

    @Test func databaseProblemsHaveTheirOwnExitCodes() throws {
        let home = try EnlogHome()
        _ = try home.directory.file("data/enlog.sqlite", contents: String(repeating: "this is not a database ", count: 100))
        let corrupt = try home.run("log", "--at", "1,2", "--no-geocode")
        #expect(corrupt.status == ExitStatusCode.ioError.rawValue, "\(corrupt.standardError)")
        #expect(corrupt.standardErrorLines.count == 1)

        let blocked = try EnlogHome()
        _ = try blocked.directory.file("data", contents: "a file where the data directory should be")
        let cannotCreate = try blocked.run("log", "--at", "1,2", "--no-geocode")
        #expect(cannotCreate.status == ExitStatusCode.cannotWrite.rawValue, "\(cannotCreate.standardError)")
    }

    /// Root writes through file modes, so the read-only case runs enlog as `nobody`.
    @Test(.enabled(if: getuid() == 0 && Subprocess.which("setpriv") != nil, "needs root and setpriv to drop privileges"))
    func aReadOnlyOutboxIsReportedAndKept() throws {
        let home = try EnlogHome()
        #expect(try home.run("log", "--at", "1,2", "--no-geocode").status == 0)
        let data = home.directory.url.appendingPathComponent("data")
        chmod(home.database, 0o444)
        chmod(data.path, 0o555)
        chmod(home.directory.url.path, 0o755)
        // A copy `nobody` can reach, wherever the checkout lives.
        let binary = home.directory.url.appendingPathComponent("enlog")
        try FileManager.default.copyItem(at: Subprocess.enlog, to: binary)
        chmod(binary.path, 0o755)
        let arguments = ["--reuid=nobody", "--regid=nogroup", "--clear-groups", binary.path,
                         "log", "--at", "3,4", "--no-geocode"]
        let result = try Subprocess.run(Subprocess.which("setpriv")!, arguments, environment: home.environment)
        #expect(result.status == ExitStatusCode.cannotWrite.rawValue, "\(result.standardError)")
        #expect(result.standardErrorLines.count == 1)
        #expect(result.standardError.contains("cannot be written"))
        // Reading needs no write access: not to the file, not to its folder (no -shm can be made).
        for (command, expected) in [(["queue", "list"], "1.000000,2.000000"), (["queue", "show", "1"], "<en-note>"),
                                    (["history"], "1.000000"), (["queue", "list", "--json"], "1.000000,2.000000")] {
            let read = try Subprocess.run(Subprocess.which("setpriv")!, Array(arguments.prefix(4)) + command,
                                          environment: home.environment)
            #expect(read.status == 0, "\(command): \(read.standardError)")
            #expect(read.standardOutput.contains(expected), "\(command): \(read.standardOutput)")
        }
        chmod(data.path, 0o755)
        #expect(try home.counts().notes == 1)
    }

    @Test func aLockedDatabaseIsATemporaryFailureAndLosesNothing() throws {
        let home = try EnlogHome()
        #expect(try home.run("log", "--at", "1,2", "--no-geocode").status == 0)
        var holding = Configuration()
        holding.allowsUnsafeTransactions = true
        let holder = try DatabaseQueue(path: home.database, configuration: holding)
        try holder.inDatabase { db in try db.execute(sql: "BEGIN EXCLUSIVE") }
        let locked = try home.run("log", "--at", "3,4", "--no-geocode")
        try holder.inDatabase { db in try db.execute(sql: "ROLLBACK") }
        #expect(locked.status == ExitStatusCode.temporary.rawValue, "\(locked.standardError)")
        #expect(locked.standardError.contains("locked"))
        #expect(try home.counts().notes == 1)
        #expect(try home.run("log", "--at", "3,4", "--no-geocode").status == 0)
        #expect(try home.counts().notes == 2)
    }

    @Test func configErrorsAreReported() throws {
        let home = try EnlogHome()
        try home.writeConfig("[note]\nnotebok = \"typo\"\n")
        let unknown = try home.run("config", "show")
        #expect(unknown.status == ExitStatusCode.config.rawValue)
        #expect(unknown.standardError.contains("note.notebok"))
        try home.writeConfig("[note\n")
        #expect(try home.run("config", "show").status == ExitStatusCode.config.rawValue)
        try home.writeConfig("[note]\ntime_zone = \"Mars/Olympus\"\n")
        #expect(try home.run("log", "--at", "1,2").status == ExitStatusCode.config.rawValue)
    }

    @Test func configShowLayersSourcesAndHidesSecrets() throws {
        var home = try EnlogHome()
        try home.writeConfig("[note]\nnotebook = \"From File\"\nstatic_map_key = \"supersecret-file\"\n[geocoding]\ntimeout = 2\n")
        home.extraEnvironment = ["ENLOG_GEOCODING_TIMEOUT": "1.5", "ENLOG_NOTE_STATIC_MAP_KEY": "supersecret-env"]
        let result = try home.run("config", "show", "--json")
        #expect(result.status == 0, "\(result.standardError)")
        #expect(!result.standardOutput.contains("supersecret"))
        let settings = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as! [String: [String: Any]]
        #expect(settings["note.notebook"]?["value"] as? String == "From File")
        #expect(settings["note.notebook"]?["source"] as? String == "file")
        #expect(settings["geocoding.timeout"]?["value"] as? String == "1.5")
        #expect(settings["geocoding.timeout"]?["source"] as? String == "environment")
        #expect(settings["note.static_map_key"]?["value"] as? String == "(set, hidden)")
        #expect(settings["outbox.db"]?["value"] as? String == home.database)
    }

    @Test func queueCommandsManageNotes() throws {
        let home = try EnlogHome()
        for latitude in 1...3 { #expect(try home.run("log", "--at", "\(latitude),2", "--no-geocode").status == 0) }
        #expect(try home.run("queue", "list", "--state", "pending").standardOutput.split(separator: "\n").count == 3)
        #expect(try home.run("queue", "list", "--state", "synced").standardOutput.isEmpty)
        #expect(try home.run("queue", "list", "--state", "bogus").status == ExitStatusCode.usage.rawValue)
        let refused = try home.run("queue", "drop", "2")
        #expect(refused.status == ExitStatusCode.usage.rawValue)
        #expect(refused.standardError.contains("--yes"))
        #expect(try home.run("queue", "drop", "2", "--yes").status == 0)
        #expect(try home.notes().map { $0["id"] as! Int } == [1, 3])
        #expect(try home.run("queue", "show", "2").status == ExitStatusCode.usage.rawValue)
        #expect(try home.run("queue", "retry", "1").status == 0)
        // The dropped note's fix stays in the history, without a note: listed with --track.
        let since = try home.run("history", "--since", "2000-01-01")
        #expect(since.standardOutput.split(separator: "\n").count == 2)
        #expect(try home.run("history", "--since", "2000-01-01", "--track").standardOutput.split(separator: "\n").count == 3)
        #expect(try home.run("history", "--since", "2999-01-01").standardOutput.isEmpty)
        #expect(try home.run("history", "--since", "yesterday").status == ExitStatusCode.usage.rawValue)
    }

    @Test func eightConcurrentLoggersStoreExactly800Notes() throws {
        let home = try EnlogHome()
        let loggers = try (1...8).map { worker in
            try ChildProcess("/bin/sh", ["-c", "i=0; while [ $i -lt 100 ]; do \"$ENLOG\" log --at \(worker),\(worker) --no-geocode >/dev/null || exit 1; i=$((i+1)); done"],
                             environment: home.environmentEntries + ["ENLOG=\(Subprocess.enlog.path)"], captureOutput: false)
        }
        for logger in loggers {
            #expect(logger.wait() == 0)
        }
        let counts = try home.counts()
        #expect(counts.notes == 800)
        #expect(counts.fixes == 800)
        #expect(counts.orphans == 0)
        #expect(counts.integrity == "ok")
        let perWorker = try DatabaseQueue(path: home.database).read { db in
            try Row.fetchAll(db, sql: "SELECT CAST(latitude AS INTEGER) AS worker, COUNT(*) AS n FROM note GROUP BY worker").map { row -> Int in row["n"] }
        }
        #expect(perWorker == Array(repeating: 100, count: 8))
    }

    /// Eight processes creating the same new outbox at once: one migrates, the others wait.
    @Test func loggersCreatingANewOutboxTogetherAllSucceed() throws {
        for _ in 0..<8 {
            let home = try EnlogHome()
            let loggers = try (1...8).map { worker in
                try home.start(["log", "--at", "\(worker),\(worker)", "--no-geocode", "--no-sync"])
            }
            for logger in loggers {
                #expect(logger.wait() == 0)
            }
            #expect(try home.counts().notes == 8)
        }
    }

    @Test func aLoggerKilledAtAnyMomentLeavesTheWholeNoteOrNone() throws {
        let home = try EnlogHome()
        #expect(try home.run("log", "--at", "0,0", "--no-geocode").status == 0)
        var generator = SystemRandomNumberGenerator()
        var killed = 0
        for round in 0..<40 {
            let process = try home.start(["log", "--at", "\(round % 80),\(round)", "--no-geocode"])
            // The kill's random moment is what this test is about, not a wait for something.
            usleep(UInt32.random(in: 0...60_000, using: &generator))
            if process.isRunning {
                kill(process.pid, SIGKILL)
                killed += 1
            }
            process.wait()
        }
        let counts = try home.counts()
        #expect(counts.integrity == "ok")
        #expect(counts.orphans == 0)
        #expect(counts.notes == counts.fixes)
        #expect(killed > 0, "no process was killed mid-way; the test proved nothing")
        // The outbox still works and every stored note is whole, valid ENML.
        #expect(try home.run("log", "--at", "1,1", "--no-geocode").status == 0)
        for note in try home.notes() {
            let content = try home.run("queue", "show", "\(note["id"] as! Int)")
            #expect(ENMLValidator().validate(content.standardOutput).isValid)
        }
    }
}

/// The exit codes docs/exit-status.md documents, as the tests expect them (kept apart from the
/// executable's own table on purpose: a change there must show up here).
enum ExitStatusCode: Int32 {
    case success = 0, invalidNote = 1, usage = 2, badLocation = 65, noInput = 66, noFix = 69
    case foreignDatabase = 72, cannotWrite = 73, ioError = 74, temporary = 75, noPermission = 77, config = 78
}
