import Foundation
import Synchronization
import XCTest
@testable import EvernoteAPI

/// Parses PROTOCOL.md-style byte listings: hex pairs, with `"text"` standing for its UTF-8 bytes.
func bytes(_ listing: String) -> [UInt8] {
    var out: [UInt8] = []
    var rest = Substring(listing)
    while let c = rest.first {
        if c == "\"" {
            let body = rest.dropFirst()
            let end = body.firstIndex(of: "\"")!
            out += Array(body[..<end].utf8)
            rest = body[body.index(after: end)...]
        } else if c.isHexDigit {
            let pair = rest.prefix(2)
            out.append(UInt8(pair, radix: 16)!)
            rest = rest.dropFirst(2)
        } else {
            rest = rest.dropFirst()
        }
    }
    return out
}

/// A ThriftTransport that answers with a closure and remembers every request.
final class ScriptedTransport: ThriftTransport, Sendable {
    private let recorded = Mutex<[[UInt8]]>([])
    private let respond: @Sendable ([UInt8]) throws -> [UInt8]

    init(_ respond: @escaping @Sendable ([UInt8]) throws -> [UInt8]) {
        self.respond = respond
    }

    var requests: [[UInt8]] { recorded.withLock { $0 } }

    func roundTrip(_ request: [UInt8]) async throws -> [UInt8] {
        recorded.withLock { $0.append(request) }
        return try respond(request)
    }
}

/// Reads the header of a CALL the client sent.
func callHeader(_ request: [UInt8]) throws -> ThriftMessageHeader {
    var reader = ThriftBinaryReader(request)
    return try reader.readMessageBegin()
}

/// Builds a REPLY whose result struct has `field` written by `body` (nil: empty result).
func replyMessage(_ name: String, seqid: Int32, type: ThriftMessageType = .reply,
                  _ body: (inout ThriftBinaryWriter) -> Void = { _ in }) -> [UInt8] {
    var writer = ThriftBinaryWriter()
    writer.writeMessageBegin(name: name, type: type, seqid: seqid)
    body(&writer)
    writer.writeFieldStop()
    return writer.bytes
}

/// A transport that echoes the request's name and seqid around a result body.
func echoingTransport(_ body: @escaping @Sendable (inout ThriftBinaryWriter) -> Void) -> ScriptedTransport {
    ScriptedTransport { request in
        let header = try callHeader(request)
        return replyMessage(header.name, seqid: header.seqid, body)
    }
}

func assertEvernoteError<T>(_ expression: @autoclosure () async throws -> T, _ expected: EvernoteError,
                            file: StaticString = #filePath, line: UInt = #line) async {
    await assertThrows(expected, file: file, line: line) { try await expression() }
}

enum Samples {
    static var fullNote: EDAM.Note {
        var attributes = EDAM.NoteAttributes()
        attributes.subjectDate = 1_366_000_000_000
        attributes.latitude = 35.681236
        attributes.longitude = 139.767125
        attributes.altitude = 40.25
        attributes.author = "enlog"
        attributes.source = "mail.smtp"
        attributes.sourceURL = "https://example.invalid/a"
        attributes.sourceApplication = "enlog/0.1"
        attributes.shareDate = 1
        attributes.reminderOrder = -5
        attributes.reminderDoneTime = 2
        attributes.reminderTime = 3
        attributes.placeName = "Tokyo Station"
        attributes.contentClass = "enlog.log"
        attributes.applicationData = EDAM.LazyMap(keysOnly: ["a.b.c"], fullMap: ["enlog.queue": "id-1", "enlog.v": ""])
        attributes.lastEditedBy = "someone"
        attributes.classifications = ["x": "y", "z": "w"]
        attributes.creatorId = 17
        attributes.lastEditorId = 18
        attributes.sharedWithBusiness = false
        attributes.conflictSourceNoteGuid = "c0ffee00-0000-0000-0000-000000000000"
        attributes.noteTitleQuality = 2

        var resourceAttributes = EDAM.ResourceAttributes()
        resourceAttributes.sourceURL = "file:///tmp/map.png"
        resourceAttributes.timestamp = 9
        resourceAttributes.latitude = -33.5
        resourceAttributes.longitude = 151.25
        resourceAttributes.altitude = 0
        resourceAttributes.cameraMake = "Make"
        resourceAttributes.cameraModel = "Model"
        resourceAttributes.clientWillIndex = true
        resourceAttributes.recoType = "unknown"
        resourceAttributes.fileName = "map.png"
        resourceAttributes.attachment = false
        resourceAttributes.applicationData = EDAM.LazyMap(keysOnly: ["k1", "k2"])

        var resource = EDAM.Resource(data: EDAM.Data(bodyHash: Array(0..<16), size: 4, body: [0, 1, 254, 255]),
                                     mime: "image/png", attributes: resourceAttributes)
        resource.guid = "r-guid"
        resource.noteGuid = "n-guid"
        resource.width = 500
        resource.height = 300
        resource.duration = -1
        resource.active = true
        resource.recognition = EDAM.Data(body: Array("<recoIndex/>".utf8))
        resource.updateSequenceNum = 99
        resource.alternateData = EDAM.Data(size: 0, body: [])

        var note = EDAM.Note(title: "LocationHistory [2013/04/01 12:00:00]: Tōkyō 東京",
                             content: "<?xml version=\"1.0\" encoding=\"UTF-8\"?><en-note>hi &amp; bye</en-note>",
                             notebookGuid: "0f0e0d0c-0b0a-0908-0706-050403020100",
                             tagNames: ["LocationHistory", "enlog"],
                             resources: [resource, EDAM.Resource(mime: "application/pdf")],
                             attributes: attributes)
        note.guid = "3c1f5e0a-6b7d-4e8f-9a0b-1c2d3e4f5a6b"
        note.contentHash = Array(repeating: 0xab, count: 16)
        note.contentLength = 71
        note.created = 1_366_000_000_000
        note.updated = 1_366_000_001_000
        note.deleted = 0
        note.active = true
        note.updateSequenceNum = 12
        note.tagGuids = ["t1", "t2"]
        return note
    }
}
