import Foundation
import GRDB
import Synchronization
import XCTest
@testable import Support
@testable import Outbox

/// Several processes using a new outbox for the first time: one sets it up (switches the file to
/// WAL, creates the schema) while the others wait for it, however long that takes on a loaded
/// machine, as long as the process setting it up is working.
final class OutboxFirstUseTests: XCTestCase {
    /// Another enlog in the middle of setting up a new outbox: it holds the migration lock and is
    /// switching the file to WAL (a RESERVED lock in rollback mode). SQLite answers a second
    /// connection's own switch with SQLITE_BUSY at once, without its busy handler, so an opener
    /// that does not wait for the set-up failed with `locked` however long its busy timeout.
    func testAnOpenerWaitsForAnotherProcessSwitchingTheNewFileToWAL() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("outbox.sqlite")
        var configuration = Configuration()
        configuration.allowsUnsafeTransactions = true   // the transaction spans two accesses
        let switching = try DatabaseQueue(path: path, configuration: configuration)
        try switching.writeWithoutTransaction { try $0.execute(sql: "BEGIN IMMEDIATE") }
        let lock = try FileLock(path + ".migrate-lock")

        let opened = OpenResult()
        Thread.detachNewThread {
            opened.set(Result { () throws(OutboxError) in try OutboxStore(path: path, busyTimeout: 60) })
        }
        // Until the opener either gives up or is seen waiting for the set-up (it has the lock
        // file open beside ours): an event, not a sleep.
        try blockUntil("the opener waits for the migration lock or fails") {
            opened.value != nil || openDescriptors(of: path + ".migrate-lock") > 1
        }
        if case .failure(let error)? = opened.value {
            return XCTFail("gave up while another process was setting the outbox up: \(error)")
        }
        try switching.writeWithoutTransaction { try $0.execute(sql: "ROLLBACK") }
        try switching.close()
        lock.release()
        try blockUntil("the opener finishes") { opened.value != nil }
        guard case .success(let store)? = opened.value else { return XCTFail("\(String(describing: opened.value))") }
        XCTAssertEqual(store.path, path)
    }

    /// A set-up that takes longer than the busy timeout (a loaded machine) is waited for as long
    /// as its holder works: here a process holding the migration lock spins for ten times the timeout.
    func testAnOpenerWaitsForASetUpThatOutlastsTheBusyTimeoutWhileItsHolderWorks() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("outbox.sqlite")
        let holder = try lockHolder(path, spinSeconds: 3)
        let store = try OutboxStore(path: path, busyTimeout: 0.3)
        XCTAssertEqual(holder.wait(), 0, "opened only once the holder let go")
        XCTAssertEqual(store.path, path)
        let notes = try await store.allNotes()
        XCTAssertEqual(notes.count, 0)
    }

    /// ... but a holder that makes no progress (stopped) still fails the waiters after the busy
    /// timeout, as a stuck writer does.
    func testAStoppedHolderFailsTheOpenerAfterTheBusyTimeout() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("outbox.sqlite")
        let holder = try lockHolder(path, spinSeconds: 600)
        defer { holder.kill() }
        kill(holder.pid, SIGSTOP)
        XCTAssertThrowsError(try OutboxStore(path: path, busyTimeout: 0.3)) { error in
            guard case .locked = error as? OutboxError else { return XCTFail("\(error)") }
        }
    }

    /// A process that takes the outbox's migration lock as enlog does (and says so on its stdout),
    /// then works (spins) for `spinSeconds` before letting go.
    private func lockHolder(_ databasePath: String, spinSeconds: Int) throws -> ChildProcess {
        let script = """
            import fcntl, os, sys, time
            lock = open(sys.argv[1], "a+")
            fcntl.flock(lock, fcntl.LOCK_EX)
            lock.seek(0); lock.truncate(); lock.write("%d\\n" % os.getpid()); lock.flush()
            print("locked", flush=True)
            end = time.monotonic() + float(sys.argv[2])
            while time.monotonic() < end:
                pass
            """
        let python = try PythonServer.interpreter(stdlibOnly: true)
        let holder = try ChildProcess(python, ["-c", script, databasePath + ".migrate-lock", "\(spinSeconds)"])
        XCTAssertTrue(holder.waitForOutput(containing: "locked"), holder.output)
        return holder
    }
}

/// An exclusive `flock` this process holds on `path` until `release()`.
private final class FileLock {
    private let descriptor: Int32
    init(_ path: String) throws {
        descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0, flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { throw POSIXError(.EAGAIN) }
    }
    func release() { close(descriptor) }
}

/// What a background opener ended with.
private final class OpenResult: Sendable {
    private let result = Mutex<Result<OutboxStore, OutboxError>?>(nil)
    var value: Result<OutboxStore, OutboxError>? { result.withLock { $0 } }
    func set(_ value: Result<OutboxStore, OutboxError>) { result.withLock { $0 = value } }
}

/// How many of this process's descriptors are open on `path`.
private func openDescriptors(of path: String) -> Int {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return entries.filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == path }.count
}
