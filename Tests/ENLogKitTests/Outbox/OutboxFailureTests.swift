@testable import Capture
@testable import Compose
@testable import Outbox
import GRDB
import XCTest

/// How the outbox reports files it cannot use.
final class OutboxFailureTests: XCTestCase {
    var directory: TemporaryDirectory!

    override func setUpWithError() throws {
        directory = try TemporaryDirectory()
    }

    override func tearDown() {
        directory = nil
    }

    func fix() throws -> Fix {
        try Fix(latitude: 1, longitude: 2, timestamp: Date(), source: .manual)
    }

    func testGarbageFileIsReportedCorrupt() throws {
        let path = directory.path("outbox.sqlite")
        var generator = SystemRandomNumberGenerator()
        let garbage = Data((0..<8192).map { _ in UInt8.random(in: 0...255, using: &generator) })
        try garbage.write(to: URL(fileURLWithPath: path))
        XCTAssertThrowsError(try OutboxStore(path: path)) { error in
            guard case let .corrupt(reportedPath, detail)? = error as? OutboxError else { return XCTFail("\(error)") }
            XCTAssertEqual(reportedPath, path)
            XCTAssertEqual(detail, "file is not a database")
            XCTAssertEqual((error as! OutboxError).reason, "outbox \(path) is damaged: file is not a database")
            XCTAssertTrue((error as! OutboxError).recoverySuggestion!.contains("move \(path) aside"))
        }
    }

    func testDamagedPagesAreReportedCorrupt() async throws {
        let path = directory.path("outbox.sqlite")
        do {
            let store = try OutboxStore(path: path)
            for index in 0..<200 {
                try await store.enqueue(fix: try fix(), note: NoteDraft(title: "n\(index)",
                                        content: String(repeating: "x", count: 500)))
            }
            // Move everything into the main file so the damage below is what a reader sees.
            try await store.databaseWriter.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            }
        }
        // Keep the header valid; smash the pages after it.
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seek(toOffset: 4096)
        try handle.write(contentsOf: Data(repeating: 0xA5, count: 4096 * 8))
        try handle.close()

        do {
            let store = try OutboxStore(path: path)
            _ = try await store.notes(state: .pending)
            XCTFail("read a smashed database")
        } catch {
            guard case .corrupt = error else { return XCTFail("\(error)") }
        }
    }

    /// Works as root too: the connection itself is read-only, so no permission bypass applies.
    func testWritingThroughReadOnlyStoreIsReportedReadOnly() async throws {
        let path = directory.path("outbox.sqlite")
        let writer = try OutboxStore(path: path)
        try await writer.enqueue(fix: try fix(), note: NoteDraft(title: "t", content: "<en-note/>"))

        let reader = try OutboxStore(path: path, access: .read)
        let pending = try await reader.notes(state: .pending)
        XCTAssertEqual(pending.count, 1, "reading works")
        do {
            try await reader.enqueue(fix: try fix(), note: NoteDraft(title: "t", content: "<en-note/>"))
            XCTFail("wrote through a read-only connection")
        } catch {
            guard case let .readOnly(reportedPath, detail)? = error as? OutboxError else { return XCTFail("\(error)") }
            XCTAssertEqual(reportedPath, path)
            XCTAssertTrue(detail.contains("readonly"), detail)
        }
    }

    func testReadOnlyOpenOfMissingOrBlankOutbox() throws {
        let missing = directory.path("missing.sqlite")
        for access in [OutboxStore.Access.read, .change] {
            XCTAssertThrowsError(try OutboxStore(path: missing, access: access)) { error in
                XCTAssertEqual(error as? OutboxError, .missing(path: missing))
            }
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: missing), "read-only open creates nothing")
        let blank = directory.path("blank.sqlite")
        _ = FileManager.default.createFile(atPath: blank, contents: nil)
        XCTAssertThrowsError(try OutboxStore(path: blank, access: .read)) { error in
            XCTAssertEqual(error as? OutboxError, .notInitialized(path: blank))
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.url.path), ["blank.sqlite"])
    }

    /// A real read-only file system: a read-only bind mount of the outbox's directory. Needs
    /// root and mount(8); elsewhere the test is skipped (the non-root variant below covers it).
    func testReadOnlyFileSystemIsReportedReadOnly() async throws {
        guard getuid() == 0, let mount = TestPaths.executableInPath("mount"),
              let umount = TestPaths.executableInPath("umount") else {
            throw XCTSkip("needs root and mount(8)")
        }
        let source = directory.path("rw")
        let target = directory.path("ro")
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        do {
            let store = try OutboxStore(path: source + "/outbox.sqlite")
            try await store.enqueue(fix: try fix(), note: NoteDraft(title: "t", content: "<en-note/>"))
        }
        func run(_ tool: URL, _ arguments: [String]) throws -> Int32 { try Subprocess.run(tool, arguments).status }
        guard try run(mount, ["--bind", source, target]) == 0 else { throw XCTSkip("bind mounts not permitted here") }
        defer { _ = try? run(umount, [target]) }
        guard try run(mount, ["-o", "remount,bind,ro", target]) == 0 else { throw XCTSkip("read-only remount not permitted") }

        let path = target + "/outbox.sqlite"
        do {
            let store = try OutboxStore(path: path)
            try await store.enqueue(fix: try fix(), note: NoteDraft(title: "t", content: "<en-note/>"))
            XCTFail("wrote to a read-only file system")
        } catch {
            guard case .readOnly? = error as? OutboxError else { return XCTFail("\(error)") }
            print("read-only file system:", error)
        }
        XCTAssertThrowsError(try OutboxStore(path: target + "/sub/outbox.sqlite")) { error in
            XCTAssertEqual(error as? OutboxError,
                           .readOnly(path: target + "/sub/outbox.sqlite", detail: "cannot create directory \(target)/sub"))
        }
    }

    /// chmod does not stop root, so this runs only as an ordinary user.
    func testUnwritableDirectoryIsReportedReadOnly() throws {
        guard getuid() != 0 else { throw XCTSkip("root ignores directory permissions") }
        let locked = directory.path("locked")
        try FileManager.default.createDirectory(atPath: locked, withIntermediateDirectories: true)
        chmod(locked, 0o555)
        defer { chmod(locked, 0o755) }
        XCTAssertThrowsError(try OutboxStore(path: locked + "/outbox.sqlite")) { error in
            guard case .readOnly? = error as? OutboxError else { return XCTFail("\(error)") }
        }
    }

    func testPathThroughAFileCannotBeOpened() throws {
        let file = directory.path("plain-file")
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        XCTAssertThrowsError(try OutboxStore(path: file + "/outbox.sqlite")) { error in
            guard case let .cannotOpen(_, detail)? = error as? OutboxError else { return XCTFail("\(error)") }
            XCTAssertTrue(detail.hasPrefix("cannot create directory \(file)"), detail)
        }
        let asDirectory = directory.path("a-directory")
        try FileManager.default.createDirectory(atPath: asDirectory, withIntermediateDirectories: true)
        XCTAssertThrowsError(try OutboxStore(path: asDirectory)) { error in
            guard case .cannotOpen? = error as? OutboxError else { return XCTFail("\(error)") }
        }
    }

    func testWriterBlockedBeyondBusyTimeoutIsReportedLocked() async throws {
        let path = directory.path("outbox.sqlite")
        let store = try OutboxStore(path: path, busyTimeout: 0.3)

        // Another connection (as another process would) takes the write lock and keeps it.
        let other = try DatabaseQueue(path: path)
        let locked = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let committed = DispatchSemaphore(value: 0)
        let holder = Thread {
            try? other.inDatabase { db in
                try db.execute(sql: "BEGIN EXCLUSIVE")
                locked.signal()
                release.wait()
                try db.execute(sql: "COMMIT")
            }
            committed.signal()
        }
        holder.start()
        locked.wait()
        defer { release.signal() }

        let started = Date()
        do {
            try await store.enqueue(fix: try fix(), note: NoteDraft(title: "t", content: "<en-note/>"))
            XCTFail("wrote while another connection held an exclusive lock")
        } catch {
            XCTAssertEqual(error as? OutboxError, .locked(path: path, waited: 0.3))
            XCTAssertEqual((error as? OutboxError)?.reason, "outbox \(path) is locked by another process (waited 0.3 s)")
        }
        let waited = Date().timeIntervalSince(started)
        XCTAssertGreaterThanOrEqual(waited, 0.25, "the busy timeout was honoured")
        XCTAssertLessThan(waited, hangSeconds)
        release.signal()

        // Once the other writer is done, the same store writes again.
        committed.wait()
        try await store.enqueue(fix: try fix(), note: NoteDraft(title: "t", content: "<en-note/>"))
    }

    func testErrorsAreOneLineAndSayWhatToDo() {
        let errors: [OutboxError] = [
            .locked(path: "/p", waited: 5), .corrupt(path: "/p", detail: "file is not a database"),
            .readOnly(path: "/p", detail: "attempt to write a readonly database"),
            .cannotOpen(path: "/p", detail: "unable to open database file"), .diskFull(path: "/p"),
            .newerSchema(path: "/p"), .notInitialized(path: "/p"), .missing(path: "/p"),
            .foreign(path: "/p", detail: "it holds tables enlog never creates (customers)"),
        ]
        for error in errors {
            XCTAssertFalse(error.reason.contains("\n"), error.reason)
            XCTAssertNotNil(error.recoverySuggestion, error.reason)
            XCTAssertEqual(error.description, error.reason)
        }
    }
}
