import Foundation
import GRDB
import Synchronization
import XCTest
@testable import Capture
@testable import Outbox
@testable import Serve

/// The receiver's group commit (`PhoneCommits`): requests that come while a transaction commits
/// go into the next one together, each request's points whole, each answered with what became of its own.
final class PhoneCommitsTests: XCTestCase {
    /// Counts the transactions committed on the writer. (The points go in through SQLite's C
    /// API, which GRDB's change events do not see; its commit notices it gives all the same.)
    final class Commits: TransactionObserver, Sendable {
        private let count = Mutex(0)
        func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { false }
        func databaseDidChange(with event: DatabaseEvent) {}
        func databaseDidCommit(_ db: Database) { count.withLock { $0 += 1 } }
        func databaseDidRollback(_ db: Database) {}
        var commits: Int { count.withLock { $0 } }
    }

    final class Gate: Sendable {
        private let open = Mutex(false)
        func release() { open.withLock { $0 = true } }
        var isOpen: Bool { open.withLock { $0 } }
    }

    func testRequestsThatComeWhileACommitSyncsShareTheNextTransaction() async throws {
        let directory = try TemporaryDirectory()
        let store = try OutboxStore(path: directory.path("outbox.sqlite"))
        let observer = Commits()
        try await store.databaseWriter.write { db in db.add(transactionObserver: observer, extent: .databaseLifetime) }
        let commits = PhoneCommits(outbox: store)
        let before = observer.commits
        let base = Date(timeIntervalSince1970: 1_795_000_000)
        @Sendable func points(_ request: Int) throws -> OutboxStore.PhonePoints {
            let fixes = try (0..<3).map { second in
                try Fix(latitude: 52 + Double(request) / 1000, longitude: 13.4, timestamp: base.addingTimeInterval(Double(request * 10 + second)), source: .phone)
            }
            // Request 7 sends request 0's points again (committed before): nothing of it is new.
            return request == 7 ? try points(0) : OutboxStore.PhonePoints(fixes, device: "phone\(request % 2)")
        }
        func waitFor(_ done: () -> Bool) async throws {
            for _ in 0..<1200 where !done() { try await Task.sleep(for: .milliseconds(50)) }
        }

        // The writer held busy: the first request's transaction waits for it, alone.
        let gate = Gate()
        let blocker = Task { try await store.databaseWriter.write { _ in while !gate.isOpen { usleep(1000) } } }
        let requests = 20
        let results = try await withThrowingTaskGroup(of: (Int, OutboxStore.PhoneStoreResult).self) { group in
            group.addTask { (0, try await commits.store(try points(0))) }
            try await waitFor { commits.queue == (0, true) }
            XCTAssertTrue(commits.queue == (0, true), "the first request is being committed")
            for request in 1..<requests {
                group.addTask { (request, try await commits.store(try points(request))) }
            }
            try await waitFor { commits.queue.waiting == requests - 1 }
            XCTAssertEqual(commits.queue.waiting, requests - 1, "the others wait for the next transaction")
            gate.release()
            var results = [Int: OutboxStore.PhoneStoreResult]()
            for try await (request, result) in group { results[request] = result }
            return results
        }
        try await blocker.value
        XCTAssertEqual(observer.commits - before, 3, "the writer's holder, the lone first request, then the nineteen that came meanwhile")
        try await waitFor { commits.queue == (0, false) }
        XCTAssertTrue(commits.queue == (0, false), "nothing waits, nothing is being committed")

        let rows = try await store.databaseWriter.read { db in
            try Row.fetchAll(db, sql: "SELECT latitude, device FROM fix").map { ($0["latitude"] as Double, $0["device"] as String) }
        }
        XCTAssertEqual(rows.count, (requests - 1) * 3, "request 7's points were there already")
        for request in 0..<requests {
            let result = try XCTUnwrap(results[request])
            let own = rows.filter { abs($0.0 - (52 + Double(request) / 1000)) < 1e-9 }
            if request == 7 {
                XCTAssertEqual(result.alreadyThere, 3)
                XCTAssertEqual(result.added, 0)
                continue
            }
            XCTAssertEqual(result.added, 3, "request \(request)")
            XCTAssertEqual(own.count, 3, "request \(request)'s own rows")
            XCTAssertEqual(Set(own.map(\.1)), ["phone\(request % 2)"])
        }

        // Alone, a request is committed at once, in a transaction of its own.
        let alone = try await commits.store(try points(30))
        XCTAssertEqual(alone.added, 3)
        XCTAssertEqual(observer.commits - before, 4)
    }
}
