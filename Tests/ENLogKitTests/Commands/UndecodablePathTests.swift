import Foundation
import GRDB
import XCTest
#if canImport(Glibc)
import Glibc
#endif
@testable import Support
@testable import Capture

/// Paths are bytes (issue 32, class 3). A name that is not UTF-8 (`db\xE9.sqlite`, a Latin-1
/// file from an old disk) is either opened by its exact bytes (`import`: files, folders, names
/// found in folders) or refused in one line naming it with its bad bytes escaped; it never
/// silently becomes another name (`db\xEF\xBF\xBD.sqlite`, Swift's repair with U+FFFD).
final class UndecodablePathTests: XCTestCase {
    /// U+FFFD as UTF-8: what the repaired name would hold.
    static let replacement: [UInt8] = [0xEF, 0xBF, 0xBD]

    /// `sh -c script` with the home's environment, `$ENLOG` the binary and `$DIR` the home's
    /// folder: the shell's `printf` makes arguments and variables that are not UTF-8, which a
    /// Swift `[String]` cannot hold.
    func shell(_ home: EnlogHome, _ script: String, in directory: String? = nil) throws -> ProcessResult {
        var environment = home.environment
        environment["ENLOG"] = Subprocess.enlog.path
        environment["DIR"] = home.directory.url.path
        return try Subprocess.run(URL(fileURLWithPath: "/bin/sh"), ["-c", script], environment: environment,
                                  currentDirectory: directory.map { URL(fileURLWithPath: $0) })
    }

    /// Every name in `folder` and below it, as bytes.
    func names(under folder: String) -> [[UInt8]] {
        var found: [[UInt8]] = []
        var pending = [Array(folder.utf8)]
        while let current = pending.popLast() {
            guard let stream = opendir(String(decoding: current, as: UTF8.self)) else { continue }
            defer { closedir(stream) }
            while let entry = readdir(stream) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
                if name == [0x2E] || name == [0x2E, 0x2E] { continue }
                found.append(name)
                if entry.pointee.d_type == UInt8(DT_DIR), String(validating: name, as: UTF8.self) != nil {
                    pending.append(current + [0x2F] + name)
                }
            }
        }
        return found
    }

    func holdsRepairedName(_ folder: String) -> Bool {
        names(under: folder).contains { (name: [UInt8]) -> Bool in
            name.indices.contains { (index: Int) -> Bool in name[index...].starts(with: Self.replacement) }
        }
    }

    /// Writes `contents` at a path given as bytes (Foundation cannot name such a file).
    func write(_ contents: String, at path: [UInt8]) throws {
        let descriptor = (path + [0]).withUnsafeBufferPointer {
            open(UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        }
        XCTAssertGreaterThanOrEqual(descriptor, 0, "cannot create the test file")
        defer { close(descriptor) }
        let bytes = Array(contents.utf8)
        XCTAssertEqual(bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }, bytes.count)
    }

    func makeFolder(_ path: [UInt8]) {
        XCTAssertEqual((path + [0]).withUnsafeBufferPointer { mkdir(UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), 0o755) }, 0)
    }

    func points(_ home: EnlogHome) throws -> Int {
        guard FileManager.default.fileExists(atPath: home.database) else { return 0 }
        return try DatabaseQueue(path: home.database).read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM fix")! }
    }

    /// `--db` (both spellings), `--config` and `export --enex` (with and without --new) are
    /// refused with exit 2, naming the argument with its bad byte escaped; no file is made under
    /// another name, and no note is marked exported.
    func testArgumentsThatAreNotUTF8AreRefusedNotRenamed() throws {
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        let logged = try home.run("log", "--at", "1,2", "--no-sync")
        XCTAssertEqual(logged.status, 0, logged.standardError)
        for (script, shown) in [
            (#"exec "$ENLOG" log --at 1,2 --no-sync --db "$DIR/db$(printf '\351').sqlite""#, #"db\xE9.sqlite"#),
            (#"exec "$ENLOG" queue list --db="$DIR/out$(printf '\377\376')box.sqlite""#, #"out\xFF\xFEbox.sqlite"#),
            (#"exec "$ENLOG" config show --config "$DIR/conf$(printf '\340').toml""#, #"conf\xE0.toml"#),
            (#"exec "$ENLOG" export --enex "$DIR/exp$(printf '\351').enex""#, #"exp\xE9.enex"#),
            (#"exec "$ENLOG" export --new --enex "$DIR/new$(printf '\351').enex""#, #"new\xE9.enex"#),
        ] {
            let result = try shell(home, script)
            XCTAssertEqual(result.status, 2, "\(script): \(result.standardError)")
            XCTAssertEqual(result.standardErrorLines.count, 1, result.standardError)
            XCTAssertTrue(result.standardError.contains(shown) && result.standardError.contains("is not UTF-8"), "\(script): \(result.standardError)")
        }
        XCTAssertFalse(holdsRepairedName(home.directory.url.path), "a file under a repaired name: \(names(under: home.directory.url.path))")
        let names = names(under: home.directory.url.path).map { String(decoding: $0, as: UTF8.self) }
        XCTAssertFalse(names.contains { $0.hasPrefix("exp") || $0.hasPrefix("new") || $0.hasPrefix("db") || $0.hasPrefix("out") }, "\(names)")
        XCTAssertEqual(try home.notes().map { $0["state"] as? String }, ["pending"], "nothing marked exported")
    }

    /// XDG_DATA_HOME, XDG_CONFIG_HOME and ENLOG_DB that are not UTF-8: exit 78 naming the
    /// variable; no outbox is created under a repaired name.
    func testVariablesThatAreNotUTF8AreRefusedNotRenamed() throws {
        let home = try EnlogHome()
        for (script, variable, shown) in [
            (#"unset ENLOG_DB; XDG_DATA_HOME="$DIR/data$(printf '\351')" exec "$ENLOG" log --at 1,2 --no-sync --no-geocode"#, "XDG_DATA_HOME", #"data\xE9"#),
            (#"XDG_CONFIG_HOME="$DIR/c$(printf '\351')" exec "$ENLOG" config show"#, "XDG_CONFIG_HOME", #"c\xE9"#),
            (#"ENLOG_DB="$DIR/e$(printf '\351').sqlite" exec "$ENLOG" queue list"#, "ENLOG_DB", #"e\xE9.sqlite"#),
        ] {
            let result = try shell(home, script)
            XCTAssertEqual(result.status, 78, "\(script): \(result.standardError)")
            XCTAssertEqual(result.standardErrorLines.count, 1, result.standardError)
            XCTAssertTrue(result.standardError.contains("\(variable)=") && result.standardError.contains(shown), "\(script): \(result.standardError)")
        }
        XCTAssertFalse(holdsRepairedName(home.directory.url.path), "\(names(under: home.directory.url.path))")
    }

    /// A config whose `db =` holds a byte that is not UTF-8 is refused (exit 78, the file named),
    /// and no outbox is made under a repaired name.
    func testAConfigDatabasePathThatIsNotUTF8IsRefused() throws {
        let home = try EnlogHome()
        try FileManager.default.createDirectory(atPath: home.configHome + "/enlog", withIntermediateDirectories: true)
        var config = Array("db = \"\(home.directory.url.path)/d".utf8)
        config += [0xE9] + Array(".sqlite\"\n".utf8)
        try Data(config).write(to: URL(fileURLWithPath: home.configHome + "/enlog/config.toml"))
        let result = try shell(home, #"unset ENLOG_DB; exec "$ENLOG" log --at 1,2 --no-sync --no-geocode"#)
        XCTAssertEqual(result.status, 78, result.standardError)
        XCTAssertTrue(result.standardError.contains("config.toml"), result.standardError)
        XCTAssertFalse(holdsRepairedName(home.directory.url.path), "\(names(under: home.directory.url.path))")
    }

    /// `import` opens what it is given by its bytes: a file named in Latin-1, a folder so named,
    /// such files found in a folder (`import .`) and in a subfolder so named; a missing one is
    /// named with its bad byte escaped.
    func testImportReadsFilesAndFoldersWhoseNamesAreNotUTF8() throws {
        let home = try EnlogHome()
        let root = Array(home.directory.url.path.utf8)
        // A file given by name.
        try write(HistoryImportTests.gpx(points: 3), at: root + Array("/walk".utf8) + [0xE9] + Array(".gpx".utf8))
        let file = try shell(home, #"exec "$ENLOG" import "$DIR/walk$(printf '\351').gpx""#)
        XCTAssertEqual(file.status, 0, file.standardError)
        XCTAssertTrue(file.standardOutput.hasPrefix("read 3 points from GPX: 3 added"), file.standardOutput)
        XCTAssertEqual(try points(home), 3)

        // A folder named so, holding a file named so and a subfolder named so.
        let folder = root + Array("/tracks".utf8) + [0xFC]
        makeFolder(folder)
        makeFolder(folder + Array("/sub".utf8) + [0xE0])
        try write(HistoryImportTests.csv(points: 4, from: 100), at: folder + Array("/day".utf8) + [0xE9] + Array(".csv".utf8))
        try write(HistoryImportTests.csv(points: 5, from: 200), at: folder + Array("/sub".utf8) + [0xE0] + Array("/inner".utf8) + [0xFF] + Array(".csv".utf8))
        let named = try shell(home, #"exec "$ENLOG" import "$DIR/tracks$(printf '\374')""#)
        XCTAssertEqual(named.status, 0, named.standardError)
        XCTAssertTrue(named.standardOutput.contains(#"day\xE9.csv: read 8 points from CSV: 8 added"#), named.standardOutput)
        XCTAssertTrue(named.standardOutput.contains(#"sub\xE0/inner\xFF.csv: read 10 points from CSV: 10 added"#), named.standardOutput)
        XCTAssertEqual(try points(home), 3 + 8 + 10)

        // `import .` inside the folder: the same files, found again, add nothing and exit 0.
        let here = try shell(home, #"cd "$DIR/tracks$(printf '\374')" && exec "$ENLOG" import . --json"#)
        XCTAssertEqual(here.status, 0, here.standardError)
        let summary = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(here.standardOutput.utf8)) as? [String: Any], here.standardOutput)
        XCTAssertEqual(summary["alreadyThere"] as? Int, 18, here.standardOutput)

        let missing = try shell(home, #"exec "$ENLOG" import "$DIR/gone$(printf '\350').gpx""#)
        XCTAssertEqual(missing.status, 66, missing.standardError)
        XCTAssertTrue(missing.standardError.contains(#"gone\xE8.gpx"#) && missing.standardError.contains("No such file"), missing.standardError)
        XCTAssertFalse(holdsRepairedName(home.directory.url.path))
    }

    /// `validate` opens a file named in Latin-1 by its bytes too, and names it escaped.
    func testValidateReadsAFileWhoseNameIsNotUTF8() throws {
        let home = try EnlogHome()
        let note = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE en-note SYSTEM \"http://xml.evernote.com/pub/enml2.dtd\">\n<en-note><div>x</div></en-note>"
        try write(note, at: Array(home.directory.url.path.utf8) + Array("/note".utf8) + [0xE9] + Array(".enml".utf8))
        let valid = try shell(home, #"exec "$ENLOG" validate --json "$DIR/note$(printf '\351').enml""#)
        XCTAssertEqual(valid.status, 0, valid.standardError)
        XCTAssertTrue(valid.standardOutput.contains(#"note\\xE9.enml"#), valid.standardOutput)
        let missing = try shell(home, #"exec "$ENLOG" validate "$DIR/none$(printf '\351').enml""#)
        XCTAssertEqual(missing.status, 2, missing.standardError)
        XCTAssertTrue(missing.standardError.contains(#"none\xE9.enml"#) && missing.standardError.contains("No such file"), missing.standardError)
    }

    /// The bytes behind a decoded argument: its UTF-8 when it was valid; the one argument that
    /// decodes to it otherwise; none when two different ones do (which was meant is unknown).
    func testExactBytesOfAnArgument() {
        let arguments: [[UInt8]] = [Array("enlog".utf8), [0x61, 0xE9], [0x62, 0xE9], [0x62, 0xE8], Array("c\u{FFFD}".utf8)]
        XCTAssertEqual(UndecodedInput.exactBytes(ofArgument: "plain", in: arguments), Array("plain".utf8))
        XCTAssertEqual(UndecodedInput.exactBytes(ofArgument: "a\u{FFFD}", in: arguments), [0x61, 0xE9])
        XCTAssertNil(UndecodedInput.exactBytes(ofArgument: "b\u{FFFD}", in: arguments))
        XCTAssertEqual(UndecodedInput.exactBytes(ofArgument: "c\u{FFFD}", in: arguments), Array("c\u{FFFD}".utf8))
        XCTAssertEqual(UndecodedInput.firstUndecodableArgument(carried: ["a\u{FFFD}"], in: arguments), .argument(shown: #"b\xE9"#))
        XCTAssertEqual(UndecodedInput.firstUndecodableArgument(carried: ["a\u{FFFD}", "b\u{FFFD}"], in: arguments), .argument(shown: #"b\xE9"#),
                       "two arguments decode alike: neither can be carried")
        XCTAssertNil(UndecodedInput.firstUndecodableArgument(carried: [], in: [Array("enlog".utf8), Array("c\u{FFFD}".utf8)]))
    }
}
