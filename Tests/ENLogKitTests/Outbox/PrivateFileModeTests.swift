import Foundation
import GRDB
import XCTest

/// Who can read the diary: the data folder 0700, the outbox 0600 (and its -wal and -shm, which
/// SQLite makes with the file's mode), an export 0600, the tile cache 0700/0600, whatever the
/// umask the user runs enlog under, as the credentials are.
final class PrivateFileModeTests: XCTestCase {
    private func mode(_ path: String) -> mode_t? {
        var status = stat()
        return stat(path, &status) == 0 ? status.st_mode & 0o777 : nil
    }

    /// enlog run under `mask` (a shell sets it, as a user's login would).
    private func run(_ home: EnlogHome, umask mask: String, _ arguments: [String], _ extra: [String: String] = [:]) throws -> ProcessResult {
        try Subprocess.run(URL(fileURLWithPath: "/bin/sh"), ["-c", "umask \(mask) && exec \"$0\" \"$@\"", Subprocess.enlog.path] + arguments,
                           environment: home.environment.merging(extra) { $1 })
    }

    func testTheDiaryIsItsOwnersAloneWhateverTheUmask() throws {
        let tiles = try TileTestServer()
        defer { tiles.stop() }
        for mask in ["000", "022"] {
            let home = try EnlogHome()
            let logged = try run(home, umask: mask, ["log", "--at", "48.1,11.5", "--no-sync", "--no-geocode"])
            XCTAssertEqual(logged.status, 0, logged.standardError)
            let data = (home.database as NSString).deletingLastPathComponent
            XCTAssertEqual(mode(data), 0o700, "umask \(mask): the data folder")
            XCTAssertEqual(mode(home.database), 0o600, "umask \(mask): the outbox")

            let export = home.directory.path("diary.enex")
            let exported = try run(home, umask: mask, ["export", "--enex", export, "-q"])
            XCTAssertEqual(exported.status, 0, exported.standardError)
            XCTAssertEqual(mode(export), 0o600, "umask \(mask): the export")

            let cache = home.directory.path("cache")
            let mapped = try run(home, umask: mask, ["map", "--at", "48.1,11.5", "-o", home.directory.path("m.png")],
                                 ["XDG_CACHE_HOME": cache, "ENLOG_MAP_TILE_URL": tiles.tileURL, "ENLOG_MAP_STYLE": "tiles"])
            XCTAssertEqual(mapped.status, 0, mapped.standardError)
            XCTAssertEqual(mode(cache + "/enlog"), 0o700, "umask \(mask): the tile cache's folder")
            XCTAssertEqual(mode(cache + "/enlog/tiles.sqlite"), 0o600, "umask \(mask): the tile cache")

            // The -wal and -shm of the outbox, while a connection has them (made under the same umask).
            let previous = umask(mask == "000" ? 0 : 0o022)
            defer { umask(previous) }
            let holder = try DatabaseQueue(path: home.database)
            _ = try holder.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM note") }
            XCTAssertEqual(mode(home.database + "-wal"), 0o600, "umask \(mask): the -wal")
            XCTAssertEqual(mode(home.database + "-shm"), 0o600, "umask \(mask): the -shm")
            try holder.close()
        }
    }
}
