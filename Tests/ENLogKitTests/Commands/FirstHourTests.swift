import Foundation
import Testing

/// Issue 34: the first commands a newcomer types answer; a mistyped command is told what was
/// meant; every flag a message suggests exists.
@Suite("The first hour: a fresh machine, mistyped commands, suggested flags")
struct FirstHourTests {
    /// A machine where enlog never ran: no ENLOG_DB, nothing under the XDG folders, a TMPDIR of
    /// its own to see that nothing is left there either.
    struct FreshMachine {
        let directory: TemporaryDirectory
        init() throws {
            directory = try TemporaryDirectory()
            try FileManager.default.createDirectory(atPath: directory.path("tmp"), withIntermediateDirectories: true)
        }
        var environment: [String: String] {
            ["PATH": "/usr/bin:/bin", "HOME": directory.url.path, "TZ": "UTC",
             "XDG_DATA_HOME": directory.path("data"), "XDG_CONFIG_HOME": directory.path("config"),
             "XDG_CACHE_HOME": directory.path("cache"), "TMPDIR": directory.path("tmp"),
             "ENLOG_MAP_STYLE": "none", "ENLOG_GEOCODING_ENABLED": "false"]
        }
        func run(_ arguments: [String]) throws -> ProcessResult {
            try Subprocess.run(Subprocess.enlog, arguments, environment: environment)
        }
        /// What is in a folder of the machine (nil when the folder does not exist).
        func contents(_ folder: String) -> [String]? {
            try? FileManager.default.contentsOfDirectory(atPath: directory.path(folder))
        }
    }

    @Test func readingCommandsOnAFreshMachineAnswerWithAnEmptyDiaryAndHowToStart() throws {
        let machine = try FreshMachine()
        let enex = machine.directory.path("diary.enex")
        let commands: [(arguments: [String], json: Bool)] = [
            (["queue", "list"], false), (["queue", "list", "--json"], true),
            (["history"], false), (["history", "--json"], true), (["history", "--track", "--format", "gpx"], false),
            (["timeline"], false), (["timeline", "--json"], true), (["timeline", "--date", "2026-11-22", "--json"], true),
            (["places"], false), (["places", "--json"], true), (["places", "list", "--json"], true),
            (["export", "--enex", enex], false), (["export", "--enex", enex, "--new"], false), (["export", "--enex", "-"], false),
        ]
        for (arguments, json) in commands {
            let result = try machine.run(arguments)
            #expect(result.status == 0, "\(arguments): \(result.standardError)")
            #expect(result.standardError.contains("enlog: nothing is logged yet (no outbox at \(machine.directory.path("data/enlog/enlog.sqlite"))): `enlog log --at LAT,LON`"),
                    "\(arguments): \(result.standardError)")
            #expect(!result.standardError.contains("error"), "\(arguments): \(result.standardError)")
            if json {
                #expect((try? JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8))) != nil, "\(arguments): \(result.standardOutput)")
            }
        }
        let emptyList = try JSONSerialization.jsonObject(with: Data(try machine.run(["queue", "list", "--json"]).standardOutput.utf8)) as? [Any]
        #expect(emptyList?.isEmpty == true)
        #expect(try machine.run(["history", "--format", "gpx"]).standardOutput.contains("<gpx"))
        // A command that writes only what the history holds says the same, with its own exit code.
        let digest = try machine.run(["digest", "--date", "2026-11-22", "--no-sync"])
        #expect(digest.status == ExitStatusCode.noInput.rawValue, "\(digest.standardError)")
        #expect(digest.standardError.contains("nothing is logged yet"), "\(digest.standardError)")

        #expect(machine.contents("data") == nil, "no outbox, not even its folder, where the diary will be")
        #expect(machine.contents("tmp") == [], "the empty diary leaves nothing behind: \(machine.contents("tmp") ?? [])")
        #expect(!FileManager.default.fileExists(atPath: enex), "nothing to export: no file written")

        // The first note then goes where the reading commands said the outbox would be.
        #expect(try machine.run(["log", "--at", "48.1,11.5", "--no-sync"]).status == 0)
        let list = try machine.run(["queue", "list"])
        #expect(list.status == 0 && list.standardOutput.contains("pending"), "\(list.standardOutput)\(list.standardError)")
        #expect(!list.standardError.contains("nothing is logged yet"))
    }

    /// A path given by hand that names nothing is still a mistake said as one: `--db` mistyped.
    @Test func aMistypedOutboxPathIsStillAnError() throws {
        let machine = try FreshMachine()
        let typo = machine.directory.path("enlgo.sqlite")
        let result = try machine.run(["queue", "list", "--db", typo])
        #expect(result.status == ExitStatusCode.noInput.rawValue)
        #expect(result.standardError.hasPrefix("enlog: error: no outbox at \(typo)"), "\(result.standardError)")
    }

    @Test(arguments: [
        (["queu", "list"], "enlog: error: unknown command 'queu' (did you mean `enlog queue`?)"),
        (["exprot", "--enex", "x"], "enlog: error: unknown command 'exprot' (did you mean `enlog export`?)"),
        (["queue", "lsit"], "enlog: error: unknown command 'lsit' of `enlog queue` (did you mean `enlog queue list`?)"),
        (["histroy", "--json"], "enlog: error: unknown command 'histroy' (did you mean `enlog history`?)"),
        (["export", "diary.enex"], "enlog: error: 'diary.enex' is not an argument of `enlog export` (did you mean `enlog export --enex diary.enex`?)"),
        (["export", "--new", "my diary.enex"], "enlog: error: 'my diary.enex' is not an argument of `enlog export` (did you mean `enlog export --enex 'my diary.enex'`?)"),
        (["log", "walk.nmea"], "enlog: error: 'walk.nmea' is not an argument of `enlog log` (did you mean `enlog log --nmea walk.nmea`?)"),
    ])
    func mistypedCommandsAndBareFilesAreToldWhatWasMeant(_ arguments: [String], _ expected: String) throws {
        let result = try Subprocess.run(Subprocess.enlog, arguments, environment: try EnlogHome().environment)
        #expect(result.status == ExitStatusCode.usage.rawValue, "\(result.standardError)")
        #expect(result.standardError == expected + "\n")
    }

    @Test func aWordFarFromEveryCommandIsToldTheCommands() throws {
        let result = try Subprocess.run(Subprocess.enlog, ["frobnicate"], environment: try EnlogHome().environment)
        #expect(result.status == ExitStatusCode.usage.rawValue)
        #expect(result.standardError.hasPrefix("enlog: error: unknown command 'frobnicate' (the commands are log, watch, serve, devices, sync, queue"),
                "\(result.standardError)")
        // A place name is an argument of `places name`, not a mistyped command.
        let named = try Subprocess.run(Subprocess.enlog, ["places", "name", "3", "Home", "Office"], environment: try EnlogHome().environment)
        #expect(named.status == ExitStatusCode.usage.rawValue)
        #expect(!named.standardError.contains("unknown command"), "\(named.standardError)")
    }

    /// Every `--flag` a string in the sources names is one of enlog's (argument-parser's own
    /// description of them, `--experimental-dump-help`); one that follows `enlog COMMAND` in the
    /// same string is one of that command's. (`give --location LAT,LON` named a flag that never was.)
    @Test func everyFlagAMessageSuggestsExists() throws {
        let tree = try CommandFlags.enlog()
        var wrong: [String] = []
        var checked = 0
        for (file, literal) in try SourceStrings.all() {
            for mention in CommandFlags.mentions(in: literal, tree: tree) {
                checked += 1
                if !mention.known { wrong.append("\(file): \(mention.flag) \(mention.command.isEmpty ? "" : "(of `enlog \(mention.command)`) ")in \"\(literal.prefix(160))\"") }
            }
        }
        #expect(checked > 100, "the walk finds the flags the messages name (\(checked))")
        #expect(wrong.isEmpty, "flags that do not exist:\n\(wrong.joined(separator: "\n"))")
    }
}

/// The string literals of the Swift sources, comments left out, with interpolations kept as
/// written (their code is not text a user reads, but a flag in them is still one).
enum SourceStrings {
    static func all() throws -> [(file: String, literal: String)] {
        let sources = Fixtures.repositoryRoot.appendingPathComponent("Sources")
        var found: [(String, String)] = []
        let files = FileManager.default.enumerator(atPath: sources.path)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") } ?? []
        for file in files.sorted() {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            found += literals(in: text).map { (file, $0) }
        }
        return found
    }

    /// A small lexer: code, `//` and `/* */` comments, "…" and """…""" strings (escapes and
    /// `\(…)` interpolations, which may hold strings of their own, followed). Raw strings (#"…"#)
    /// are read as strings too.
    static func literals(in text: String) -> [String] {
        let characters = Array(text)
        var literals: [String] = []
        var index = 0
        func peek(_ offset: Int) -> Character? { index + offset < characters.count ? characters[index + offset] : nil }
        func readString() -> String {
            var hashes = 0
            while peek(0) == "#" { hashes += 1; index += 1 }
            let multiline = peek(0) == "\"" && peek(1) == "\"" && peek(2) == "\""
            index += multiline ? 3 : 1
            let closing = String(repeating: "\"", count: multiline ? 3 : 1) + String(repeating: "#", count: hashes)
            let escape = "\\" + String(repeating: "#", count: hashes)
            var body = ""
            while index < characters.count {
                if String(characters[index..<min(characters.count, index + closing.count)]) == closing {
                    index += closing.count
                    break
                }
                if String(characters[index..<min(characters.count, index + escape.count)]) == escape {
                    index += escape.count
                    if peek(0) == "(" {
                        // An interpolation: code until its parenthesis closes.
                        var depth = 0
                        while index < characters.count {
                            if characters[index] == "\"" || (characters[index] == "#" && peek(1) == "\"") {
                                body += readString()
                                continue
                            }
                            if characters[index] == "(" { depth += 1 }
                            if characters[index] == ")" { depth -= 1 }
                            body.append(characters[index])
                            index += 1
                            if depth == 0 { break }
                        }
                    } else if index < characters.count {
                        body.append(characters[index])
                        index += 1
                    }
                    continue
                }
                body.append(characters[index])
                index += 1
            }
            literals.append(body)
            return body
        }
        while index < characters.count {
            let character = characters[index]
            if character == "/" && peek(1) == "/" {
                while index < characters.count && characters[index] != "\n" { index += 1 }
            } else if character == "/" && peek(1) == "*" {
                index += 2
                while index < characters.count && !(characters[index] == "*" && peek(1) == "/") { index += 1 }
                index += 2
            } else if character == "\"" || (character == "#" && (peek(1) == "\"" || peek(1) == "#")) {
                _ = readString()
            } else {
                index += 1
            }
        }
        return literals
    }
}

/// enlog's commands and the long flags of each, from `enlog --experimental-dump-help`.
struct CommandFlags {
    /// "queue list" → its flags; "" → every flag of every command.
    var flags: [String: Set<String>]
    var commandNames: [String: [String]]

    static func enlog() throws -> CommandFlags {
        let dump = try Subprocess.enlog("--experimental-dump-help")
        let object = try JSONSerialization.jsonObject(with: Data(dump.standardOutput.utf8)) as! [String: Any]
        var result = CommandFlags(flags: [:], commandNames: [:])
        // argument-parser's own: every command answers to them.
        let builtIn: Set<String> = ["--help", "--version", "--generate-completion-script", "--experimental-dump-help"]
        func walk(_ command: [String: Any], path: [String]) {
            var own = builtIn
            for argument in command["arguments"] as? [[String: Any]] ?? [] {
                for name in argument["names"] as? [[String: Any]] ?? [] where name["kind"] as? String == "long" {
                    own.insert("--" + (name["name"] as! String))
                }
            }
            let key = path.joined(separator: " ")
            result.flags[key] = own
            result.flags["", default: []].formUnion(own)
            let subcommands = command["subcommands"] as? [[String: Any]] ?? []
            result.commandNames[key] = subcommands.compactMap { $0["commandName"] as? String }
            for subcommand in subcommands { walk(subcommand, path: path + [subcommand["commandName"] as! String]) }
        }
        walk(object["command"] as! [String: Any], path: [])
        return result
    }

    struct Mention {
        var flag: String
        var command: String
        var known: Bool
    }

    /// The flags `literal` names: each checked against the command named before it in the same
    /// `enlog …` phrase, else against every command's.
    static func mentions(in literal: String, tree: CommandFlags) -> [Mention] {
        var mentions: [Mention] = []
        let pattern = try! Regex(#"--[a-z][a-z0-9]*(?:-[a-z0-9]+)*"#)
        for match in literal.matches(of: pattern) {
            // A flag inside a longer word ("a--b") or of another program is not enlog's.
            if match.range.lowerBound > literal.startIndex {
                let before = literal[literal.index(before: match.range.lowerBound)]
                if before.isLetter || before.isNumber || before == "-" { continue }
            }
            let flag = String(literal[match.range])
            let command = commandBefore(match.range.lowerBound, in: literal, tree: tree)
            let known = command.map { tree.flags[$0]?.contains(flag) ?? false } ?? tree.flags[""]!.contains(flag)
            mentions.append(Mention(flag: flag, command: command ?? "", known: known))
        }
        return mentions
    }

    /// "queue list" when the phrase the flag is in reads `enlog queue list … --flag`: from the last
    /// "enlog " before it, within the same backquoted or plain phrase (no `(`, `;` or `` ` `` between).
    static func commandBefore(_ position: String.Index, in literal: String, tree: CommandFlags) -> String? {
        let head = literal[..<position]
        guard let start = head.range(of: "enlog ", options: .backwards) else { return nil }
        let phrase = head[start.upperBound...]
        if phrase.contains(where: { "`;()\n".contains($0) }) { return nil }
        var path: [String] = []
        for word in phrase.split(separator: " ") {
            guard let names = tree.commandNames[path.joined(separator: " ")], names.contains(String(word)) else { break }
            path.append(String(word))
        }
        return path.isEmpty ? nil : path.joined(separator: " ")
    }
}
