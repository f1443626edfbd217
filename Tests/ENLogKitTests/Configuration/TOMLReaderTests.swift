import Foundation
import Testing
@testable import Configuration
@testable import Support

/// enlog's own TOML reader (TOMLReader): what config.toml may hold reads as TOML 1.0 says, and
/// everything else is a syntax error at its line and column, never a crash. The inputs on which
/// TOMLKit's toml++ asserted or reached undefined behaviour (the config fuzzer's finds,
/// Tests/Fixtures/fuzz/config/) are among them.
@Suite("config.toml: enlog's TOML reader")
struct TOMLReaderTests {
    static let paths = XDGPaths(environment: ["HOME": "/nonexistent"])

    static func read(_ text: String) throws(ConfigError) -> Config {
        try Config(filePath: "config.toml", fileContents: Array(text.utf8), paths: paths, environment: [:])
    }

    static func fixture(_ name: String) -> String {
        String(decoding: try! Data(contentsOf: Fixtures.root.appendingPathComponent("fuzz/config/\(name)")), as: UTF8.self)
    }

    static let outside = "outside a string or comment"

    static let refused: [(text: String, line: Int, column: Int, message: String)] = [
        // Non-ASCII characters stand only in strings and comments.
        (fixture("non-ascii-character-before-a-table-header.toml"), 1, 1, "a non-ASCII character (U+FEF7) \(outside)"),
        ("[note]\nnotebook = \"x\" é\n", 2, 16, "a non-ASCII character (U+00E9) \(outside)"),
        ("[note]\nnotébook = \"x\"\n", 2, 4, "a non-ASCII character (U+00E9) \(outside)"),
        ("[map]\nzoom = 12\u{3001}\n", 2, 10, "a non-ASCII character (U+3001) \(outside)"),
        ("[note]\ntags = [\"a\",\u{FB30}\"b\"]\n", 2, 13, "a non-ASCII character (U+FB30) \(outside)"),
        ("\u{FEFF}[note] \u{0416}\n", 1, 8, "a non-ASCII character (U+0416) \(outside)"),
        ("[note]\nnotebook = '''a''' # fine\n\u{2C60} = 1\n", 3, 1, "a non-ASCII character (U+2C60) \(outside)"),
        // What is no string, number or boolean is refused at its start (toml++ scanned on).
        ("[note]\nnotebook = +\"Café\"\n", 2, 12, "'+' is no value"),
        ("[note]\nnotebook = 3pro..\"Café\"\n", 2, 12, "'3pro..' is no value"),
        ("[map]\nzoom = [1, 2..\"é\"]\n", 2, 12, "'2..' is no value"),
        ("[geocoding]\nenabled = tr\nue\n", 2, 11, "'tr' is no value"),
        ("[map]\nzoom = 012\n", 2, 8, "'012' is no value"),
        ("[map]\nzoom = 1__0\n", 2, 8, "'1__0' is no value"),
        ("[map]\nzoom = 1.\n", 2, 8, "'1.' is no value"),
        ("[map]\nzoom = 9223372036854775808\n", 2, 8, "9223372036854775808 is outside the integers TOML has"),
        ("[map]\nzoom = 0xFFFFFFFFFFFFFFFFF\n", 2, 8, "0xFFFFFFFFFFFFFFFFF is outside the integers TOML has"),
        ("[map]\nzoom =\n", 2, 7, "a value is missing at the end of the line"),
        // Dates and times: no setting takes one.
        ("[map]\nzoom = 2026-11-24 \"é\"\n", 2, 8, "a date or time (2026-11-24); no setting takes one"),
        ("[map]\nzoom = 2026-11-24 9\n", 2, 8, "a date or time (2026-11-24)"),
        ("[map]\nzoom = 07:32:00\n", 2, 8, "a date or time (07:32:00)"),
        ("[map]\nzoom = 1979-05-27T07:32:00Z\n", 2, 8, "a date or time (1979-05-27T07:32:00Z)"),
        (fixture("date-and-lone-digit-counted-without-underscores.toml"), 2, 7, "a date or time (9939-__29-___)"),
        // Strings.
        ("[note]\nnotebook = \"\"\"a \\é\"\"\"\n", 2, 17, "an escape TOML does not have (\\é)"),
        ("[note]\nnotebook = \"a\\x41\"\n", 2, 14, "an escape TOML does not have (\\x)"),
        ("[note]\nnotebook = \"\\uD800\"\n", 2, 13, "\\u names no Unicode character (U+D800)"),
        ("[note]\nnotebook = \"\\u12\"\n", 2, 13, "\\u takes 4 hexadecimal digits"),
        ("[note]\nnotebook = \"Diary\n2026\"\n", 2, 18, "a line break in a one-line string"),
        ("[note]\nnotebook = 'a\u{07}'\n", 2, 14, "a control character (U+0007) in a string"),
        ("[note]\nnotebook = \"open\n", 2, 17, "a line break in a one-line string"),
        ("[note]\nnotebook = '''open\n", 2, 12, "a string that is never closed"),
        ("[note]\nnotebook = \"\"\"a\"\"\"\"\"\"\n", 2, 16, "six quotes in a row"),
        ("[note]\n\"\"\"notebook\"\"\" = \"x\"\n", 2, 1, "a key in triple quotes"),
        // Comments and lines.
        ("[note] # a\u{01}b\n", 1, 11, "a control character (U+0001) in a comment"),
        ("[note]\nnotebook = \"x\"\r\n\r[map]\n", 3, 1, "a control character (U+000D) where the end of the line should be"),
        ("[note]\nnotebook = \"x\" tags = []\n", 2, 16, "the end of the line is expected here, not 't'"),
        ("[note]\nnotebook \"x\"\n", 2, 10, "'=' after the key is expected here, not '\"'"),
        ("[note\n", 1, 6, "']' to end the table header is missing at the end of the line"),
        // Tables and names: each defined once, as TOML says.
        ("[note]\nnotebook = \"a\"\nnotebook = \"b\"\n", 3, 1, "'note.notebook' is defined twice (first on line 2)"),
        ("[note]\nnotebook = \"a\"\n[map]\n[note]\n", 4, 1, "the table [note] is defined twice (first on line 1)"),
        ("note.tags = []\n[note]\n", 2, 1, "the table [note] is defined twice (first on line 1)"),
        ("[note]\nnotebook = \"a\"\n[note.notebook]\n", 3, 1, "'note.notebook' is a value (line 2), not a table"),
        ("[note.x]\n[note]\nx.y = 1\n", 3, 1, "the table [note.x] has its own header (line 1); set its keys there"),
        // What no setting is.
        ("[note]\ntags = [[\"a\"], }\n", 2, 9, "an array inside an array"),
        ("[note]\nx = {y = 1}\n", 2, 5, "an inline table ({…})"),
        ("[[note]]\n", 1, 1, "an array of tables ([[…]]); no setting is one"),
        ("[note]\ntags = [}\"\n", 2, 9, "a '}' inside an array, which ends with ']'"),
        ("[note]\ntags = [\"a\",\n  # }\n  }]\n", 4, 3, "a '}' inside an array, which ends with ']'"),
        ("[note]\ntags = [\"a\" }\n", 2, 13, "a '}' inside an array, which ends with ']'"),
        (fixture("closing-brace-inside-an-array.toml"), 5, 9, "a '}' inside an array, which ends with ']'"),
    ]

    @Test(arguments: refused)
    func isASyntaxErrorAtItsLineAndColumn(_ text: String, _ line: Int, _ column: Int, _ message: String) {
        do {
            _ = try Self.read(text)
            Issue.record("read: \(text)")
        } catch {
            guard case .syntax(let path, let foundLine, let foundColumn, let found) = error else {
                Issue.record("\(error.reason)")
                return
            }
            #expect(path == "config.toml")
            #expect((foundLine, foundColumn) == (line, column), "\(found)")
            #expect(found.hasPrefix(message), "\(found)")
        }
    }

    /// Every form of TOML's integers, floats and booleans.
    @Test func numbersAndBooleansReadAsTOMLSays() throws {
        let text = """
            a = 12
            b = -3
            c = +1_000
            d = 0x1F
            e = 0o17
            f = 0b101
            g = 2.5
            h = -1.5E-2
            i = 1e3
            j = 6.626e-34
            k = -inf
            l = nan
            m = 1e400
            n = true
            o = [false, 0, -0.0,]
            p = 9223372036854775807
            q = -9223372036854775808
            """
        var values: [String: TOMLValue] = [:]
        for entry in try TOMLReader.read(text) {
            if case .value(let value) = entry.content { values[entry.path.joined(separator: ".")] = value }
        }
        func integer(_ key: String) -> Int64? { if case .integer(let value) = values[key] { value } else { nil } }
        func float(_ key: String) -> Double? { if case .float(let value) = values[key] { value } else { nil } }
        #expect([integer("a"), integer("b"), integer("c"), integer("d"), integer("e"), integer("f")] == [12, -3, 1000, 31, 15, 5])
        #expect([float("g"), float("h"), float("i"), float("j"), float("k"), float("m")] == [2.5, -0.015, 1000, 6.626e-34, -.infinity, .infinity])
        #expect(float("l")?.isNaN == true)
        #expect(integer("p") == .max && integer("q") == .min)
        guard case .boolean(true) = values["n"], case .array(let items) = values["o"], items.count == 3 else {
            Issue.record("\(String(describing: values["n"])) \(String(describing: values["o"]))")
            return
        }
    }

    /// Strings of every kind and comments hold any character, the ends of strings found as TOML
    /// says (a run of four or five quotes ends a multi-line string with content). The text is
    /// also a seed of the config fuzzer.
    @Test func stringsOfEveryKindReadAsTOMLSays() throws {
        let seed = Fixtures.repositoryRoot.appendingPathComponent("Fuzz/seeds/config/non-ascii-in-strings.toml")
        // As TOML reads them: Config itself refuses the line breaks some hold (no setting takes one).
        let values = Dictionary(try Config.settings(fromTOML: Array(try Data(contentsOf: seed)), path: "config.toml")) { $1 }
        func string(_ setting: Setting) -> String? { values[setting.name] }
        #expect(string(.notebook) == #"Café "ü" \ Ж"#)
        #expect(string(.template) == #"C:\é"#)
        #expect(string(.staticMapURL) == "é \"\" ü \"\"\"\né Ж")
        #expect(string(.timeZone) == "é '' ü \\\nЖ'")
        #expect(string(.geocodingContact) == "a\"\"")
        #expect(string(.geocodingLanguage) == "é")
        #expect(string(.tags) == "é,Ж,ü")
        // A line-ending backslash takes the blanks and lines after it, whatever follows them.
        let text = "[note]\nnotebook = \"\"\"a\\\n    é\"\"\"\ntemplate = \"\"\"a\\  \r\n\r\n\t\u{1F600}\"\"\"\n"
        let more = Dictionary(try Config.settings(fromTOML: Array(text.utf8), path: "config.toml")) { $1 }
        #expect(more[Setting.notebook.name] == "aé")
        #expect(more[Setting.template.name] == "a\u{1F600}")
    }

    /// Quotes inside a multi-line string are kept one by one: appending each run to the text
    /// read so far copied all of it, 6 s of CPU for 300,000 runs in a 600 KB file. Measured on
    /// `enlog config show` itself (`MeasuredRun`); never a wall-clock time.
    @Test func quoteRunsInAMultiLineStringCostTimeInProportion() throws {
        let home = try EnlogHome()
        let runs = 400_000
        let file = try home.directory.file("config.toml",
                                           contents: "[note]\ntemplate = \"\"\"" + String(repeating: "x\"", count: runs) + "y\"\"\"\n")
        let result = try RedirectedRun.run(Subprocess.enlog, ["config", "show", "--config", file.path],
                                           environment: home.environment, cpuSeconds: 60)
        #expect(result.status == 0, "\(result.standardError)")
        // Every quote kept, shown escaped.
        #expect(result.standardOutput.contains("template = \"" + String(repeating: #"x\""#, count: runs) + "y\""),
                "\(result.standardOutput.prefix(300))")
        let cpu = try #require(result.usage?.cpuSeconds)
        #expect(cpu < 3, "\(cpu) s of CPU for \(runs) quotes")
    }
}
