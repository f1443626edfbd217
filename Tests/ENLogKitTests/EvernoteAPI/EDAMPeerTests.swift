import Foundation
import XCTest
@testable import EvernoteAPI

/// Cross-checks our bytes against the PyPI `evernote3` SDK's generated classes and Thrift
/// runtime (Tests/support/edam_peer.py). Needs `ENLOG_PYTHON` = a python with evernote3.
final class EDAMPeerTests: XCTestCase {
    private var python: String!
    private let script = Fixtures.support.appendingPathComponent("edam_peer.py").path
    private var workDir: URL!

    override func setUpWithError() throws {
        guard let python = ProcessInfo.processInfo.environment["ENLOG_PYTHON"], !python.isEmpty else {
            // In CI the peer must run: scripts/test always provides it there.
            if ProcessInfo.processInfo.environment["CI"] == "true" {
                XCTFail("ENLOG_PYTHON is not set in CI; run the suite through scripts/test")
            }
            throw XCTSkip("set ENLOG_PYTHON to a python with evernote3 installed to run the SDK cross-check")
        }
        self.python = python
        workDir = FileManager.default.temporaryDirectory.appendingPathComponent("enlog-peer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: workDir, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        if let workDir { try? FileManager.default.removeItem(at: workDir) }
    }

    private func runPeer(_ arguments: [String]) throws -> Foundation.Data {
        let result = try Subprocess.run(URL(fileURLWithPath: python), [script] + arguments)
        guard result.status == 0 else {
            XCTFail("edam_peer.py \(arguments) failed: \(result.standardError)")
            throw CocoaError(.executableLoad)
        }
        return Foundation.Data(result.standardOutput.utf8)
    }

    /// Sends one call through a real client and returns what the Python SDK decoded from it.
    private func peerDecodedCall(_ make: (NoteStoreClient) async throws -> Void) async throws -> [String: Any] {
        let transport = ScriptedTransport { request in
            let header = try callHeader(request)
            return replyMessage(header.name, seqid: header.seqid) { w in
                switch header.name {
                case "findNotesMetadata": w.writeField(0, EDAM.NotesMetadataList(startIndex: 0, totalNotes: 0, notes: []))
                default: w.writeField(0, EDAM.Note())
                }
            }
        }
        try await make(NoteStoreClient(transport: transport, authenticationToken: "S=s1:U=1:fake"))
        let file = workDir.appendingPathComponent("call.bin")
        try Foundation.Data(transport.requests[0]).write(to: file)
        let json = try runPeer(["decode-call", file.path])
        return try XCTUnwrap(JSONSerialization.jsonObject(with: json) as? [String: Any])
    }

    private func hex(_ value: Any?) -> [UInt8]? {
        guard let hex = (value as? [String: Any])?["hex"] as? String else { return nil }
        return bytes(hex)
    }

    private func int(_ value: Any?) -> Int64? { (value as? NSNumber)?.int64Value }
    private func double(_ value: Any?) -> Double? { (value as? NSNumber)?.doubleValue }

    func testSDKDecodesOurCreateNoteCall() async throws {
        let note = Samples.fullNote
        let decoded = try await peerDecodedCall { try await _ = $0.createNote(note) }
        XCTAssertEqual(decoded["name"] as? String, "createNote")
        XCTAssertEqual(int(decoded["type"]), 1)
        XCTAssertEqual(int(decoded["seqid"]), 1)
        XCTAssertEqual(int(decoded["leftover"]), 0)
        let args = try XCTUnwrap(decoded["args"] as? [String: Any])
        XCTAssertEqual(args["authenticationToken"] as? String, "S=s1:U=1:fake")
        let n = try XCTUnwrap(args["note"] as? [String: Any])

        XCTAssertEqual(n["guid"] as? String, note.guid)
        XCTAssertEqual(n["title"] as? String, note.title)
        XCTAssertEqual(n["content"] as? String, note.content)
        XCTAssertEqual(hex(n["contentHash"]), note.contentHash)
        XCTAssertEqual(int(n["contentLength"]), 71)
        XCTAssertEqual(int(n["created"]), note.created)
        XCTAssertEqual(int(n["updated"]), note.updated)
        XCTAssertEqual(int(n["deleted"]), note.deleted)
        XCTAssertEqual(n["active"] as? Bool, true)
        XCTAssertEqual(int(n["updateSequenceNum"]), 12)
        XCTAssertEqual(n["notebookGuid"] as? String, note.notebookGuid)
        XCTAssertEqual(n["tagGuids"] as? [String], note.tagGuids)
        XCTAssertEqual(n["tagNames"] as? [String], note.tagNames)

        let a = try XCTUnwrap(n["attributes"] as? [String: Any])
        let attributes = note.attributes!
        XCTAssertEqual(int(a["subjectDate"]), attributes.subjectDate)
        XCTAssertEqual(double(a["latitude"]), attributes.latitude)
        XCTAssertEqual(double(a["longitude"]), attributes.longitude)
        XCTAssertEqual(double(a["altitude"]), attributes.altitude)
        for (key, value) in [("author", attributes.author), ("source", attributes.source), ("sourceURL", attributes.sourceURL),
                             ("sourceApplication", attributes.sourceApplication), ("placeName", attributes.placeName),
                             ("contentClass", attributes.contentClass), ("lastEditedBy", attributes.lastEditedBy)] {
            XCTAssertEqual(a[key] as? String, value, key)
        }
        XCTAssertEqual(int(a["shareDate"]), attributes.shareDate)
        XCTAssertEqual(int(a["reminderOrder"]), attributes.reminderOrder)
        XCTAssertEqual(int(a["reminderDoneTime"]), attributes.reminderDoneTime)
        XCTAssertEqual(int(a["reminderTime"]), attributes.reminderTime)
        XCTAssertEqual(int(a["creatorId"]), 17)
        XCTAssertEqual(int(a["lastEditorId"]), 18)
        XCTAssertEqual(a["classifications"] as? [String: String], attributes.classifications)
        let appData = try XCTUnwrap(a["applicationData"] as? [String: Any])
        XCTAssertEqual(appData["keysOnly"] as? [String], ["a.b.c"])
        XCTAssertEqual(appData["fullMap"] as? [String: String], attributes.applicationData?.fullMap)
        // Fields 29–31 are newer than the SDK's EDAM 1.25: it must have skipped them cleanly.
        XCTAssertNil(a["noteTitleQuality"])

        let resources = try XCTUnwrap(n["resources"] as? [[String: Any]])
        XCTAssertEqual(resources.count, 2)
        let r = resources[0], resource = note.resources![0]
        XCTAssertEqual(r["guid"] as? String, resource.guid)
        XCTAssertEqual(r["noteGuid"] as? String, resource.noteGuid)
        XCTAssertEqual(r["mime"] as? String, "image/png")
        XCTAssertEqual(int(r["width"]), 500)
        XCTAssertEqual(int(r["height"]), 300)
        XCTAssertEqual(int(r["duration"]), -1)
        XCTAssertEqual(r["active"] as? Bool, true)
        XCTAssertEqual(int(r["updateSequenceNum"]), 99)
        let data = try XCTUnwrap(r["data"] as? [String: Any])
        XCTAssertEqual(hex(data["bodyHash"]), Array(0..<16))
        XCTAssertEqual(int(data["size"]), 4)
        XCTAssertEqual(hex(data["body"]), [0, 1, 254, 255])
        XCTAssertEqual(hex((r["recognition"] as? [String: Any])?["body"]), Array("<recoIndex/>".utf8))
        XCTAssertEqual(hex((r["alternateData"] as? [String: Any])?["body"]), [])
        let ra = try XCTUnwrap(r["attributes"] as? [String: Any])
        XCTAssertEqual(ra["sourceURL"] as? String, "file:///tmp/map.png")
        XCTAssertEqual(int(ra["timestamp"]), 9)
        XCTAssertEqual(double(ra["latitude"]), -33.5)
        XCTAssertEqual(double(ra["longitude"]), 151.25)
        XCTAssertEqual(double(ra["altitude"]), 0)
        XCTAssertEqual(ra["cameraMake"] as? String, "Make")
        XCTAssertEqual(ra["cameraModel"] as? String, "Model")
        XCTAssertEqual(ra["clientWillIndex"] as? Bool, true)
        XCTAssertEqual(ra["recoType"] as? String, "unknown")
        XCTAssertEqual(ra["fileName"] as? String, "map.png")
        XCTAssertEqual(ra["attachment"] as? Bool, false)
        XCTAssertEqual((ra["applicationData"] as? [String: Any])?["keysOnly"] as? [String], ["k1", "k2"])
        XCTAssertEqual(resources[1]["mime"] as? String, "application/pdf")
    }

    func testSDKDecodesOurFindNotesMetadataCall() async throws {
        var filter = EDAM.NoteFilter(order: 2, ascending: false, words: "tag:LocationHistory", notebookGuid: "nb")
        filter.tagGuids = ["t1"]
        filter.inactive = false
        let spec = EDAM.NotesMetadataResultSpec(includeTitle: true, includeCreated: true, includeAttributes: true)
        let decoded = try await peerDecodedCall {
            try await _ = $0.findNotesMetadata(filter: filter, offset: 250, maxNotes: 100, resultSpec: spec)
        }
        let args = try XCTUnwrap(decoded["args"] as? [String: Any])
        XCTAssertEqual(int(args["offset"]), 250)
        XCTAssertEqual(int(args["maxNotes"]), 100)
        let f = try XCTUnwrap(args["filter"] as? [String: Any])
        XCTAssertEqual(int(f["order"]), 2)
        XCTAssertEqual(f["ascending"] as? Bool, false)
        XCTAssertEqual(f["words"] as? String, "tag:LocationHistory")
        XCTAssertEqual(f["notebookGuid"] as? String, "nb")
        XCTAssertEqual(f["tagGuids"] as? [String], ["t1"])
        XCTAssertEqual(f["inactive"] as? Bool, false)
        let s = try XCTUnwrap(args["resultSpec"] as? [String: Any])
        XCTAssertEqual(s["includeTitle"] as? Bool, true)
        XCTAssertEqual(s["includeCreated"] as? Bool, true)
        XCTAssertEqual(s["includeAttributes"] as? Bool, true)
        XCTAssertNil(s["includeUpdated"])
    }

    func testWeDecodeSDKReplies() throws {
        _ = try runPeer(["encode-replies", workDir.path])
        func reply(_ name: String) throws -> [UInt8] {
            [UInt8](try Foundation.Data(contentsOf: workDir.appendingPathComponent("\(name).bin")))
        }

        let note = try ThriftRPC.decodeReply(try reply("createNote_success"), method: "createNote", seqid: 3,
                                             result: .decoded as ThriftResultReader<EDAM.Note>)
        XCTAssertEqual(note.guid, "3c1f5e0a-6b7d-4e8f-9a0b-1c2d3e4f5a6b")
        XCTAssertEqual(note.title, "Peer note é漢")
        XCTAssertEqual(note.content, #"<?xml version="1.0" encoding="UTF-8"?><en-note>peer</en-note>"#)
        XCTAssertEqual(note.contentHash, Array(0..<16))
        XCTAssertEqual(note.contentLength, 61)
        XCTAssertEqual(note.created, 1_700_000_000_000)
        XCTAssertEqual(note.updated, 1_700_000_001_000)
        XCTAssertNil(note.deleted)
        XCTAssertEqual(note.active, true)
        XCTAssertEqual(note.updateSequenceNum, 4242)
        XCTAssertEqual(note.notebookGuid, "0f0e0d0c-0b0a-0908-0706-050403020100")
        XCTAssertEqual(note.tagGuids, ["aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"])
        XCTAssertEqual(note.tagNames, ["LocationHistory", "peer"])
        let attributes = try XCTUnwrap(note.attributes)
        XCTAssertEqual(attributes.subjectDate, 1_699_999_999_000)
        XCTAssertEqual(attributes.latitude, 35.681236)
        XCTAssertEqual(attributes.longitude, 139.767125)
        XCTAssertEqual(attributes.altitude, -12.5)
        XCTAssertEqual(attributes.sourceApplication, "peer.py")
        XCTAssertEqual(attributes.applicationData, EDAM.LazyMap(fullMap: ["enlog.id": "q-1", "enlog.v": "2"]))
        XCTAssertEqual(attributes.classifications, ["k": "v"])
        let resource = try XCTUnwrap(note.resources?.first)
        XCTAssertEqual(note.resources?.count, 1)
        XCTAssertEqual(resource.guid, "11111111-2222-3333-4444-555555555555")
        XCTAssertEqual(resource.mime, "image/png")
        XCTAssertEqual(resource.width, 640)
        XCTAssertEqual(resource.height, -2)
        XCTAssertEqual(resource.active, true)
        XCTAssertEqual(resource.data, EDAM.Data(bodyHash: Array(repeating: [0xde, 0xad, 0xbe, 0xef], count: 4).flatMap { $0 },
                                                size: 3, body: [0x00, 0xff, 0x7f]))
        XCTAssertEqual(resource.attributes?.fileName, "map.png")
        XCTAssertEqual(resource.attributes?.latitude, 1.5)
        XCTAssertEqual(resource.attributes?.applicationData, EDAM.LazyMap(keysOnly: ["x1", "x2"]))

        XCTAssertThrowsError(try ThriftRPC.decodeReply(try reply("createNote_userException"), method: "createNote", seqid: 4,
                                                       result: .decoded as ThriftResultReader<EDAM.Note>)) {
            XCTAssertEqual($0 as? EvernoteError, .badDataFormat(parameter: "Note.title"))
        }
        XCTAssertThrowsError(try ThriftRPC.decodeReply(try reply("createNote_rateLimit"), method: "createNote", seqid: 5,
                                                       result: .decoded as ThriftResultReader<EDAM.Note>)) {
            XCTAssertEqual($0 as? EvernoteError, .rateLimited(seconds: 1234))
        }
        XCTAssertThrowsError(try ThriftRPC.decodeReply(try reply("createNote_notFound"), method: "createNote", seqid: 6,
                                                       result: .decoded as ThriftResultReader<EDAM.Note>)) {
            XCTAssertEqual($0 as? EvernoteError, .notFound(identifier: "Note.notebookGuid", key: "nb-1"))
        }

        let notebooks = try ThriftRPC.decodeReply(try reply("listNotebooks_success"), method: "listNotebooks", seqid: 7,
                                                  result: .decoded as ThriftResultReader<[EDAM.Notebook]>)
        var logs = EDAM.Notebook(name: "Location Log", stack: "Logs")
        logs.guid = "nb-1"; logs.updateSequenceNum = 10; logs.defaultNotebook = false
        logs.serviceCreated = 1_600_000_000_000; logs.serviceUpdated = 1_600_000_005_000
        var inbox = EDAM.Notebook(name: "Inbox")
        inbox.guid = "nb-2"; inbox.defaultNotebook = true
        XCTAssertEqual(notebooks, [logs, inbox]) // published/sharedNotebookIds/restrictions skipped

        let old = try ThriftRPC.decodeReply(try reply("listNotebooks_nonstrict"), method: "listNotebooks", seqid: 8,
                                            result: .decoded as ThriftResultReader<[EDAM.Notebook]>)
        XCTAssertEqual(old.map(\.name), ["Old"])

        let user = try ThriftRPC.decodeReply(try reply("getUser_success"), method: "getUser", seqid: 9,
                                             result: .decoded as ThriftResultReader<EDAM.User>)
        XCTAssertEqual(user.id, 77)
        XCTAssertEqual(user.username, "peer")
        XCTAssertEqual(user.email, "peer@example.invalid")
        XCTAssertEqual(user.name, "Peer")
        XCTAssertEqual(user.timezone, "Asia/Tokyo")
        XCTAssertEqual(user.privilege, 1)
        XCTAssertNil(user.serviceLevel)
        XCTAssertEqual(user.created, 1_500_000_000_000)
        XCTAssertEqual(user.updated, 1_500_000_000_001)
        XCTAssertEqual(user.active, true)
        XCTAssertEqual(user.shardId, "s1")
    }
}
