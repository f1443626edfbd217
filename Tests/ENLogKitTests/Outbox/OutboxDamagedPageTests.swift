import Foundation
import GRDB
import XCTest

/// A damaged page in the outbox (here: the page of the fix time index, smashed): writing fails
/// with exit 74, and the advice is to save the notes first, which `export --enex` then does,
/// rather than to move the file aside at once ("notes not yet uploaded may be lost").
final class OutboxDamagedPageTests: XCTestCase {
    func testADamagedPageAdvisesExportingFirstAndTheExportWorks() throws {
        let home = try EnlogHome()
        for longitude in 1...3 {
            XCTAssertEqual(try home.run("log", "--at", "48.1,11.\(longitude)", "--no-sync", "--no-geocode").status, 0)
        }
        let (root, pageSize) = try DatabaseQueue(path: home.database).read { db in
            (try Int.fetchOne(db, sql: "SELECT rootpage FROM sqlite_master WHERE name = 'fix_on_timestamp'") ?? 0,
             try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096)
        }
        XCTAssertGreaterThan(root, 1)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: home.database))
        try handle.seek(toOffset: UInt64((root - 1) * pageSize))
        try handle.write(contentsOf: Data(repeating: 0xA5, count: pageSize))
        try handle.close()

        let refused = try home.run("log", "--at", "48.1,11.9", "--no-sync", "--no-geocode")
        XCTAssertEqual(refused.status, ExitStatusCode.ioError.rawValue, refused.standardError)
        XCTAssertEqual(refused.standardErrorLines.count, 1, refused.standardError)
        XCTAssertTrue(refused.standardError.contains("is damaged"), refused.standardError)
        XCTAssertTrue(refused.standardError.contains("first save the notes it still holds with `enlog export --enex FILE` "
                                                     + "(or `sqlite3 \(home.database) .recover`), then move \(home.database) aside"),
                      refused.standardError)
        let exported = try home.run("export", "--enex", home.directory.path("saved.enex"))
        XCTAssertEqual(exported.status, 0, exported.standardError)
        XCTAssertTrue(exported.standardOutput.contains("exported 3 notes"), exported.standardOutput)
        XCTAssertEqual(try home.run("queue", "list").status, 0)
    }
}
