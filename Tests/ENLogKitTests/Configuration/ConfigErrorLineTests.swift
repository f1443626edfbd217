import Foundation
import Testing
@testable import Configuration
@testable import Diary

/// A configuration error is one line whatever it quotes: a value with a line break in a
/// multi-line string or a variable, a quoted key holding one, each shown as `\x0A` (a time zone
/// in the config fuzzer's seed of non-ASCII strings, and the fuzzer itself,
/// Tests/Fixtures/fuzz/config/, made two-line errors); a value cut short by a line break is
/// quoted up to it.
@Suite("config errors quoting line breaks")
struct ConfigErrorLineTests {
    static let paths = XDGPaths(environment: ["HOME": "/nonexistent"])

    static let cases: [(file: String, environment: [String: String], expected: String)] = [
        ("[note]\ntime_zone = '''Europe/\nParis'''\n", [:], "config.toml: 'note.time_zone' 'Europe/\\x0AParis' is not a time zone"),
        ("[note]\n\"note\\u2028book\" = 1\n", [:], "config.toml: unknown setting 'note.note\\u{2028}book'"),
        ("", ["ENLOG_NOTE_TIME_ZONE": "UTC\r\nX"], "ENLOG_NOTE_TIME_ZONE 'UTC\\x0D\\x0AX' is not a time zone"),
        ("[geocoding]\nenabled = tr\nue\n", [:], "config.toml:2:11: 'tr' is no value"),
        ("[note]\n\"a\\nb\" = 1\n", [:], "config.toml: unknown setting 'note.a\\x0Ab'"),
    ]

    @Test(arguments: cases)
    func isOneLineWithTheBreakShown(_ file: String, _ environment: [String: String], _ expected: String) {
        do {
            _ = try Config(filePath: "config.toml", fileContents: Array(file.utf8), paths: Self.paths, environment: environment,
                           checks: SettingChecks.all)
            Issue.record("read")
        } catch {
            let reason = error.reason, lines = reason.split(whereSeparator: \.isNewline)
            #expect(reason.hasPrefix(expected), "\(reason)")
            #expect(lines.count == 1, "\(reason)")
        }
    }
}
