import Foundation
import GRDB
import Testing

/// `enlog timeline` and `enlog places list` on an outbox the user cannot write (another user's
/// diary, a backup, a read-only mount) tell the day with the places known, as `queue list` and
/// `history` read it; the commands that change places say in one line that they cannot.
@Suite("places and timeline on a read-only outbox")
struct ReadOnlyPlacesTests {
    /// Root writes through file modes, so as root enlog runs as `nobody`: the outbox file
    /// read-only, in a folder that user cannot write (no -wal or -shm can be made), then in one it can.
    @Test(.enabled(if: getuid() != 0 || Subprocess.which("setpriv") != nil, "as root, needs setpriv to drop privileges"))
    func readingCommandsWorkAndChangingOnesSayWhy() throws {
        let home = try TimelineCommandTests.home()
        let file = try home.directory.file("day.csv", contents: TimelineCommandTests.csv())
        try #require(try home.run("import", file.path).status == 0)
        try #require(try home.run("places", "add", "Home", "--at", "48.137,11.575").status == 0)
        let data = home.directory.url.appendingPathComponent("data")
        chmod(home.directory.url.path, 0o755)
        let binary = home.directory.url.appendingPathComponent("enlog")
        try FileManager.default.copyItem(at: Subprocess.enlog, to: binary)
        chmod(binary.path, 0o755)
        defer { chmod(data.path, 0o755) }
        func asNobody(_ arguments: [String]) throws -> ProcessResult {
            guard getuid() == 0 else { return try Subprocess.run(binary, arguments, environment: home.environment) }
            return try Subprocess.run(Subprocess.which("setpriv")!, ["--reuid=nobody", "--regid=nogroup", "--clear-groups", binary.path] + arguments,
                                      environment: home.environment)
        }
        chmod(home.database, 0o444)
        for folderMode: mode_t in [0o555, 0o777] {
            chmod(data.path, folderMode)
            let timeline = try asNobody(["timeline", "--date", TimelineCommandTests.day, "--json"])
            #expect(timeline.status == 0, "\(folderMode): \(timeline.standardError)")
            #expect(timeline.standardErrorLines.count == 1, "\(folderMode): \(timeline.standardError)")
            #expect(timeline.standardError.contains("cannot be written here"), "\(folderMode): \(timeline.standardError)")
            let stays = try #require(try JSONSerialization.jsonObject(with: Data(timeline.standardOutput.utf8)) as? [String: Any])["stays"] as? [[String: Any]]
            #expect(stays?.map { $0["name"] as? String } == ["Home", nil, "Café Rosa"], "\(timeline.standardOutput)")
            let listed = try asNobody(["places", "list", "--json"])
            #expect(listed.status == 0, "\(folderMode): \(listed.standardError)")
            let places = try JSONSerialization.jsonObject(with: Data(listed.standardOutput.utf8)) as? [[String: Any]]
            #expect(places?.map { $0["name"] as? String } == ["Home"], "\(listed.standardOutput)")
            #expect(places?.first?["visits"] as? Int == 1, "\(listed.standardOutput)")

            for arguments in [["places", "name", "1", "Haus"], ["places", "add", "Office", "--at", "48.2,11.6"],
                              ["places", "merge", "1", "2"], ["places", "forget", "1"]] {
                let refused = try asNobody(arguments)
                #expect(refused.status == ExitStatusCode.cannotWrite.rawValue, "\(folderMode) \(arguments): \(refused.standardError)")
                #expect(refused.standardErrorLines.count == 1, "\(folderMode) \(arguments): \(refused.standardError)")
            }
        }
        chmod(data.path, 0o755)
        let stored = try DatabaseQueue(path: home.database, configuration: { var c = Configuration(); c.readonly = true; return c }())
            .read { db in try String.fetchAll(db, sql: "SELECT name FROM place ORDER BY id") }
        #expect(stored == ["Home"], "nothing was added or renamed")
    }
}
