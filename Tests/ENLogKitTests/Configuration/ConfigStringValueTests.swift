import Foundation
import Testing

/// String settings carry no control characters: a TOML `\u0000` cut the string short where
/// TOMLKit hands it over (`db = ".../real.sqlite\u0000.x"` opened real.sqlite), and any other
/// control character (an escape, a line break in a multi-line string, a variable) makes a path,
/// a URL, a name no setting can mean. Each is exit 78, naming the file (and line) or the
/// variable; a list of more tags than Evernote allows on a note is refused the same way.
@Suite("config string values")
struct ConfigStringValueTests {
    static let values: [(file: String, names: String)] = [
        ("[outbox]\ndb = \"/tmp/enlog-h1/real.sqlite\\u0000.x\"\n", "config.toml:2:"),
        ("[note]\nnotebook = \"Diary\\U00000000 2026\"\n", "config.toml:2:"),
        // (outbox.db itself: EnlogHome sets ENLOG_DB, which wins over the file.)
        ("[geocoding]\nlanguage = \"fr\\u0007\"\n", "config.toml: 'geocoding.language'"),
        ("[note]\nnotebook = \"\"\"Diary\n2026\"\"\"\n", "config.toml: 'note.notebook'"),
        ("[note]\ntags = [\"a\", \"b\\u001b[31m\"]\n", "config.toml: 'note.tags'"),
        ("[map]\ntile_url = \"http://127.0.0.1:1/{z}/{x}/{y}.png\\r\\nX-Header: 1\"\n", "config.toml: 'map.tile_url'"),
        ("[geocoding]\ncontact = \"me@example.org\\u007f\"\n", "config.toml: 'geocoding.contact'"),
        ("[note]\ntemplate = \"/tmp/\\ttemplate\"\n", "config.toml: 'note.template'"),
    ]

    @Test(arguments: values)
    func aControlCharacterInAStringSettingIsAConfigError(_ file: String, _ names: String) throws {
        let home = try EnlogHome()
        try home.writeConfig(file)
        let path = home.configHome + "/enlog/config.toml"
        for command in [["config", "show"], ["log", "--at", "1,2", "--no-geocode", "--no-sync"]] {
            let result = try home.run(command)
            #expect(result.status == ExitStatusCode.config.rawValue, "\(file) \(command): \(result.standardError)")
            #expect(result.standardErrorLines.count == 1, "\(result.standardError)")
            #expect(result.standardError.contains(home.configHome + "/enlog/" + names), "\(result.standardError)")
            #expect(result.standardError.contains(path))
        }
        #expect(!FileManager.default.fileExists(atPath: "/tmp/enlog-h1"))
    }

    @Test(arguments: ["ENLOG_NOTE_NOTEBOOK", "ENLOG_DB", "ENLOG_GEOCODING_LANGUAGE", "ENLOG_NOTE_TAGS"])
    func aControlCharacterInAVariableIsAConfigError(_ variable: String) throws {
        var home = try EnlogHome()
        home.extraEnvironment = [variable: "a\u{01}b"]
        let result = try home.run("config", "show")
        #expect(result.status == ExitStatusCode.config.rawValue, "\(variable): \(result.standardError)")
        #expect(result.standardErrorLines.count == 1, "\(result.standardError)")
        #expect(result.standardError.hasPrefix("enlog: error: \(variable) "), "\(result.standardError)")
    }

    /// EDAM_NOTE_TAGS_MAX (Limits.thrift): 100 tags a note. 100 are fine; 101 and 10,000 are refused
    /// when the configuration is read, from the file or the environment.
    @Test func moreTagsThanEvernoteAllowsAreAConfigError() throws {
        let hundred = (1...100).map { "t\($0)" }
        let home = try EnlogHome()
        try home.writeConfig("[note]\ntags = [" + hundred.map { "\"\($0)\"" }.joined(separator: ", ") + "]\n")
        let fine = try home.run("config", "show")
        #expect(fine.status == 0, "\(fine.standardError)")
        for count in [101, 10_000] {
            let tags = (1...count).map { "t\($0)" }
            try home.writeConfig("[note]\ntags = [" + tags.map { "\"\($0)\"" }.joined(separator: ", ") + "]\n")
            let result = try home.run("log", "--at", "1,2", "--no-geocode", "--no-sync")
            #expect(result.status == ExitStatusCode.config.rawValue, "\(count): \(result.standardError)")
            #expect(result.standardErrorLines.count == 1, "\(result.standardError)")
            #expect(result.standardError.contains("'note.tags' has \(count) tags; Evernote allows at most 100 on a note"),
                    "\(result.standardError)")
            var variable = try EnlogHome()
            variable.extraEnvironment = ["ENLOG_NOTE_TAGS": tags.joined(separator: ",")]
            let fromVariable = try variable.run("log", "--at", "1,2", "--no-geocode", "--no-sync")
            #expect(fromVariable.status == ExitStatusCode.config.rawValue, "\(count): \(fromVariable.standardError)")
            #expect(fromVariable.standardError.contains("ENLOG_NOTE_TAGS has \(count) tags"), "\(fromVariable.standardError)")
        }
        #expect(!FileManager.default.fileExists(atPath: home.database), "nothing was logged")
    }
}
