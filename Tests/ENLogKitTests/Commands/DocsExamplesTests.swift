import Foundation
import Testing

/// Issue 34 item 6: the docs are what enlog prints. Every ```console example of README.md and
/// docs/*.md is run, with the values it shows, against loopback servers, and the first line of
/// each output it shows is compared with what enlog prints.
///
/// How an example is read:
/// - `$ COMMAND   # remark` is a command line; the lines under it, up to the next `$`, are what
///   it prints. Only commands shown with output are run (the others are summaries of a command's
///   syntax, `[--json]`, `ID`), through bash, in the example's own folder, which holds an outbox
///   of its own and stands for `/home/me`, with TZ=UTC, maps off and the loopback geocoder.
/// - The first line shown is compared with the first line printed: on standard error when it
///   starts with `enlog:`, else on standard output (on standard error when nothing went to
///   standard output: `auth login` talks to the user there). `…` stands for anything; dates and times
///   (`2026-11-22`, `2026-11-22T09:15:00Z`) stand for any date and time.
/// - An HTML comment just above the example may say, one per line:
///   `setup: COMMAND` run first (its output not compared), `evernote` (signed in to the loopback
///   Evernote server), `oauth` (a loopback OAuth 1.0a server, `{oauth}`), `tiles` (maps drawn
///   from the loopback tile server), `offline` (the geocoder cannot be reached), `env: NAME=VALUE`,
///   `file: NAME=FIXTURE` (a file of Tests/Fixtures copied in), `as: COMMAND` (the first command
///   shown is run as this one, the same code path on loopback: `{oauth}` for Evernote's host, a
///   time limit for `watch`), `skip: REASON`.
@Suite("The docs' console examples are what enlog prints", .serialized)
struct DocsExamplesTests {
    struct Example {
        var file: String
        var line: Int
        var directives: [(key: String, value: String)]
        /// The commands shown with output, and the first line shown for each.
        var runs: [(command: String, expected: String)]

        func values(_ key: String) -> [String] { directives.filter { $0.key == key }.map(\.value) }
        func has(_ key: String) -> Bool { directives.contains { $0.key == key } }
    }

    static func examples() throws -> [Example] {
        let root = Fixtures.repositoryRoot
        let docs = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path)
            .filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
        var examples: [Example] = []
        for file in ["README.md"] + docs {
            let lines = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
                .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            var index = 0
            while index < lines.count {
                guard lines[index].trimmingCharacters(in: .whitespaces) == "```console" else { index += 1; continue }
                let start = index
                var directives: [(String, String)] = []
                var back = start - 1
                if back >= 0, lines[back].trimmingCharacters(in: .whitespaces) == "-->" {
                    while back > 0, !lines[back].contains("<!-- console-test") { back -= 1 }
                    for directive in lines[(back + 1)..<(start - 1)] {
                        let parts = directive.trimmingCharacters(in: .whitespaces).split(separator: ":", maxSplits: 1)
                        directives.append((String(parts[0]), parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : ""))
                    }
                }
                var runs: [(String, String)] = []
                var command: String?
                var shown: [String] = []
                func close() {
                    if let command, let first = shown.first { runs.append((command, first)) }
                }
                index += 1
                while index < lines.count, lines[index].trimmingCharacters(in: .whitespaces) != "```" {
                    let text = lines[index].trimmingCharacters(in: .whitespaces)
                    if text.hasPrefix("$ ") {
                        close()
                        var line = String(text.dropFirst(2))
                        // A command continued on the next line.
                        while line.hasSuffix("\\"), index + 1 < lines.count {
                            index += 1
                            line = String(line.dropLast()) + " " + lines[index].trimmingCharacters(in: .whitespaces)
                        }
                        command = Self.withoutRemark(line)
                        shown = []
                    } else if !text.isEmpty, command != nil {
                        shown.append(text)
                    }
                    index += 1
                }
                close()
                examples.append(Example(file: file, line: start + 1, directives: directives, runs: runs))
                index += 1
            }
        }
        return examples
    }

    /// The command without its `# remark` (two spaces or more before the `#`).
    static func withoutRemark(_ line: String) -> String {
        guard let remark = line.range(of: #"\s{2,}#\s"#, options: .regularExpression) else { return line }
        return String(line[..<remark.lowerBound]).trimmingCharacters(in: .whitespaces)
    }

    /// A line as compared: the example's folder read as /home/me, every date and time alike.
    static func normalized(_ line: String, folder: String) -> String {
        line.replacingOccurrences(of: folder, with: "/home/me")
            .replacingOccurrences(of: #"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})?"#,
                                  with: "<time>", options: .regularExpression)
    }

    /// Whether `printed` is the line `shown`, where `…` in it stands for anything.
    static func matches(shown: String, printed: String) -> Bool {
        let pattern = "^" + shown.components(separatedBy: "…").map(NSRegularExpression.escapedPattern(for:)).joined(separator: ".*") + "$"
        return printed.range(of: pattern, options: .regularExpression) != nil
    }

    static let token = "S=s1:U=1:E=19c3a1b2c3d:C=18c3a1b2c3d:P=1cd:A=enlog-test:V=2:H=abcdef"

    @Test func everyConsoleExampleIsWhatEnlogPrints() throws {
        let examples = try Self.examples()
        #expect(examples.count >= 25, "the examples are found (\(examples.count))")
        let geocoder = try NominatimTestServer()
        defer { geocoder.stop() }
        var evernote: PythonServer?
        var oauth: PythonServer?
        var tiles: PythonServer?
        defer {
            evernote?.stop()
            oauth?.stop()
            tiles?.stop()
        }
        let binaries = Subprocess.enlog.deletingLastPathComponent().path
        var compared = 0
        var skipped: [String] = []
        var failures: [String] = []
        for example in examples {
            let place = "\(example.file):\(example.line)"
            if let reason = example.values("skip").first {
                skipped.append("\(place) (\(reason))")
                continue
            }
            let folder = try TemporaryDirectory()
            let path = folder.url.resolvingSymlinksInPath().path
            var environment = ["PATH": "\(binaries):/usr/bin:/bin", "HOME": path, "TZ": "UTC", "LANG": "C.UTF-8",
                               "XDG_DATA_HOME": path + "/.local/share", "XDG_CONFIG_HOME": path + "/.config",
                               "XDG_CACHE_HOME": path + "/.cache", "TMPDIR": path,
                               "ENLOG_MAP_STYLE": "none", "ENLOG_NETWORK_PROBES": "127.0.0.1:9",
                               "ENLOG_GEOCODING_URL": example.has("offline") ? "http://127.0.0.1:9" : geocoder.baseURL]
            for file in example.values("file") {
                let parts = file.split(separator: "=", maxSplits: 1).map(String.init)
                let destination = folder.url.appendingPathComponent(parts[0])
                try FileManager.default.createDirectory(at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
                try FileManager.default.copyItem(at: Fixtures.root.appendingPathComponent(parts[1]), to: destination)
            }
            for variable in example.values("env") {
                let parts = variable.split(separator: "=", maxSplits: 1).map(String.init)
                environment[parts[0]] = parts.count > 1 ? parts[1] : ""
            }
            var substitutions: [String: String] = [:]
            if example.has("evernote") || example.has("oauth") {
                if evernote == nil { evernote = try PythonServer(script: "evernote_server.py", arguments: ["--token", Self.token]) }
                substitutions["{evernote}"] = evernote!.baseURL
            }
            if example.has("oauth") {
                if oauth == nil {
                    oauth = try PythonServer(script: "oauth_server.py", arguments: [
                        "--mode", "oauth1", "--consumer-key", "enlog-test", "--consumer-secret", "s3cret", "--issue-token", Self.token,
                        "--note-store-url", evernote!.baseURL + "/shard/s1/notestore", "--edam-url", evernote!.baseURL])
                }
                substitutions["{oauth}"] = oauth!.baseURL
                environment["ENLOG_CONSUMER_KEY"] = "enlog-test"
                environment["ENLOG_CONSUMER_SECRET"] = "s3cret"
            }
            if example.has("tiles") {
                if tiles == nil { tiles = try PythonServer(script: "tile_server.py") }
                environment["ENLOG_MAP_STYLE"] = "tiles"
                environment["ENLOG_MAP_TILE_URL"] = tiles!.baseURL + "/{z}/{x}/{y}.png"
            }
            func shell(_ command: String, extra: [String: String] = [:]) throws -> ProcessResult {
                var line = command
                for (key, value) in substitutions { line = line.replacingOccurrences(of: key, with: value) }
                return try Subprocess.run(URL(fileURLWithPath: "/bin/bash"), ["-c", line],
                                          environment: environment.merging(extra) { $1 }, currentDirectory: folder.url)
            }
            if example.has("evernote") {
                let signIn = try shell("enlog auth token --service custom --host {evernote}", extra: ["ENLOG_TOKEN": Self.token])
                if signIn.status != 0 { failures.append("\(place): signing in failed: \(signIn.standardError)") }
            }
            for setup in example.values("setup") {
                let result = try shell(setup)
                if result.status != 0 { failures.append("\(place): setup `\(setup)` failed (\(result.status)): \(result.standardError)") }
            }
            let runAs = example.values("as")
            for (offset, run) in example.runs.enumerated() {
                let command = offset < runAs.count ? runAs[offset] : run.command
                let result = try shell(command)
                let stream = run.expected.hasPrefix("enlog:") || result.standardOutput.isEmpty ? result.standardError : result.standardOutput
                let printed = stream.split(separator: "\n").first.map(String.init) ?? ""
                compared += 1
                let shown = Self.normalized(run.expected, folder: path), seen = Self.normalized(printed, folder: path)
                if !Self.matches(shown: shown, printed: seen) {
                    failures.append("\(place): `\(run.command)`\n    shown:   \(run.expected)\n    printed: \(printed)"
                                    + (stream.isEmpty ? "\n    (exit \(result.status); stderr: \(result.standardError.prefix(300)))" : ""))
                }
            }
        }
        #expect(compared >= 20, "outputs compared: \(compared)")
        #expect(skipped.count <= 4, "few examples are skipped: \(skipped)")
        #expect(failures.isEmpty, "\(failures.count) examples differ from what enlog prints:\n\(failures.joined(separator: "\n"))")
    }

    /// The comparison itself: `…` and dates are read as said, anything else is exact.
    @Test func theComparisonReadsEllipsesAndTimes() {
        #expect(Self.matches(shown: "https://…", printed: "https://127.0.0.1:5/OAuth.action?x=1"))
        #expect(!Self.matches(shown: "uploaded 1, 0 remaining", printed: "uploaded 0, 0 remaining"))
        #expect(Self.normalized("1\tpending\t2026-11-22T09:15:00Z\tx", folder: "/tmp/a")
                == Self.normalized("1\tpending\t2026-11-27T05:40:12+00:00\tx", folder: "/tmp/a"))
        #expect(Self.normalized("to /tmp/a/enlog-2026-11-27.enex", folder: "/tmp/a") == "to /home/me/enlog-<time>.enex")
        #expect(Self.withoutRemark("enlog queue show 1          # the note itself (ENML)") == "enlog queue show 1")
    }
}
