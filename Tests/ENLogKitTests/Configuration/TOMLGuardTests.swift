import Foundation
import Testing
@testable import Support
@testable import Configuration

/// A non-ASCII character where TOMLKit's toml++ asks whether it is whitespace reached code toml++
/// marks unreachable (undefined behaviour, UBSan's report on a fuzzer's find,
/// Tests/Fixtures/fuzz/config/): outside strings and comments, and in a multi-line basic string
/// right after a backslash or first after a line-ending backslash. Each is a syntax error at that
/// character before toml++ sees the text; in strings and comments anywhere else such characters
/// read as before.
@Suite("config.toml: non-ASCII characters where toml++ cannot take them")
struct TOMLGuardTests {
    static let paths = XDGPaths(environment: ["HOME": "/nonexistent"])

    static func read(_ text: String) throws(ConfigError) -> Config {
        try Config(filePath: "config.toml", fileContents: Array(text.utf8), paths: paths, environment: [:])
    }

    static let outside = "outside a string or comment"
    static let afterBackslash = "right after a backslash or a line-ending backslash's line break in a multi-line string"

    static let refused: [(text: String, line: Int, column: Int, message: String)] = [
        (String(decoding: try! Data(contentsOf: Fixtures.root.appendingPathComponent(
            "fuzz/config/non-ascii-character-before-a-table-header.toml")), as: UTF8.self), 1, 1, "(U+FEF7) \(outside)"),
        ("[note]\nnotebook = \"x\" é\n", 2, 16, "(U+00E9) \(outside)"),
        ("[note]\nnotébook = \"x\"\n", 2, 4, "(U+00E9) \(outside)"),
        ("[map]\nzoom = 12\u{3001}\n", 2, 10, "(U+3001) \(outside)"),
        ("[note]\ntags = [\"a\",\u{FB30}\"b\"]\n", 2, 13, "(U+FB30) \(outside)"),
        ("\u{FEFF}[note] \u{0416}\n", 1, 8, "(U+0416) \(outside)"),
        ("[note]\nnotebook = '''a''' # fine\n\u{2C60} = 1\n", 3, 1, "(U+2C60) \(outside)"),
        // A quote after anything but `=`, `,`, `[`, `{` or `.` starts no string: toml++ scans on
        // as a number or a date (the fuzzer's second find).
        ("[note]\nnotebook = +\"Café\"\n", 2, 17, "(U+00E9) \(outside)"),
        ("[map]\nzoom = 2026-11-24 \"é\"\n", 2, 20, "(U+00E9) \(outside)"),
        // A value that starts with a digit or a sign is scanned to a blank, `,`, `]`, `}` or `#`,
        // quotes and all (the fuzzer's third find), and past a space between a date and a digit.
        ("[note]\nnotebook = 3pro..\"Café\"\n", 2, 22, "(U+00E9) \(outside)"),
        ("[map]\nzoom = [1, 2..\"é\"]\n", 2, 16, "(U+00E9) \(outside)"),
        ("[map]\nzoom = 2026-11-24 0é\n", 2, 20, "(U+00E9) \(outside)"),
        ("[note]\nnotebook = \"\"\"a\\\n    é\"\"\"\n", 3, 5, "(U+00E9) \(afterBackslash); write it as \\u00E9"),
        ("[note]\nnotebook = \"\"\"a\\  \n\n\t\u{1F600}\"\"\"\n", 4, 2, "(U+1F600) \(afterBackslash); write it as \\U0001F600"),
        ("[note]\nnotebook = \"\"\"a \\é\"\"\"\n", 2, 18, "(U+00E9) \(afterBackslash); write it as \\u00E9"),
    ]

    @Test(arguments: refused)
    func isASyntaxErrorAtTheCharacter(_ text: String, _ line: Int, _ column: Int, _ message: String) {
        #expect(throws: ConfigError.syntax(path: "config.toml", line: line, column: column, message: "a non-ASCII character \(message)")) {
            try Self.read(text)
        }
    }

    /// Numbers, dates and times of every form, followed by comments holding such characters.
    @Test func scannedValuesEndWhereTOMLSays() {
        let text = "a = 2026-11-24 08:00:00Z # é\nb = 1.5e3 # ü\nc = [1, -2, +3,] # Ж\nd = 2026-11-24 # é\ne = -inf#é\n"
        #expect(TOMLGuard.firstProblem(in: text) == nil)
    }

    /// toml++ takes a `}` in an array for a value's start, which it asserts (aborting enlog) or,
    /// built without assertions, assumes is none (the fuzzer's find, Tests/Fixtures/fuzz/config/).
    @Test(arguments: [("[note]\ntags = [}\"\n", 2, 9), ("[note]\ntags = [\"a\",\n  # }\n  }]\n", 4, 3),
                      ("[note]\ntags = [[\"a\"], }\n", 2, 16)])
    func aClosingBraceInsideAnArrayIsASyntaxError(_ text: String, _ line: Int, _ column: Int) {
        #expect(throws: ConfigError.syntax(path: "config.toml", line: line, column: column,
                                           message: "a '}' inside an array, which ends with ']'")) {
            try Self.read(text)
        }
    }

    /// toml++ reads ten characters that look like a date (underscores not counted), a space and a
    /// digit as the start of a time, and asserts (aborting enlog) that the character after the
    /// digit ends no value: a date and a lone digit is a syntax error at the digit, wherever the
    /// value stands (the fuzzer's find, Tests/Fixtures/fuzz/config/).
    @Test(arguments: [("[map]\nzoom = 2026-11-24 9\n", 2, 19), ("[map]\nzoom = 2026-11-24 9", 2, 19),
                      ("[map]\nzoom = [2026-11-24 9]\n", 2, 20), ("[map]\nzoom = 2026-11-24 9#\n", 2, 19),
                      ("[map]\nzoom = 20_26-1_1-24 9,\n", 2, 21),
                      (String(decoding: try! Data(contentsOf: Fixtures.root.appendingPathComponent(
                          "fuzz/config/date-and-lone-digit-counted-without-underscores.toml")), as: UTF8.self), 2, 23)])
    func aDateAndALoneDigitIsASyntaxError(_ text: String, _ line: Int, _ column: Int) {
        #expect(throws: ConfigError.syntax(path: "config.toml", line: line, column: column, message:
                "a date followed by a space and a lone digit; a time has hours and minutes (2026-11-24 09:30:00)")) {
            try Self.read(text)
        }
    }

    /// Dates and times with a space between them, underscores and all, pass to toml++ as before.
    @Test func aDateAndATimeWithASpaceReadAsBefore() {
        #expect(TOMLGuard.firstProblem(in: "a = 2026-11-24 09:30:00\nb = 2026-11-24 12\nc = [2026-11-24 1_2:00]\n") == nil)
    }

    /// Strings of every kind and comments hold them as before, the ends of strings found as
    /// toml++ finds them (a run of four or five quotes ends a multi-line string with content).
    /// The text is also a seed of the config fuzzer.
    @Test func readAsBeforeInStringsAndComments() throws {
        let seed = Fixtures.repositoryRoot.appendingPathComponent("Fuzz/seeds/config/non-ascii-in-strings.toml")
        // As TOMLKit reads them: Config itself refuses the line breaks some hold (no setting takes one).
        let values = Dictionary(try Config.settings(fromTOML: Array(try Data(contentsOf: seed)), path: "config.toml")) { $1 }
        func string(_ setting: Setting) -> String? { values[setting.name] }
        #expect(string(.notebook) == #"Café "ü" \ Ж"#)
        #expect(string(.template) == #"C:\é"#)
        #expect(string(.staticMapURL) == "é \"\" ü \"\"\"\né Ж")
        #expect(string(.timeZone) == "é '' ü \\\nЖ'")
        #expect(string(.geocodingContact) == "a\"\"")
        #expect(string(.geocodingLanguage) == "é")
        #expect(string(.tags) == "é,Ж,ü")
    }
}
