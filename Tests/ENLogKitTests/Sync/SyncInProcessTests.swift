import Foundation
import XCTest
import GRDB
import EvernoteAPI
import Capture
import Compose
import Outbox
import Diary
import Sync

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

    func engine(token: String = SyncInProcessTests.token, clock: @escaping @Sendable () -> Date = { Date() },
                options: SyncOptions = SyncOptions(), lookup: (any PlaceLookup)? = nil,
                renderer: NoteRenderer? = nil) -> SyncEngine {
        let evernote = self.evernote!
        return SyncEngine(outbox: outbox, noteStoreURL: "https://in-process.invalid/shard/s1/notestore", token: token,
                          makeClient: { _, token in NoteStoreClient(transport: evernote, authenticationToken: token) },
                          placeLookup: lookup, renderer: renderer, clock: clock, options: options)
    }

    @discardableResult
    func enqueue(_ count: Int, notebook: String? = nil, addressPending: Bool = false) async throws -> [OutboxNote] {
        var notes: [OutboxNote] = []
        for index in 0..<count {
            let fix = try Fix(latitude: 10 + Double(index) * 0.01, longitude: 20, timestamp: Date(), source: .manual)
            var draft = try NoteRenderer(style: NoteStyle(notebook: notebook)).render(fix: fix, place: nil)
            draft.addressPending = addressPending
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

    // Engine logic that needs no wire: moved here from SyncEngineTests, which started the
    // SDK-based server for them.

    func testNoteLeftSendingIsLookedUpThenCreatedOnce() async throws {
        let notes = try await enqueue(2)
        // A process died after markSending, before its request left: the note is not on the server.
        try await outbox.markSending(notes[0].id!)
        let summary = try await engine().run()
        XCTAssertEqual(summary.uploaded, 2)
        XCTAssertEqual(summary.alreadyPresent, 0)
        XCTAssertEqual(evernote.notes.count, 2)
    }

    func testSecondSyncIsRefusedWhileTheLockIsHeld() async throws {
        try await enqueue(1)
        var holder: SyncLock? = try SyncLock(databasePath: outbox.path)
        do {
            _ = try await engine().run()
            XCTFail("expected syncInProgress")
        } catch let SyncError.syncInProgress(_, pid) {
            XCTAssertEqual(pid, getpid())
        }
        XCTAssertNotNil(holder)
        XCTAssertTrue(evernote.notes.isEmpty)
        holder = nil   // released on deinit
        let run = try await engine().run()
        XCTAssertEqual(run.stoppedBecause, .completed)
        XCTAssertEqual(evernote.notes.count, 1)
    }

    func testDeferredAddressesAreResolvedOrReleased() async throws {
        struct Lookup: PlaceLookup {
            let works: Bool
            func place(for fix: Fix) async throws -> Place {
                if works { return Place(address: "1 Rue de Rivoli, Paris") }
                throw GeocodingError.noAddress
            }
        }
        let renderer = NoteRenderer(style: NoteStyle(setsPlaceName: true))
        let notes = try await enqueue(1, addressPending: true)
        let dry = try await engine(options: SyncOptions(dryRun: true)).run()
        XCTAssertEqual(dry.due, 0, "address pending: not due yet")
        let summary = try await engine(lookup: Lookup(works: true), renderer: renderer).run()
        XCTAssertEqual(summary.addressesResolved, 1)
        XCTAssertEqual(summary.uploaded, 1)
        let stored = try await outbox.note(id: notes[0].id!)
        XCTAssertEqual(stored.placeName, "1 Rue de Rivoli, Paris")
        XCTAssertTrue(stored.content.contains("Rivoli"))

        // Failing lookups: held for `addressAttempts` runs, then uploaded with coordinates only.
        let other = try await enqueue(1, addressPending: true)
        let options = SyncOptions(addressAttempts: 2)
        let a = try await engine(options: options, lookup: Lookup(works: false), renderer: renderer).run()
        XCTAssertEqual(a.uploaded, 0)
        let b = try await engine(options: options, lookup: Lookup(works: false), renderer: renderer).run()
        XCTAssertEqual(b.uploaded, 1)
        let released = try await outbox.note(id: other[0].id!)
        XCTAssertEqual(released.state, .synced)
        XCTAssertNil(released.placeName)
        // Gone without its address: with its coordinates alone, not "Address pending".
        XCTAssertFalse(released.content.contains("Address pending"), released.content)
        XCTAssertTrue(released.content.contains(">10.000000,20.000000</a>"), released.content)

        // No lookup at all (geocoding off): released at once, the same way.
        let unlooked = try await enqueue(1, addressPending: true)
        let before = try await outbox.note(id: unlooked[0].id!)
        XCTAssertTrue(before.content.contains("Address pending"), before.content)
        let c = try await engine(renderer: renderer).run()
        XCTAssertEqual(c.uploaded, 1)
        let plain = try await outbox.note(id: unlooked[0].id!)
        XCTAssertEqual(plain.state, .synced)
        XCTAssertFalse(plain.content.contains("Address pending"), plain.content)
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
