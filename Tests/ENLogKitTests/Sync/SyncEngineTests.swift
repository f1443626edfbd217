import Foundation
import GRDB
import Synchronization
import XCTest
@testable import Support
import EvernoteAPI
import Network
import Capture
import Compose
@testable import Outbox
import Diary
import Sync

/// The SDK-based EDAM server plus an outbox in a scratch directory.
final class SyncFixture {
    static let token = "S=s1:U=1:E=sync:C=test:P=1:A=enlog:V=2:H=0123"
    let server: PythonServer
    let directory: TemporaryDirectory
    let outbox: OutboxStore
    let clock = TestClock(Date())

    init(extraTokens: [String] = []) throws {
        server = try PythonServer(script: "evernote_server.py",
                                  arguments: ["--token", Self.token] + extraTokens.flatMap { ["--token", $0] })
        directory = try TemporaryDirectory()
        outbox = try OutboxStore(path: directory.path("outbox.sqlite"))
    }

    var noteStoreURL: String { server.baseURL + "/shard/s1/notestore" }

    func engine(token: String = SyncFixture.token, options: SyncOptions = SyncOptions(),
                lookup: (any PlaceLookup)? = nil, renderer: NoteRenderer? = nil) -> SyncEngine {
        let clock = self.clock
        return SyncEngine(outbox: outbox, noteStoreURL: noteStoreURL, token: token, placeLookup: lookup,
                          renderer: renderer, clock: { clock.now }, options: options)
    }

    @discardableResult
    func enqueue(_ count: Int, notebook: String? = nil, addressPending: Bool = false, title: String = "Note") async throws -> [OutboxNote] {
        var notes: [OutboxNote] = []
        for i in 0..<count {
            let fix = try Fix(latitude: 48.85 + Double(i) * 0.001, longitude: 2.35, timestamp: Date(), source: .manual)
            let draft = NoteDraft(title: "\(title) \(i)",
                                  content: #"<?xml version="1.0" encoding="UTF-8"?><!DOCTYPE en-note SYSTEM "http://xml.evernote.com/pub/enml2.dtd"><en-note><div>note \#(i)</div></en-note>"#,
                                  notebookName: notebook, tags: ["LocationHistory"], addressPending: addressPending)
            notes.append(try await outbox.enqueue(fix: fix, note: draft, now: clock.now))
        }
        return notes
    }

    func control(_ pathAndQuery: String) async throws {
        _ = try await fetchJSON(server.baseURL + pathAndQuery)
    }

    func serverNotes() async throws -> [[String: Any]] {
        try await fetchJSON(server.baseURL + "/_test/notes") as! [[String: Any]]
    }

    func serverRequests() async throws -> [[String: Any]] {
        try await fetchJSON(server.baseURL + "/_test/requests") as! [[String: Any]]
    }

    /// enlog.id of every note on the server.
    func serverUIDs() async throws -> [String] {
        try await serverNotes().compactMap {
            let app = ($0["attributes"] as? [String: Any])?["applicationData"] as? [String: Any]
            return (app?["fullMap"] as? [String: String])?[SyncEngine.applicationDataKey]
        }
    }

    func states() async throws -> [OutboxNote.State: Int] { try await outbox.counts() }
}

final class SyncEngineTests: XCTestCase {
    func testDrainsTwentyNotesIntoANotebookCreatedByName() async throws {
        let f = try SyncFixture()
        let queued = try await f.enqueue(10, notebook: "Travel Log")
            + f.enqueue(10, notebook: "travel log")     // same notebook, other case
        let summary = try await f.engine().run()
        XCTAssertEqual(summary.uploaded, 20)
        XCTAssertEqual(summary.remaining, 0)
        XCTAssertEqual(summary.stoppedBecause, .completed)

        let notes = try await f.serverNotes()
        XCTAssertEqual(notes.count, 20)
        let uids = try await f.serverUIDs()
        XCTAssertEqual(Set(uids), Set(queued.map(\.uid)))
        XCTAssertEqual(Set(notes.compactMap { $0["notebookGuid"] as? String }).count, 1)
        let creates = try await f.serverRequests().filter { $0["method"] as? String == "createNotebook" }
        XCTAssertEqual(creates.count, 1, "notebook resolved once per run")
        for note in try await f.outbox.allNotes() {
            XCTAssertEqual(note.state, .synced)
            XCTAssertNotNil(note.guid)
        }
        // A second run has nothing to do and creates nothing.
        let again = try await f.engine().run()
        XCTAssertEqual(again.uploaded, 0)
        let value1 = try await f.serverNotes().count
        XCTAssertEqual(value1, 20)
    }

    func testRateLimitStopsTheRunAndIsHonouredLater() async throws {
        let f = try SyncFixture()
        try await f.enqueue(5)
        try await f.control("/_test/inject?kind=system&code=RATE_LIMIT_REACHED&duration=600&method=createNote")
        let first = try await f.engine().run()
        XCTAssertEqual(first.stoppedBecause, .rateLimited)
        XCTAssertEqual(first.uploaded, 0)
        XCTAssertEqual(first.failed, 1, "the rate-limited note is counted (issue 8)")
        XCTAssertEqual(first.remaining, 5)
        XCTAssertEqual(first.verdict, .tryLater)
        let notBefore = try XCTUnwrap(first.notBefore)
        XCTAssertEqual(notBefore.timeIntervalSince(f.clock.now), 600, accuracy: 5)

        let requestsBefore = try await f.serverRequests().count
        let second = try await f.engine().run()
        XCTAssertEqual(second.stoppedBecause, .rateLimited)
        XCTAssertEqual(second.notBefore!.timeIntervalSince1970, notBefore.timeIntervalSince1970, accuracy: 0.01)
        let value2 = try await f.serverRequests().count
        XCTAssertEqual(value2, requestsBefore, "no call while the hold lasts")
        XCTAssertEqual(second.remaining, 5)

        f.clock.advance(601)
        let third = try await f.engine().run()
        XCTAssertEqual(third.stoppedBecause, .completed)
        XCTAssertEqual(third.uploaded, 5)
        let value3 = try await f.serverNotes().count
        XCTAssertEqual(value3, 5)
    }

    func testExpiredOrInvalidTokenKeepsTheQueue() async throws {
        let f = try SyncFixture()
        try await f.enqueue(3)
        try await f.control("/_test/inject?kind=user&code=AUTH_EXPIRED&parameter=authenticationToken&method=createNote")
        do {
            _ = try await f.engine().run()
            XCTFail("expected an error")
        } catch let error as SyncError {
            guard case .reauthenticationRequired = error else { return XCTFail("\(error)") }
            XCTAssertEqual(error.recoverySuggestion?.contains("enlog auth login"), true)
        }
        do {
            _ = try await f.engine(token: "S=s1:U=9:wrong").run()
            XCTFail("expected an error")
        } catch SyncError.reauthenticationRequired {}
        let states = try await f.states()
        XCTAssertEqual((states[.pending] ?? 0) + (states[.failed] ?? 0), 3)
        let value4 = try await f.serverNotes().count
        XCTAssertEqual(value4, 0)
        let after = try await f.engine().run()   // signed in again
        XCTAssertEqual(after.uploaded, 3)
    }

    func testENMLRejectionParksThatNoteOnly() async throws {
        let f = try SyncFixture()
        let notes = try await f.enqueue(4)
        let bad = notes[1]
        try await f.control("/_test/inject?kind=user&code=ENML_VALIDATION&method=createNote&count=5"
                            + "&parameter=Element%20type%20script&match=\(bad.uid)")
        let summary = try await f.engine().run()
        XCTAssertEqual(summary.uploaded, 3)
        XCTAssertEqual(summary.failed, 1)
        XCTAssertEqual(summary.parked, 1)
        let stored = try await f.outbox.note(id: bad.id!)
        XCTAssertEqual(stored.state, .parked)
        XCTAssertTrue(stored.lastError?.contains("Element type script") == true, stored.lastError ?? "")
        let value5 = try await f.serverNotes().count
        XCTAssertEqual(value5, 3)
    }

    func testHTTP503FailsWithRetryTimeThenSucceeds() async throws {
        let f = try SyncFixture()
        let notes = try await f.enqueue(3)
        try await f.control("/_test/fail?status=503&count=1")
        let first = try await f.engine().run()
        XCTAssertEqual(first.uploaded, 2)
        XCTAssertEqual(first.failed, 1)
        let failed = try await f.outbox.note(id: notes[0].id!)
        XCTAssertEqual(failed.state, .failed)
        let retryAt = try XCTUnwrap(failed.nextAttemptAt)
        XCTAssertGreaterThanOrEqual(retryAt.timeIntervalSince(f.clock.now), 14)   // 30 s · [0.5, 1]
        XCTAssertLessThanOrEqual(retryAt.timeIntervalSince(f.clock.now), 31)

        let value6 = try await f.engine().run().uploaded
        XCTAssertEqual(value6, 0, "not due yet")
        f.clock.advance(31)
        let second = try await f.engine().run()
        XCTAssertEqual(second.uploaded, 1)
        XCTAssertEqual(second.remaining, 0)
        let value7 = try await f.serverNotes().count
        XCTAssertEqual(value7, 3)
    }

    func testConnectionDroppedAfterStoreIsFoundByLookup() async throws {
        let f = try SyncFixture()
        let notes = try await f.enqueue(3, notebook: "Trips")
        try await f.control("/_test/inject?kind=drop&method=createNote&match=\(notes[1].uid)")
        let first = try await f.engine().run()
        XCTAssertEqual(first.uploaded, 2)
        XCTAssertEqual(first.failed, 1)
        let value8 = try await f.serverNotes().count
        XCTAssertEqual(value8, 3, "the server stored it anyway")
        f.clock.advance(3600)
        let second = try await f.engine().run()
        XCTAssertEqual(second.alreadyPresent, 1)
        XCTAssertEqual(second.uploaded, 0)
        let uids = try await f.serverUIDs()
        XCTAssertEqual(uids.count, 3)
        XCTAssertEqual(Set(uids).count, 3, "no duplicate")
        let local = try await f.outbox.note(id: notes[1].id!)
        XCTAssertEqual(local.state, .synced)
        let serverGuid = try await f.serverNotes().first { ($0["title"] as? String) == notes[1].title }?["guid"] as? String
        XCTAssertEqual(local.guid, serverGuid)
        let lookups = try await f.serverRequests().filter { $0["method"] as? String == "findNotesMetadata" }
        XCTAssertEqual(lookups.count, 1)
    }

    func testGarbageReplyIsAmbiguousAndResolvedByLookup() async throws {
        let f = try SyncFixture()
        try await f.enqueue(2)
        try await f.control("/_test/inject?kind=garbage&method=createNote")
        let first = try await f.engine().run()
        XCTAssertEqual(first.failed, 1)
        XCTAssertEqual(first.uploaded, 1)
        f.clock.advance(3600)
        let second = try await f.engine().run()
        XCTAssertEqual(second.alreadyPresent, 1)
        let value9 = try await f.serverNotes().count
        XCTAssertEqual(value9, 2)
        let value10 = try await f.states()[.synced]
        XCTAssertEqual(value10, 2)
    }

    func testRepeatedFailuresEndParked() async throws {
        let f = try SyncFixture()
        let notes = try await f.enqueue(1)
        try await f.control("/_test/inject?kind=system&code=INTERNAL_ERROR&method=createNote&count=10")
        for _ in 0..<3 {
            _ = try await f.engine(options: SyncOptions(maxAttempts: 3)).run()
            f.clock.advance(7 * 3600)
        }
        let value12 = try await f.outbox.note(id: notes[0].id!).state
        XCTAssertEqual(value12, .parked)
    }
}

/// The re-send hazard at the transport: libcurl sends a request again on a new connection when
/// a reused keep-alive connection dies before any reply byte, POST included.
final class SyncTransportTests: XCTestCase {
    /// enlog's bodies cannot be rewound: the dropped createNote fails as a lost connection
    /// (ambiguous, looked up later) instead of going out twice.
    func testAReusedConnectionNeverSendsADroppedCreateNoteTwice() async throws {
        let f = try SyncFixture()
        let shared = NoteStoreClient(transport: ThriftHTTPTransport(url: f.noteStoreURL, client: HTTPClient()),
                                     authenticationToken: SyncFixture.token)
        _ = try await shared.listNotebooks()          // opens the keep-alive connection
        try await f.control("/_test/inject?kind=drop&method=createNote")
        do {
            _ = try await shared.createNote(EDAM.Note(title: "Once", content: "<en-note/>"))
            XCTFail("expected connectionLost")
        } catch HTTPError.connectionLost {}
        let count = try await f.serverNotes().count
        XCTAssertEqual(count, 1, "stored once, not sent again")
        _ = try await shared.createNote(EDAM.Note(title: "Next", content: "<en-note/>"))   // a new connection
        let after = try await f.serverNotes().count
        XCTAssertEqual(after, 2)
    }

    /// libcurl's default (a body it can rewind) duplicates the note, and the response says the
    /// request went out twice: what `SyncRun.send` settles with a lookup.
    func testARewindableBodyIsSentTwiceAndTheResendIsReported() async throws {
        let f = try SyncFixture()
        let resent = Mutex(0)
        let transport = ThriftHTTPTransport(url: f.noteStoreURL,
                                            client: HTTPClient(configuration: HTTPConfiguration(rewindableBodies: true)),
                                            onResent: { resent.withLock { $0 += 1 } })
        let shared = NoteStoreClient(transport: transport, authenticationToken: SyncFixture.token)
        _ = try await shared.listNotebooks()
        try await f.control("/_test/inject?kind=drop&method=createNote")
        _ = try await shared.createNote(EDAM.Note(title: "Once", content: "<en-note/>"))
        let count = try await f.serverNotes().count
        XCTAssertEqual(count, 2, "libcurl's silent retry on a reused connection duplicated the note")
        XCTAssertEqual(resent.withLock { $0 }, 1)
    }
}

final class SyncStopTests: XCTestCase {
    func testNetworkDownStopsTheRunAndKeepsNotes() async throws {
        let f = try SyncFixture()
        try await f.enqueue(3)
        // A port nobody listens on (the server's own, after it stops).
        let url = f.noteStoreURL
        f.server.stop()
        let engine = SyncEngine(outbox: f.outbox, noteStoreURL: url, token: SyncFixture.token)
        let summary = try await engine.run()
        XCTAssertEqual(summary.stoppedBecause, .networkDown)
        XCTAssertEqual(summary.failed, 1, "stops after the first note")
        XCTAssertEqual(summary.remaining, 3)
        let value = try await f.states()[.pending]
        XCTAssertEqual(value, 2)
    }

    func testCancellationStopsBetweenNotesAndTheNoteInFlightIsResolvedNextTime() async throws {
        let f = try SyncFixture()
        let notes = try await f.enqueue(5)
        try await f.control("/_test/inject?kind=delay&ms=1500&method=createNote&match=\(notes[2].uid)")
        let engine = f.engine()
        let task = Task { try await engine.run() }
        // Cancel while the third note's request is at the (slow) server: the server records it.
        try await waitUntil("the third note's createNote reached the server") {
            try await f.serverRequests().contains { $0["injected"] as? String == "delay" }
        }
        task.cancel()
        let summary = try await task.value
        XCTAssertEqual(summary.stoppedBecause, .cancelled)
        XCTAssertEqual(summary.uploaded, 2)
        let inFlight = try await f.outbox.note(id: notes[2].id!)
        XCTAssertEqual(inFlight.state, .sending, "left sending; the next run looks it up")
        try await waitUntil("the server finished storing it") { try await f.serverUIDs().contains(notes[2].uid) }
        let next = try await f.engine().run()
        XCTAssertEqual(next.alreadyPresent, 1)
        XCTAssertEqual(next.uploaded, 2)
        let uids = try await f.serverUIDs()
        XCTAssertEqual(uids.count, 5)
        XCTAssertEqual(Set(uids).count, 5)
    }
}

final class SyncRequeueTests: XCTestCase {
    /// A note put back to pending by `requeueInterrupted` (not by the engine) after Evernote
    /// stored it is still looked up, not created again.
    func testRequeuedInterruptedNoteIsLookedUp() async throws {
        let f = try SyncFixture()
        let notes = try await f.enqueue(1)
        try await f.control("/_test/inject?kind=drop&method=createNote")
        _ = try await f.engine().run()
        // Simulate the other path: the note is `sending` again and someone requeues it.
        try await f.outbox.databaseWriter.write { db in
            try db.execute(sql: "UPDATE note SET state = 'sending', lastAttemptAt = ? WHERE id = ?",
                           arguments: [Date(timeIntervalSince1970: 0), notes[0].id!])
            try db.execute(sql: "DELETE FROM syncNote")
        }
        try await f.outbox.requeueInterrupted(olderThan: 60)
        let summary = try await f.engine().run()
        XCTAssertEqual(summary.alreadyPresent, 1)
        let count = try await f.serverNotes().count
        XCTAssertEqual(count, 1)
    }
}
