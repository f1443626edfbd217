import Foundation
import Mustache
import Testing
@testable import Support
@testable import Configuration
@testable import Capture
@testable import Compose
@testable import Sync

/// Numbers, flags and files a user types or edits: every one is checked where it is read, and a
/// bad one is one `enlog: error:` line naming where it came from, with its own exit code.
@Suite("enlog input: numbers, flags, config and template files")
struct InputCommandTests {
    /// Every numeric setting enlog has: the test follows the list, so a new one is covered too.
    static let numericSettings = Setting.all.filter { $0.range != nil }

    /// Values that crashed (1e17, 1e300) or make no sense (NaN, infinities, negative, zero).
    static let badNumbers = ["nan", "inf", "-inf", "1e300", "1e17", "-1", "0", "-0.0", "1e-300"]

    /// The bad numbers outside this setting's range (a zoom or a cache size of 0 is a real choice).
    static func badNumbers(for setting: Setting) -> [String] {
        badNumbers.filter { value in Double(value).map { !setting.range!.contains($0) } ?? true }
    }

    @Test func everyNumericSettingHasARange() {
        #expect(Self.numericSettings.map(\.name).sorted() == [
            "geocoding.min_interval", "geocoding.timeout", "location.max_age", "location.min_accuracy", "location.timeout",
            "map.cache_size", "map.height", "map.timeout", "map.width", "map.zoom",
            "network.dns_timeout", "network.probe_budget", "network.request_timeout",
            "serve.idle_timeout", "serve.max_body", "serve.max_connections", "serve.rate",
            "stays.max_accuracy", "stays.max_gap", "stays.min_duration", "stays.radius",
            "watch.max_interval", "watch.min_distance", "watch.min_interval",
            "watch.track_distance", "watch.track_interval",
        ])
    }

    @Test(arguments: numericSettings)
    func aNumericVariableOutOfRangeIsAConfigErrorNamingTheVariable(_ setting: Setting) throws {
        for value in Self.badNumbers(for: setting) + ["ten", ""] {
            var home = try EnlogHome()
            home.extraEnvironment = [setting.environmentNames[0]: value]
            let result = try home.run("config", "show")
            #expect(result.status == ExitStatusCode.config.rawValue, "\(setting.name)=\(value): \(result.standardError)")
            #expect(result.standardErrorLines.count == 1, "\(result.standardError)")
            #expect(result.standardError.hasPrefix("enlog: error: \(setting.environmentNames[0]) "), "\(result.standardError)")
            #expect(result.standardError.contains("from \(NumericRange.format(setting.range!.lowest)) to"), "\(result.standardError)")
        }
    }

    @Test(arguments: numericSettings)
    func aNumericKeyOutOfRangeIsAConfigErrorNamingFileAndKey(_ setting: Setting) throws {
        for value in ["nan", "inf", "-inf", "1e300", "1e17", "-1", "0", "\"ten\""]
            where Double(value).map({ !setting.range!.contains($0) }) ?? true {
            let home = try EnlogHome()
            try home.writeConfig("[\(setting.section)]\n\(setting.key) = \(value)\n")
            let result = try home.run("config", "show")
            #expect(result.status == ExitStatusCode.config.rawValue, "\(setting.name) = \(value): \(result.standardError)")
            #expect(result.standardErrorLines.count == 1, "\(result.standardError)")
            #expect(result.standardError.contains("config.toml: '\(setting.name)'"), "\(result.standardError)")
        }
    }

    /// The three crashes from the issue, each in the command that crashed (SIGILL, exit 132).
    @Test(arguments: [
        (["ENLOG_GEOCODING_TIMEOUT": "1e17"], ["log", "--at", "1,2", "--no-sync"], "ENLOG_GEOCODING_TIMEOUT"),
        (["ENLOG_NETWORK_PROBE_BUDGET": "1e17"], ["reachability", "--probe", "127.0.0.1:1"], "ENLOG_NETWORK_PROBE_BUDGET"),
        (["ENLOG_NETWORK_DNS_TIMEOUT": "1e300"], ["sync"], "ENLOG_NETWORK_DNS_TIMEOUT"),
    ])
    func hugeNumbersNoLongerCrash(_ environment: [String: String], _ arguments: [String], _ named: String) throws {
        var home = try EnlogHome()
        home.extraEnvironment = environment.merging(["ENLOG_GEOCODING_URL": "http://127.0.0.1:1"]) { $1 }
        let result = try Subprocess.run(Subprocess.enlog, arguments, environment: home.environment)
        #expect(result.status == ExitStatusCode.config.rawValue, "\(result.standardError)")
        #expect(result.standardErrorLines.count == 1, "\(result.standardError)")
        #expect(result.standardError.contains(named))
    }

    /// Ports are numbers too: in an address setting they are checked with the setting.
    @Test(arguments: [
        ("ENLOG_NETWORK_PROBES", "192.0.2.1:99999"), ("ENLOG_NETWORK_PROBES", "192.0.2.1:0"),
        ("ENLOG_NETWORK_PROBES", "192.0.2.1:443,192.0.2.2:-1"), ("ENLOG_LOCATION_GPSD", "127.0.0.1:65536"),
        ("ENLOG_LOCATION_GPSD", "127.0.0.1:1e3"),
    ])
    func aBadPortInAnAddressSettingIsAConfigError(_ variable: String, _ value: String) throws {
        var home = try EnlogHome()
        home.extraEnvironment = [variable: value]
        for command in [["config", "show"], ["reachability"], ["log", "--no-sync"]] {
            let result = try Subprocess.run(Subprocess.enlog, command, environment: home.environment)
            #expect(result.status == ExitStatusCode.config.rawValue, "\(command) \(variable)=\(value): \(result.standardError)")
            #expect(result.standardErrorLines.count == 1)
            #expect(result.standardError.hasPrefix("enlog: error: \(variable) "), "\(result.standardError)")
        }
    }

    @Test func aHugeGeocodingTimeoutInTheConfigFileNoLongerCrashes() throws {
        let home = try EnlogHome()
        try home.writeConfig("[geocoding]\ntimeout = 1e300\n")
        let result = try home.run("log", "--at", "1,2", "--no-sync")
        #expect(result.status == ExitStatusCode.config.rawValue, "\(result.standardError)")
        #expect(result.standardError.contains("geocoding.timeout"))
    }

    /// Every numeric flag, with values that parse as numbers but are out of range: usage (2).
    @Test(arguments: [
        (["log", "--at", "1,2", "--no-geocode", "--no-sync"], "--timeout"),
        (["log", "--at", "1,2", "--no-geocode", "--no-sync"], "--max-age"),
        (["log", "--at", "1,2", "--no-geocode", "--no-sync"], "--min-accuracy"),
        (["sync"], "--max"),
        (["reachability", "--probe", "127.0.0.1:1"], "--budget-ms"),
        (["auth", "login", "--no-browser"], "--timeout"),
    ])
    func aNumericFlagOutOfRangeIsAUsageErrorNamingTheFlag(_ command: [String], _ flag: String) throws {
        for value in Self.badNumbers + ["99999999999999999999", "1e19"] {
            let home = try EnlogHome()
            let result = try Subprocess.run(Subprocess.enlog, command + ["\(flag)=\(value)"], environment: home.environment)
            #expect(result.status == ExitStatusCode.usage.rawValue, "\(command) \(flag)=\(value): \(result.standardError)")
            #expect(result.standardErrorLines.count == 1, "\(result.standardError)")
            #expect(result.standardError.hasPrefix("enlog: error: "), "\(result.standardError)")
            #expect(result.standardError.contains(flag), "\(result.standardError)")
            #expect(try !FileManager.default.fileExists(atPath: home.database) || home.counts().notes == 0)
        }
    }

    @Test func flagsInRangeStillWork() throws {
        let home = try EnlogHome()
        let result = try home.run("log", "--at", "1,2", "--no-geocode", "--no-sync", "--timeout", "0.5", "--max-age=86400", "--min-accuracy", "25")
        #expect(result.status == 0, "\(result.standardError)")
    }

    // MARK: - --at with a negative latitude (item 5)

    @Test(arguments: [
        ("-33.86,151.2", -33.86, 151.2), ("-33.86,-70.5", -33.86, -70.5), ("40.7,-74", 40.7, -74.0), ("-0.5,-0.5,-12", -0.5, -0.5),
    ])
    func aSouthernOrWesternPositionIsAcceptedAsItIs(_ at: String, _ latitude: Double, _ longitude: Double) throws {
        let home = try EnlogHome()
        let result = try home.run("log", "--at", at, "--no-geocode", "--no-sync")
        #expect(result.status == 0, "\(result.standardError)")
        let note = try #require(try home.notes().first)
        #expect(note["latitude"] as? Double == latitude)
        #expect(note["longitude"] as? Double == longitude)
    }

    @Test(arguments: ["1,2,99999999999999999999999999999999999999999", "1,2,-20000", "1,2,100000.5"])
    func anAltitudeOutOfRangeIsABadLocation(_ at: String) throws {
        let home = try EnlogHome()
        let result = try home.run("log", "--at", at, "--no-geocode", "--no-sync")
        #expect(result.status == ExitStatusCode.badLocation.rawValue, "\(result.standardError)")
        #expect(result.standardError.contains("altitude"))
    }

    @Test func theHelpSaysNegativePositionsWork() throws {
        let help = try EnlogHome().run("log", "--help")
        #expect(help.standardOutput.split(whereSeparator: \.isWhitespace).joined(separator: " ").contains("--at -33.86,151.2"))
    }

    // MARK: - Misclassified errors (item 10)

    @Test func garbageCredentialsAreAnAuthErrorNamingTheFile() throws {
        let home = try EnlogHome()
        let path = try home.directory.file("config/enlog/credentials.json", contents: "\u{1}garbage{").path
        chmod(path, 0o600)
        for command in [["auth", "status"], ["notebooks"], ["sync"]] {
            let result = try Subprocess.run(Subprocess.enlog, command, environment: home.environment)
            #expect(result.status == ExitStatusCode.noPermission.rawValue, "\(command): \(result.standardError)")
            #expect(result.standardErrorLines.count == 1)
            #expect(result.standardError.contains(path), "\(result.standardError)")
        }
    }

    @Test(arguments: [
        ("[note]\nnotebook = \"\"\n", "note.notebook"),
        ("[note]\nnotebook = \" padded\"\n", "note.notebook"),
        ("[note]\nnotebook = \"\(String(repeating: "n", count: 101))\"\n", "note.notebook"),
        ("[note]\ntags = [\"\(String(repeating: "t", count: 200))\"]\n", "note.tags"),
        ("[note]\ntags = [\"ok\", \"a,b\"]\n", "note.tags"),
        ("[note]\ntags = [\"tab\\there\"]\n", "note.tags"),
    ])
    func badNotebookAndTagNamesAreConfigErrors(_ file: String, _ key: String) throws {
        let home = try EnlogHome()
        try home.writeConfig(file)
        for command in [["config", "show"], ["log", "--at", "1,2", "--no-geocode", "--no-sync"]] {
            let result = try Subprocess.run(Subprocess.enlog, command, environment: home.environment)
            #expect(result.status == ExitStatusCode.config.rawValue, "\(command): \(result.standardError)")
            #expect(result.standardErrorLines.count == 1)
            #expect(result.standardError.contains("config.toml: '\(key)'"), "\(result.standardError)")
            #expect(!result.standardError.contains("template"), "\(result.standardError)")
        }
    }

    /// Table headers whose name starts with what no key can start with: TOMLKit's toml++ asserted
    /// and aborted enlog on them (a fuzzer's find, Tests/Fixtures/fuzz/config/); now a syntax
    /// error at that character, and brackets in values, strings and comments still read as before.
    @Test(arguments: [("[(map]\n", "1:2"), ("[\n", "1:2"), ("[note]\nmap = \"google\"\n  [[ +a]]\n", "3:6"), ("\u{FEFF}[ é]", "1:3")])
    func aTableHeaderNoKeyCanStartIsASyntaxError(_ file: String, _ position: String) throws {
        let home = try EnlogHome()
        try home.writeConfig(file)
        let result = try home.run("config", "show")
        #expect(result.status == ExitStatusCode.config.rawValue, "\(result.standardError)")
        #expect(result.standardErrorLines.count == 1, "\(result.standardError)")
        #expect(result.standardError.contains("config.toml:\(position): a table header's name must start with"), "\(result.standardError)")
    }

    @Test func bracketsInValuesStringsAndCommentsAreNoHeaders() throws {
        let home = try EnlogHome()
        try home.writeConfig(#"""
            [note]  # [(a comment
            tags = [
              "[(a", '[(b',
            ]
            [ "geocoding" ]
            contact = """x [(y] \""" [(z \
            [(z"""

            """#)
        let result = try home.run("config", "show")
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.contains("[(a"), "\(result.standardOutput)")
    }

    @Test func aBadTagInTheEnvironmentNamesTheVariable() throws {
        var home = try EnlogHome()
        home.extraEnvironment = ["ENLOG_NOTE_TAGS": "fine," + String(repeating: "t", count: 200)]
        let result = try home.run("log", "--at", "1,2", "--no-geocode", "--no-sync")
        #expect(result.status == ExitStatusCode.config.rawValue)
        #expect(result.standardError.hasPrefix("enlog: error: ENLOG_NOTE_TAGS "), "\(result.standardError)")
    }

    @Test(arguments: [[UInt8]([0x00, 0x01, 0xFF, 0xFE, 0x00, 0x9C]), [UInt8](Array("[note]\nnotebook = \"Caf".utf8) + [0xE9, 0x22, 0x0A])])
    func aConfigFileThatIsNotUTF8TextIsAnError(_ bytes: [UInt8]) throws {
        let home = try EnlogHome()
        let path = try home.directory.file("config/enlog/config.toml", contents: "").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let result = try home.run("config", "show")
        #expect(result.status == ExitStatusCode.config.rawValue, "\(result.standardError)")
        #expect(result.standardErrorLines.count == 1)
        #expect(result.standardError.contains(path) && result.standardError.contains("UTF-8"), "\(result.standardError)")
    }

    func template(_ home: EnlogHome, title: String = "At {{coordinates}}", content: [UInt8]) throws -> String {
        _ = try home.directory.file("tpl/title.mustache", contents: title)
        let path = try home.directory.file("tpl/content.mustache", contents: "").path
        try Data(content).write(to: URL(fileURLWithPath: path))
        return home.directory.path("tpl")
    }

    static let contentHead = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE en-note SYSTEM "http://xml.evernote.com/pub/enml2.dtd">

        """

    @Test(arguments: [
        ("<en-note>{{#address}}<p>{{address}}</p></en-note>", "never closed"),
        ("<en-note>{{#address}}<p>x</p>{{/place}}</en-note>", "closed"),
        ("<en-note>{{address</en-note>", "not finished"),
    ])
    func aTemplateSyntaxErrorIsOneLineWithFileLineAndColumn(_ body: String, _ words: String) throws {
        let home = try EnlogHome()
        let directory = try template(home, content: Array((Self.contentHead + body).utf8))
        let result = try home.run("log", "--at", "1,2", "--no-geocode", "--no-sync", "--template", directory)
        #expect(result.status == ExitStatusCode.invalidNote.rawValue, "\(result.standardError)")
        #expect(result.standardErrorLines.count == 1, "\(result.standardError)")
        #expect(result.standardError.contains(directory + "/content.mustache:3:"), "\(result.standardError)")
        #expect(result.standardError.contains(words), "\(result.standardError)")
        #expect(!result.standardError.contains("ParserError"), "\(result.standardError)")
    }

    /// The content is parsed with a pragma in front of its first line (ENMLEscaping); an error on
    /// that line still names the column swift-mustache gives for the file as it is.
    @Test(arguments: ["<en-note>{{address</en-note>", "<en-note>{{#a}}x{{/b}}</en-note>", "{{/x}}"])
    func aSyntaxErrorOnTheFirstLineNamesItsOwnColumn(_ content: String) throws {
        var column = 0
        do {
            _ = try MustacheTemplate(string: content)
        } catch let error as MustacheTemplate.ParserError {
            column = error.context.columnNumber
        }
        #expect(column > 0)
        let error = try #require(throws: NoteError.self) { try NoteTemplate(name: "t", title: "x", content: content) }
        #expect(error.reason.hasPrefix("template t/content.mustache:1:\(column): "), "\(error.reason)")
    }

    @Test func aLatin1ByteInATemplateIsAnErrorNamingTheFile() throws {
        let home = try EnlogHome()
        let content = Array((Self.contentHead + "<en-note><p>Caf").utf8) + [0xE9] + Array("</p></en-note>".utf8)
        let directory = try template(home, content: content)
        let result = try home.run("log", "--at", "1,2", "--no-geocode", "--no-sync", "--template", directory)
        #expect(result.status == ExitStatusCode.noInput.rawValue, "\(result.standardError)")
        #expect(result.standardErrorLines.count == 1)
        #expect(result.standardError.contains(directory + "/content.mustache"), "\(result.standardError)")
        #expect(result.standardError.contains("0xE9"), "\(result.standardError)")
        #expect(try !FileManager.default.fileExists(atPath: home.database) || home.counts().notes == 0)
    }

    @Test(arguments: [
        ["log", "--bogus"], ["log", "--at"], ["queue", "show"], ["queue", "show", "x"], ["sync", "--max", "1e300"],
        ["nonsense"], ["queue", "list", "--state", "lost"], ["history", "--since", "yesterday"],
    ])
    func usageErrorsAreOneLine(_ arguments: [String]) throws {
        let result = try Subprocess.run(Subprocess.enlog, arguments, environment: try EnlogHome().environment)
        #expect(result.status == ExitStatusCode.usage.rawValue, "\(arguments): \(result.standardError)")
        #expect(result.standardErrorLines.count == 1, "\(arguments): \(result.standardError)")
        #expect(result.standardError.hasPrefix("enlog: error: "), "\(result.standardError)")
        #expect(result.standardError.contains("--help"), "\(result.standardError)")
        if arguments[0] != "nonsense" {
            #expect(result.standardError.contains("(see `enlog \(arguments[0])"), "the hint names the command: \(result.standardError)")
        }
    }

    // MARK: - What a seasoned CLI user expects

    static let commands: [[String]] = [
        [], ["log"], ["sync"], ["queue"], ["queue", "list"], ["queue", "show"], ["queue", "retry"], ["queue", "drop"],
        ["history"], ["auth"], ["auth", "login"], ["auth", "token"], ["auth", "status"], ["auth", "logout"],
        ["notebooks"], ["reachability"], ["config"], ["config", "show"], ["validate"], ["export"], ["timeline"], ["places"], ["places", "list"], ["places", "name"], ["places", "add"], ["places", "merge"], ["places", "forget"],
    ]

    @Test(arguments: commands)
    func everyHelpHasExamplesAndNoDoubledDefaults(_ command: [String]) throws {
        let result = try Subprocess.run(Subprocess.enlog, command + ["--help"], environment: [:])
        #expect(result.status == 0)
        #expect(result.standardOutput.contains("Examples:"), "\(command)")
        // Preformatted blocks (examples, exit codes) fit 80 columns: a wrapped line would lose its indent.
        var inBlock = false
        for line in result.standardOutput.split(separator: "\n", omittingEmptySubsequences: false) {
            if ["Examples:", "Exit status:"].contains(line) || line.hasPrefix("Shell completions") { inBlock = true; continue }
            if line.isEmpty { inBlock = false; continue }
            #expect(!inBlock || line.hasPrefix("  "), "\(command): wrapped line '\(line)'")
        }
        let flat = result.standardOutput.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(flat.range(of: #"\(default[^)]*\)\.? \(default"#, options: .regularExpression) == nil, "\(command): \(flat)")
    }

    @Test func theMainHelpListsExitCodesAndCompletions() throws {
        let help = try Subprocess.enlog("--help").standardOutput
        for code in [0, 1, 2, 65, 66, 69, 72, 73, 74, 75, 76, 77, 78] {
            #expect(help.range(of: #"(?m)^\s+\#(code)  \S"#, options: .regularExpression) != nil, "exit code \(code) missing")
        }
        #expect(help.contains("--generate-completion-script bash"))
        for shell in ["bash", "zsh", "fish"] {
            let script = try Subprocess.enlog("--generate-completion-script", shell)
            #expect(script.status == 0)
            #expect(script.standardOutput.contains("enlog"))
        }
    }

    @Test func queueShowPrintsJSON() throws {
        let home = try EnlogHome()
        #expect(try home.run("log", "--at", "1,2", "--no-geocode", "--no-sync").status == 0)
        let result = try home.run("queue", "show", "1", "--json")
        #expect(result.status == 0, "\(result.standardError)")
        let note = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as! [String: Any]
        #expect(note["id"] as? Int == 1)
        #expect(note["state"] as? String == "pending")
        #expect((note["content"] as? String)?.contains("<en-note") == true)
    }

    @Test func authStatusAnswersJSONWhenSignedOut() throws {
        let home = try EnlogHome()
        let result = try home.run("auth", "status", "--json")
        #expect(result.status == ExitStatusCode.noPermission.rawValue)
        let status = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as! [String: Any]
        #expect(status["signedIn"] as? Bool == false)
        #expect(result.standardErrorLines.count == 1)
    }

    @Test(arguments: [
        (["queue", "show", "99", "--json"], ExitStatusCode.noInput),   // no outbox yet: nothing is created
        (["log", "--at", "100,2", "--no-geocode", "--json"], ExitStatusCode.badLocation),
        (["queue", "list", "--json", "--state", "lost"], ExitStatusCode.usage),
        (["history", "--json", "--since", "soon"], ExitStatusCode.usage),
    ])
    func jsonErrorsAreJSONOnStdoutWithTheSameExitCode(_ arguments: [String], _ expected: ExitStatusCode) throws {
        let result = try Subprocess.run(Subprocess.enlog, arguments, environment: try EnlogHome().environment)
        #expect(result.status == expected.rawValue, "\(result.standardError)")
        let object = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any]
        let error = object?["error"] as? [String: Any]
        #expect(error?["exitCode"] as? Int == Int(expected.rawValue), "\(result.standardOutput)")
        #expect((error?["message"] as? String)?.isEmpty == false)
        #expect(result.standardErrorLines.count == 1)
    }

    @Test func unknownEnlogVariablesAreWarnedAbout() throws {
        var home = try EnlogHome()
        home.extraEnvironment = ["ENLOG_GEOCODING_ENABLE": "false", "ENLOG_NOTE_TAGS": "fine"]
        let result = try home.run("config", "show")
        #expect(result.status == 0)
        #expect(result.standardErrorLines == [
            "enlog: warning: ignoring unknown environment variable ENLOG_GEOCODING_ENABLE (`enlog config show` lists the known ones)",
        ])
    }

    @Test func progressIsDrawnOnlyOnATerminalThatCanRedrawIt() {
        #expect(SyncProgressPrinter.drawsProgress(standardErrorIsTerminal: true, environment: ["TERM": "xterm-256color"]))
        #expect(!SyncProgressPrinter.drawsProgress(standardErrorIsTerminal: true, environment: ["TERM": "dumb"]))
        #expect(!SyncProgressPrinter.drawsProgress(standardErrorIsTerminal: true, environment: [:]))
        #expect(!SyncProgressPrinter.drawsProgress(standardErrorIsTerminal: false, environment: ["TERM": "xterm"]))
    }

    @Test func configShowIsTOMLThatReadsBackToTheSameSettings() throws {
        var home = try EnlogHome()
        try home.writeConfig("""
            [location]
            timeout = 2.5
            [geocoding]
            contact = "me \\"quoted\\" \\\\ here"
            [note]
            tags = ["trip", "2026"]
            notebook = "Travel"
            place_name = true
            static_map_key = "secret"
            [network]
            probes = ["192.0.2.10:443", "[2001:db8::1]:443"]
            """)
        home.extraEnvironment = ["ENLOG_LOCATION_MAX_AGE": "30"]
        let shown = try home.run("config", "show")
        #expect(shown.status == 0, "\(shown.standardError)")
        #expect(shown.standardOutput.contains("tags = [\"trip\", \"2026\"]"))
        #expect(shown.standardOutput.contains("timeout = 2.5"))
        #expect(shown.standardOutput.contains("max_age = 30  # environment ENLOG_LOCATION_MAX_AGE"))
        #expect(shown.standardOutput.contains("db = \"\(home.database)\"  # environment ENLOG_DB"))
        #expect(!shown.standardOutput.contains("secret\""))
        let before = try home.run("config", "show", "--json")

        var pasted = try EnlogHome()
        try pasted.writeConfig(shown.standardOutput)
        pasted.extraEnvironment = ["ENLOG_NOTE_STATIC_MAP_KEY": "secret"]
        let after = try pasted.run("config", "show", "--json")
        #expect(after.status == 0, "\(after.standardError)")
        let old = try JSONSerialization.jsonObject(with: Data(before.standardOutput.utf8)) as! [String: [String: Any]]
        let new = try JSONSerialization.jsonObject(with: Data(after.standardOutput.utf8)) as! [String: [String: Any]]
        for (name, entry) in old where name != "outbox.db" {
            #expect(entry["value"] as? String == new[name]?["value"] as? String, "\(name)")
        }
        #expect(old["outbox.db"]?["environment"] as? String == "ENLOG_DB")
    }

    @Test func countsUseTheRightNumber() {
        #expect(counted(1, "note") == "1 note")
        #expect(counted(0, "note") == "0 notes")
        #expect(counted(2, "queued note") == "2 queued notes")
        #expect(SyncProgressPrinter.line(done: 0, total: 1, elapsed: .zero) == "sync: 0/1 note")
    }

    @Test func aPositionThatRoundsToZeroHasNoMinusSign() throws {
        let home = try EnlogHome()
        #expect(try home.run("log", "--at", "-0.0000001,-0.0000004", "--no-geocode", "--no-sync").status == 0)
        let note = try #require(try home.notes().first)
        let title = try #require(note["title"] as? String)
        #expect(title == "0.000000,0.000000", "\(title)")
        let history = try home.run("history")
        #expect(!history.standardOutput.contains("-0.0"), "\(history.standardOutput)")
    }

    @Test func historyRowsHaveAFixedNumberOfColumns() throws {
        let home = try EnlogHome()
        #expect(try home.run("log", "--at", "1,2", "--no-geocode", "--no-sync").status == 0)
        #expect(try home.run("log", "--at", "3,4,50.5", "--no-geocode", "--no-sync").status == 0)
        #expect(try home.run("log", "--nmea", TestPaths.nmea("walk.nmea"), "--no-geocode", "--no-sync").status == 0)
        let rows = try home.run("history").standardOutput.split(separator: "\n")
        #expect(rows.count == 3)
        for row in rows { #expect(row.split(separator: "\t", omittingEmptySubsequences: false).count == 5, "\(row)") }
        #expect(rows.contains { $0.hasSuffix("\t1.000000,2.000000\t-\t-\tmanual") }, "\(rows)")
        #expect(rows.contains { $0.hasSuffix("\t3.000000,4.000000\talt 50.5 m\t-\tmanual") }, "\(rows)")
    }
}
