import Foundation
import XCTest
import GRDB
@testable import ENLogKit

/// The sync engine against the in-process account: fast, no process, same exactly-once rules.
final class SyncInProcessTests: XCTestCase {
    static let token = "S=s1:U=1:E=fast:C=test:P=1:A=enlog:V=2:H=mem"
    var directory: TemporaryDirectory!
    var outbox: OutboxStore!
    var evernote: InProcessEvernote!

    override func setUpWithError() throws {
        directory = try TemporaryDirectory()
        outbox = try OutboxStore(path: directory.path("outbox.sqlite"))
        evernote = InProcessEvernote(token: Self.token)
    }

    func engine(token: String = SyncInProcessTests.token, clock: @escaping @Sendable () -> Date = { Date() }) -> SyncEngine {
        let evernote = self.evernote!
        return SyncEngine(outbox: outbox, noteStoreURL: "https://in-process.invalid/shard/s1/notestore", token: token,
                          makeClient: { _, token in NoteStoreClient(transport: evernote, authenticationToken: token) },
                          clock: clock)
    }

    @discardableResult
    func enqueue(_ count: Int, notebook: String? = nil) async throws -> [OutboxNote] {
        var notes: [OutboxNote] = []
        for index in 0..<count {
            let fix = try Fix(latitude: 10 + Double(index) * 0.01, longitude: 20, timestamp: Date(), source: .manual)
            let draft = try NoteRenderer(style: NoteStyle(notebook: notebook)).render(fix: fix, place: nil)
            notes.append(try await outbox.enqueue(fix: fix, note: draft))
        }
        return notes
    }

    func testDrainsTheQueueIntoANotebookCreatedByName() async throws {
        let queued = try await enqueue(50, notebook: "Diary")
        let summary = try await engine().run()
        XCTAssertEqual(summary.uploaded, 50)
        XCTAssertEqual(summary.remaining, 0)
        XCTAssertEqual(evernote.notes.count, 50)
        XCTAssertEqual(Set(evernote.notes.compactMap { $0.attributes?.applicationData?.fullMap?[SyncEngine.applicationDataKey] }),
                       Set(queued.map(\.uid)))
        XCTAssertEqual(Set(evernote.notes.compactMap(\.notebookGuid)).count, 1, "one notebook, created once")
        XCTAssertEqual(evernote.notes.first?.attributes?.latitude, 10)
        let again = try await engine().run()
        XCTAssertEqual(again.uploaded, 0)
        XCTAssertEqual(evernote.notes.count, 50)
    }

    func testALostReplyIsFoundByLookupNotCreatedTwice() async throws {
        try await enqueue(5)
        evernote.dropReply(toCreate: 3)
        let first = try await engine().run()
        XCTAssertEqual(evernote.notes.count, 5, "the service stored the third note anyway")
        XCTAssertGreaterThanOrEqual(first.failed, 1)
        let second = try await engine(clock: { Date().addingTimeInterval(7 * 3600) }).run()
        XCTAssertEqual(second.alreadyPresent, 1)
        XCTAssertEqual(evernote.notes.count, 5, "no duplicate")
        let synced = try await outbox.counts()[.synced]
        XCTAssertEqual(synced, 5)
    }

    func testAWrongTokenStopsTheRunAndKeepsTheQueue() async throws {
        try await enqueue(3)
        do {
            _ = try await engine(token: "S=s1:U=1:wrong").run()
            XCTFail("a wrong token must stop the sync")
        } catch let error as SyncError {
            guard case .reauthenticationRequired = error else { return XCTFail("\(error)") }
        }
        XCTAssertTrue(evernote.notes.isEmpty)
        let counts = try await outbox.counts()
        XCTAssertEqual((counts[.pending] ?? 0) + (counts[.failed] ?? 0), 3)
    }
}

extension SyncInProcessTests {
    /// Issue 8: `enlog queue drop ID` while a sync runs aborted the sync (`noteNotFound` from
    /// `markSending`, exit 2). A note dropped meanwhile is skipped; the others go.
    func testANoteDroppedDuringTheSyncIsSkipped() async throws {
        let queued = try await enqueue(5)
        let path = outbox.path
        let victim = queued[3].id!
        let engine = SyncEngine(
            outbox: outbox, noteStoreURL: "https://in-process.invalid/shard/s1/notestore", token: Self.token,
            makeClient: { [evernote] _, token in NoteStoreClient(transport: evernote!, authenticationToken: token) },
            options: SyncOptions(observer: { event in
                // After the first upload, another process drops a note this run has already listed.
                guard case .note(let id, .uploaded, _) = event, id == queued[0].id else { return }
                // What `enlog queue drop` commits, from a connection of its own (as another process).
                let other = try! DatabaseQueue(path: path)
                try! other.write { try $0.execute(sql: "DELETE FROM note WHERE id = ? AND state != 'sending'", arguments: [victim]) }
            }))
        let summary = try await engine.run()
        XCTAssertEqual(summary.uploaded, 4)
        XCTAssertEqual(summary.remaining, 0)
        XCTAssertEqual(summary.verdict, .complete)
        XCTAssertEqual(evernote.notes.count, 4)
    }
}
