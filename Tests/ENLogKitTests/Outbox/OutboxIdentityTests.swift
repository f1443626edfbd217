import Foundation
import GRDB
import Testing
@testable import Outbox

/// An outbox is recognised before enlog writes to a file; anything else is left as it was.
@Suite("outbox identity")
struct OutboxIdentityTests {
    let directory: TemporaryDirectory
    init() throws { directory = try TemporaryDirectory() }

    /// Another program's database, in SQLite's default rollback-journal mode.
    func foreignDatabase(_ name: String, _ sql: String) throws -> String {
        let path = directory.path(name)
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in try db.execute(sql: sql) }
        try queue.close()
        return path
    }

    /// Everything on disk about `path`: its bytes, and which files lie beside it.
    func snapshot(_ path: String) throws -> (Data, [String]) {
        (try Data(contentsOf: URL(fileURLWithPath: path)), try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted())
    }

    /// An outbox as enlog wrote them before the stamp: migrated, holding a note, application_id 0.
    func earlierOutbox() throws -> String {
        let path = directory.path("earlier.sqlite")
        let pool = try DatabasePool(path: path)
        try OutboxSchema.migrator.migrate(pool)
        try pool.write { db in
            try db.execute(sql: """
                INSERT INTO fix (latitude, longitude, timestamp, source, createdAt) VALUES (1, 2, '2026-01-01 00:00:00.000', 'manual', '2026-01-01 00:00:00.000');
                INSERT INTO note (uid, fixId, title, content, createdAt, updatedAt) VALUES ('u1', 1, 't', '<en-note/>', '2026-01-01 00:00:00.000', '2026-01-01 00:00:00.000');
                """)
        }
        try pool.close()
        return path
    }

    static func applicationID(_ path: String) throws -> Int32 {
        try DatabaseQueue(path: path, configuration: { var c = Configuration(); c.readonly = true; return c }())
            .read { db in try Int32.fetchOne(db, sql: "PRAGMA application_id")! }
    }

    @Test(arguments: [
        ("customers", "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO customers (name) VALUES ('Ada')", "customers"),
        // Enlog's own table names, but not enlog's migrations: "table note already exists" before.
        ("notes-app", "CREATE TABLE note (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO note (body) VALUES ('mine')", "migrations"),
        ("grdb-app", "CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY); INSERT INTO grdb_migrations VALUES ('v1'); CREATE TABLE invoice (id INTEGER PRIMARY KEY)", "invoice"),
        ("grdb-other", "CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY); INSERT INTO grdb_migrations VALUES ('createCustomers')", "migrations"),
        ("stamped", "PRAGMA application_id = 1234", "application_id"),
    ])
    func anotherProgramsDatabaseIsRefusedAndLeftUntouched(_ name: String, _ sql: String, _ mention: String) throws {
        let path = try foreignDatabase(name + ".sqlite", sql)
        let before = try snapshot(path)
        for access in [OutboxStore.Access.create, .change, .read] {
            #expect {
                _ = try OutboxStore(path: path, access: access)
            } throws: { error in
                guard case let .foreign(reportedPath, detail)? = error as? OutboxError else { return false }
                return reportedPath == path && detail.contains(mention)
            }
        }
        let after = try snapshot(path)
        #expect(after.0 == before.0, "the file's bytes changed")
        #expect(after.1 == before.1, "files appeared beside it: \(after.1)")
    }

    @Test func aNewOutboxIsStampedAsEnlogs() throws {
        let path = directory.path("new.sqlite")
        _ = try OutboxStore(path: path)
        #expect(try Self.applicationID(path) == OutboxIdentity.applicationID)
        _ = try OutboxStore(path: path, access: .read)
    }

    /// A file created empty by another tool (`touch`, `sqlite3 x.db ''`) holds nothing to protect.
    @Test func aBlankFileBecomesAnOutbox() async throws {
        let path = directory.path("blank.sqlite")
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let store = try OutboxStore(path: path, access: .change)
        #expect(try await store.allNotes().isEmpty)
        #expect(try Self.applicationID(path) == OutboxIdentity.applicationID)
    }

    @Test func anOutboxFromAnEarlierEnlogIsReadAsItIsAndAdoptedByTheNextWrite() async throws {
        let path = try earlierOutbox()
        #expect(try Self.applicationID(path) == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let reader = try OutboxStore(path: path, access: .read)
        #expect(try await reader.allNotes().map(\.uid) == ["u1"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "reading wrote to the file")

        let writer = try OutboxStore(path: path, access: .change)
        #expect(try await writer.allNotes().map(\.uid) == ["u1"])
        #expect(try Self.applicationID(path) == OutboxIdentity.applicationID)
    }

    @Test func everyTableOfTheMigrationsIsKnown() {
        #expect(OutboxSchema.everyTableName.isSuperset(of: ["fix", "note", "grdb_migrations", "geocodeCache", "syncState"]))
    }
}

/// What `enlog` does with an outbox path that names nothing, or another program's file.
@Suite("outbox paths given by the user")
struct OutboxPathCommandTests {
    /// Every command that only reads or changes notes, against a mistyped path.
    @Test(arguments: [["queue", "list"], ["queue", "list", "--json"], ["queue", "show", "1"], ["history"],
                      ["queue", "retry", "1"], ["queue", "drop", "1", "--yes"]])
    func aMistypedOutboxPathCreatesNothing(_ command: [String]) throws {
        let home = try EnlogHome()
        let typo = home.directory.path("typo/x.sqlite")
        let result = try home.run(command + ["--db", typo])
        #expect(result.status == ExitStatusCode.noInput.rawValue, "\(result.standardError)")
        #expect(result.standardError == "enlog: error: no outbox at \(typo) (check the path given by --db or ENLOG_DB; enlog log creates an outbox)\n")
        #expect(!FileManager.default.fileExists(atPath: home.directory.path("typo")))
        #expect(!FileManager.default.fileExists(atPath: home.directory.path("data")))
    }

    @Test func configShowCreatesNothing() throws {
        let home = try EnlogHome()
        let typo = home.directory.path("typo/x.sqlite")
        let result = try home.run(["config", "show", "--db", typo])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.contains(typo))
        #expect(try FileManager.default.contentsOfDirectory(atPath: home.directory.url.path).isEmpty)
    }

    @Test func loggingIntoAnotherProgramsDatabaseIsRefused() throws {
        let home = try EnlogHome()
        let path = home.directory.path("app.sqlite")
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in try db.execute(sql: "CREATE TABLE customers (id INTEGER PRIMARY KEY)") }
        try queue.close()
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let result = try home.run(["log", "--at", "1,2", "--no-geocode", "--no-sync", "--db", path])
        #expect(result.status == ExitStatusCode.foreignDatabase.rawValue, "\(result.standardError)")
        #expect(result.standardErrorLines.count == 1)
        #expect(result.standardError.contains("is not an enlog outbox") && result.standardError.contains("customers"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }
}
