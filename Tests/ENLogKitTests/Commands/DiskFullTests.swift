import Foundation
import GRDB
import XCTest

/// The outbox on a file system with no space left (a small tmpfs, filled): every command that
/// writes says "no space left" with exit 73 and stores nothing; every command that reads still
/// reads; once space is freed, writing works again.
final class DiskFullTests: XCTestCase {
    var mountPoint: TemporaryDirectory!
    var mounted = false

    override func setUpWithError() throws {
        mountPoint = try TemporaryDirectory()
        let mount = try Subprocess.run(URL(fileURLWithPath: "/bin/mount"), ["-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs", mountPoint.url.path])
        guard mount.status == 0 else {
            throw XCTSkip("cannot mount a tmpfs to fill (needs root or CAP_SYS_ADMIN): \(mount.standardError)")
        }
        mounted = true
    }

    override func tearDownWithError() throws {
        if mounted { _ = try Subprocess.run(URL(fileURLWithPath: "/bin/umount"), [mountPoint.url.path]) }
    }

    /// Writes a file until the file system refuses another byte.
    func fill(_ path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { close(fd) }
        let block = [UInt8](repeating: 0, count: 4096)
        while write(fd, block, block.count) > 0 {}
        XCTAssertEqual(errno, ENOSPC)
        var one: UInt8 = 0
        while write(fd, &one, 1) > 0 {}
    }

    func testAFullDiskIsSaidSoByWritersAndReadersKeepReading() throws {
        var home = try EnlogHome()
        let database = mountPoint.url.path + "/enlog.sqlite"
        home.extraEnvironment["ENLOG_DB"] = database
        for longitude in ["11.1", "11.2"] {
            let logged = try home.run("log", "--at", "48.1,\(longitude)", "--no-sync", "--no-geocode")
            XCTAssertEqual(logged.status, 0, logged.standardError)
        }
        let filler = mountPoint.url.path + "/filler"
        try fill(filler)

        let full = "enlog: error: no space left on the disk holding outbox \(database) (free some disk space and try again)"
        let writers: [[String]] = [
            ["log", "--at", "48.1,11.3", "--no-sync", "--no-geocode"],
            ["import", Fixtures.root.appendingPathComponent("nmea/walk.nmea").path],
            ["queue", "drop", "2", "--yes"],
        ]
        for arguments in writers {
            let result = try home.run(arguments)
            XCTAssertEqual(result.status, 73, "\(arguments): \(result.standardError)")
            XCTAssertEqual(result.standardErrorLines, [full], "\(arguments)")
        }
        let readers: [[String]] = [["queue", "list"], ["queue", "list", "--json"], ["history"], ["history", "--format", "gpx"],
                                   ["queue", "show", "1"], ["queue", "show", "2", "--json"]]
        for arguments in readers {
            let result = try home.run(arguments)
            XCTAssertEqual(result.status, 0, "\(arguments) on a full disk: \(result.standardError)")
            XCTAssertFalse(result.standardOutput.isEmpty, "\(arguments)")
        }
        XCTAssertEqual(try home.run("queue", "list").standardOutput.split(separator: "\n").count, 2, "nothing stored, nothing dropped")

        XCTAssertEqual(unlink(filler), 0)
        let again = try home.run("log", "--at", "48.1,11.3", "--no-sync", "--no-geocode")
        XCTAssertEqual(again.status, 0, again.standardError)
        XCTAssertEqual(try home.run("queue", "list").standardOutput.split(separator: "\n").count, 3)
        XCTAssertEqual(try DatabaseQueue(path: database).read { try String.fetchOne($0, sql: "PRAGMA integrity_check") }, "ok")
    }
}

extension DiskFullTests {
    /// The disk fills during an import (the outbox opened fine): the outbox's words and exit 73,
    /// not "bad input" (65); the outbox stays whole and a rerun once space is back adds the rest.
    func testADiskThatFillsDuringAnImportIsSaidSoWith73() throws {
        var home = try EnlogHome()
        let database = mountPoint.url.path + "/enlog.sqlite"
        home.extraEnvironment["ENLOG_DB"] = database
        XCTAssertEqual(try home.run("log", "--at", "48.1,11.1", "--no-sync", "--no-geocode").status, 0)
        // 2 × 30,000 rows: several MiB of history with its index, on a 2 MiB file system.
        let file = try home.directory.file("big.csv", contents: HistoryImportTests.csv(points: 30_000))
        let result = try home.run("import", file.path)
        XCTAssertEqual(result.status, 73, result.standardError)
        XCTAssertEqual(result.standardErrorLines.count, 1, result.standardError)
        XCTAssertTrue(result.standardError.hasPrefix("enlog: error: no space left on the disk holding outbox \(database), importing \(file.path) "),
                      result.standardError)
        XCTAssertTrue(result.standardError.contains("free some disk space and try again, then import the file again"), result.standardError)
        let listed = try home.run("queue", "list")
        XCTAssertEqual(listed.status, 0, listed.standardError)
        XCTAssertEqual(listed.standardOutput.split(separator: "\n").count, 1)
    }
}
