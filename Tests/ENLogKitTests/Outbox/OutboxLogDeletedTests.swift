import Foundation
import GRDB
import XCTest

/// The outbox's write-ahead log deleted while another process (here: this test, holding a
/// connection) has it open: the frames it committed are readable only through that process's
/// descriptor. Every other command says so in one line, with what to do, and exits 75 (try
/// again: a running `watch` writes them back at its next event).
final class OutboxLogDeletedTests: XCTestCase {
    func testEveryOtherCommandSaysTheLogWasDeletedUnderWhichProcess() throws {
        let home = try EnlogHome()
        XCTAssertEqual(try home.run("log", "--at", "1,1", "--no-sync", "--no-geocode").status, 0)
        let holder = try DatabaseQueue(path: home.database)
        try holder.write { db in try db.execute(sql: "UPDATE note SET title = 'only in the log' || hex(randomblob(2000))") }
        XCTAssertEqual(unlink(home.database + "-wal"), 0)
        let arguments: [[String]] = [["queue", "list"], ["history"], ["log", "--at", "2,2", "--no-sync", "--no-geocode"],
                                     ["export", "--enex", home.directory.path("out.enex")]]
        for command in arguments {
            let result = try home.run(command)
            XCTAssertEqual(result.status, 75, "\(command): \(result.standardError)")
            XCTAssertEqual(result.standardErrorLines.count, 1, "\(command): \(result.standardError)")
            let line = result.standardErrorLines.first ?? ""
            XCTAssertTrue(line.hasPrefix("enlog: error: the write-ahead log of outbox \(home.database) (\(home.database)-wal) "
                                         + "was deleted while process \(getpid()) ("), "\(command): \(line)")
            XCTAssertTrue(line.contains("`kill \(getpid())`"), line)
        }
        try holder.close()
        // The last connection closed checkpointed its log into the outbox: nothing was lost.
        let listed = try home.run("queue", "list", "--json")
        XCTAssertEqual(listed.status, 0, listed.standardError)
        XCTAssertTrue(listed.standardOutput.contains("only in the log"))
    }
}
