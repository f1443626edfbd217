import Foundation
import Testing
@testable import Configuration

/// Nesting in config.toml (table headers and keys of many dotted parts, arrays in arrays, inline
/// tables in inline tables, arrays of tables, and mixes of them) is a one-line configuration
/// error naming the file in every command. TOMLKit's toml++ followed it by recursion: 150,000
/// dotted parts in a table header (a 300 KB file) overflowed the stack (SIGSEGV, 139) of every
/// command that read the configuration. enlog's reader does not recurse; it bounds a name's
/// parts, and refuses arrays in arrays and inline tables where they start.
@Suite("config.toml nested too deep")
struct ConfigDepthTests {
    static let parts = 120_000
    static let limit = TOMLReader.maximumDepth

    static let tooDeep = "nested more than \(limit) levels deep"

    static let shapes: [(name: String, text: String, message: String)] = [
        ("dotted table header", "[" + String(repeating: "t.", count: parts) + "t]\nx = 1\n", tooDeep),
        ("array of tables", "[[" + String(repeating: "row.", count: parts) + "row]]\n", tooDeep),
        ("dotted key", "[note]\n" + String(repeating: "k.", count: parts) + "k = 1\n", tooDeep),
        ("nested arrays", "[note]\ntags = " + String(repeating: "[", count: parts) + String(repeating: "]", count: parts) + "\n",
         "2:9: an array inside an array"),
        ("nested inline tables", "[note]\nx = " + String(repeating: "{y=", count: parts) + "1" + String(repeating: "}", count: parts) + "\n",
         "2:5: an inline table"),
        ("a mix", "[" + String(repeating: "m.", count: 40) + "m]\n" + String(repeating: "d.", count: 40) + "d = "
            + String(repeating: "[{z=", count: parts / 2) + "\n", "2:86: an inline table"),
    ]

    @Test(arguments: shapes)
    func isAConfigurationErrorNamingTheFileInEveryCommand(_ name: String, _ text: String, _ message: String) throws {
        let home = try EnlogHome()
        try home.writeConfig(text)
        let file = home.configHome + "/enlog/config.toml"
        for command in [["config", "show"], ["log", "--at", "1,2", "--no-geocode", "--no-sync"], ["watch"]] {
            let result = try home.run(command)
            #expect(result.status == ExitStatusCode.config.rawValue, "\(name), \(command): \(result.status) \(result.standardError)")
            #expect(result.standardErrorLines.count == 1, "\(name), \(command): \(result.standardError)")
            #expect(result.standardError.hasPrefix("enlog: error: \(file):"), "\(name), \(command): \(result.standardError)")
            #expect(result.standardError.contains(message),
                    "\(name), \(command): \(result.standardError)")
        }
    }

    /// At the limit the reader reads the file (and enlog refuses the unknown setting), one past it it does not.
    @Test func theLimitIsExact() throws {
        let depth = Self.limit
        let atLimit = "[" + Array(repeating: "t", count: depth).joined(separator: ".") + "]\n"
        #expect(throws: Never.self) { try TOMLReader.read(atLimit) }
        let headerAndKey = "[" + Array(repeating: "t", count: depth - 3).joined(separator: ".") + "]\na.b.c = 1\n"
        #expect(throws: Never.self) { try TOMLReader.read(headerAndKey) }
        let over = "[" + Array(repeating: "t", count: depth - 3).joined(separator: ".") + "]\na.b.c = [1]\n"
        #expect(throws: TOMLError(TOMLPosition(line: 2, column: 9), "tables, dotted keys and arrays \(Self.tooDeep); "
                                  + "enlog's settings are two levels deep ([section] key = value)")) { try TOMLReader.read(over) }
        let overInHeader = "[" + Array(repeating: "t", count: depth + 1).joined(separator: ".") + "]\n"
        #expect(throws: TOMLError(TOMLPosition(line: 1, column: 2 * depth + 2), "tables, dotted keys and arrays \(Self.tooDeep); "
                                  + "enlog's settings are two levels deep ([section] key = value)")) { try TOMLReader.read(overInHeader) }
        #expect(throws: ConfigError.unknownSetting(path: "config.toml", name: "t.t")) {
            try Config(filePath: "config.toml", fileContents: Array(atLimit.utf8), paths: XDGPaths(environment: ["HOME": "/nonexistent"]),
                       environment: [:])
        }
    }

    /// Wide is not deep: many keys in a table and many short tables each count from their own level.
    @Test func manySiblingsAreNotNesting() {
        let siblings = "[x]\n" + (0..<500).map { "a\($0).b.c = [1]\n" }.joined()
        #expect(throws: Never.self) { try TOMLReader.read(siblings) }
        let tables = (0..<500).map { "[s\($0).t]\nk.l = [1]\n" }.joined()
        #expect(throws: Never.self) { try TOMLReader.read(tables) }
        let floats = "[map]\nzoom = [" + Array(repeating: "1.5", count: 500).joined(separator: ", ") + "]\n"
        #expect(throws: Never.self) { try TOMLReader.read(floats) }
    }
}
