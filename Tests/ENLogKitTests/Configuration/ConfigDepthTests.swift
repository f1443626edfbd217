import Foundation
import Testing
@testable import Support
@testable import Configuration

/// Nesting toml++ follows by recursion (table headers and keys with many dotted parts, arrays in
/// arrays, inline tables in inline tables, arrays of tables, and mixes of them) is refused by
/// TOMLGuard before toml++ reads it: 150,000 dotted parts in a table header (a 300 KB file)
/// overflowed the stack (SIGSEGV, 139) of every command that reads the configuration.
@Suite("config.toml nested too deep")
struct ConfigDepthTests {
    static let parts = 120_000
    static let limit = TOMLGuard.maximumDepth

    static let shapes: [(name: String, text: String)] = [
        ("dotted table header", "[" + String(repeating: "t.", count: parts) + "t]\nx = 1\n"),
        ("array of tables", "[[" + String(repeating: "row.", count: parts) + "row]]\n"),
        ("dotted key", "[note]\n" + String(repeating: "k.", count: parts) + "k = 1\n"),
        ("nested arrays", "[note]\ntags = " + String(repeating: "[", count: parts) + String(repeating: "]", count: parts) + "\n"),
        ("nested inline tables", "[note]\nx = " + String(repeating: "{y=", count: parts) + "1" + String(repeating: "}", count: parts) + "\n"),
        ("a mix", "[" + String(repeating: "m.", count: 40) + "m]\n" + String(repeating: "d.", count: 40) + "d = "
            + String(repeating: "[{z=", count: parts / 2) + "\n"),
    ]

    @Test(arguments: shapes)
    func isAConfigurationErrorNamingTheFileInEveryCommand(_ name: String, _ text: String) throws {
        let home = try EnlogHome()
        try home.writeConfig(text)
        let file = home.configHome + "/enlog/config.toml"
        for command in [["config", "show"], ["log", "--at", "1,2", "--no-geocode", "--no-sync"], ["watch"]] {
            let result = try home.run(command)
            #expect(result.status == ExitStatusCode.config.rawValue, "\(name), \(command): \(result.status) \(result.standardError)")
            #expect(result.standardErrorLines.count == 1, "\(name), \(command): \(result.standardError)")
            #expect(result.standardError.hasPrefix("enlog: error: \(file):"), "\(name), \(command): \(result.standardError)")
            #expect(result.standardError.contains("nested more than \(Self.limit) levels deep"),
                    "\(name), \(command): \(result.standardError)")
        }
    }

    /// At the limit toml++ reads the file (and enlog refuses the unknown setting), one past it the guard does.
    @Test func theLimitIsExact() throws {
        let depth = Self.limit
        let atLimit = "[" + Array(repeating: "t", count: depth).joined(separator: ".") + "]\n"
        #expect(TOMLGuard.firstProblem(in: atLimit) == nil)
        let headerAndKey = "[" + Array(repeating: "t", count: depth - 3).joined(separator: ".") + "]\na.b.c = 1\n"
        #expect(TOMLGuard.firstProblem(in: headerAndKey) == nil)
        let over = "[" + Array(repeating: "t", count: depth - 3).joined(separator: ".") + "]\na.b.c = [1]\n"
        #expect(TOMLGuard.firstProblem(in: over)?.line == 2)
        #expect(throws: ConfigError.unknownSetting(path: "config.toml", name: "t.t")) {
            try Config(filePath: "config.toml", fileContents: Array(atLimit.utf8), paths: XDGPaths(environment: ["HOME": "/nonexistent"]),
                       environment: [:])
        }
    }

    /// Wide is not deep: siblings in an inline table and many short tables each count from their own level.
    @Test func manySiblingsAreNotNesting() {
        let siblings = "x = {" + (0..<500).map { "a\($0).b.c = [1]" }.joined(separator: ", ") + "}\n"
        #expect(TOMLGuard.firstProblem(in: siblings) == nil)
        let tables = (0..<500).map { "[s\($0).t]\nk.l = [[1]]\n" }.joined()
        #expect(TOMLGuard.firstProblem(in: tables) == nil)
        let floats = "[map]\nzoom = [" + Array(repeating: "1.5", count: 500).joined(separator: ", ") + "]\n"
        #expect(TOMLGuard.firstProblem(in: floats) == nil)
    }
}
