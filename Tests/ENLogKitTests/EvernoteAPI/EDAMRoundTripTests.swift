import XCTest
@testable import EvernoteAPI
@testable import Capture

/// Every EDAM struct survives encode → decode unchanged, fully populated and empty.
final class EDAMRoundTripTests: XCTestCase {
    private func roundTrip<S: ThriftStruct & Equatable>(_ value: S, file: StaticString = #filePath, line: UInt = #line) {
        let encoded = value.thriftEncoded()
        XCTAssertEqual(try S(thriftEncoded: encoded), value, file: file, line: line)
    }

    func testNoteAndEverythingInside() {
        let note = Samples.fullNote
        roundTrip(note)
        roundTrip(note.attributes!)
        roundTrip(note.attributes!.applicationData!)
        roundTrip(note.resources![0])
        roundTrip(note.resources![0].attributes!)
        roundTrip(note.resources![0].data!)
        roundTrip(EDAM.Note())
        roundTrip(EDAM.NoteAttributes())
        roundTrip(EDAM.Resource())
        roundTrip(EDAM.Data())
        roundTrip(EDAM.ResourceAttributes())
        roundTrip(EDAM.LazyMap())
    }

    func testAccountTypes() {
        var notebook = EDAM.Notebook(name: "Location Log", stack: "Logs")
        notebook.guid = "nb"; notebook.updateSequenceNum = 5; notebook.defaultNotebook = true
        notebook.serviceCreated = 1; notebook.serviceUpdated = 2
        roundTrip(notebook)
        var tag = EDAM.Tag(name: "LocationHistory", parentGuid: "p")
        tag.guid = "t"; tag.updateSequenceNum = 1
        roundTrip(tag)
        var user = EDAM.User()
        user.id = 1; user.username = "u"; user.email = "e"; user.name = "n"; user.timezone = "Europe/Berlin"
        user.privilege = 3; user.serviceLevel = 4; user.created = 5; user.updated = 6; user.active = true; user.shardId = "s1"
        roundTrip(user)
        var urls = EDAM.UserUrls(noteStoreUrl: "https://h/shard/s1/notestore", webApiUrlPrefix: "https://h/shard/s1/")
        urls.userStoreUrl = "a"; urls.utilityUrl = "b"; urls.messageStoreUrl = "c"; urls.userWebSocketUrl = "d"
        roundTrip(urls)
        roundTrip(EDAM.Notebook()); roundTrip(EDAM.Tag()); roundTrip(EDAM.User()); roundTrip(EDAM.UserUrls())
    }

    func testSearchTypes() {
        var filter = EDAM.NoteFilter(order: 1, ascending: false, words: "tag:LocationHistory", notebookGuid: "nb")
        filter.tagGuids = ["a", "b"]; filter.timeZone = "Asia/Tokyo"; filter.inactive = false; filter.emphasized = "e"
        filter.includeAllReadableNotebooks = true; filter.context = "c"; filter.rawWords = "r"
        filter.searchContextBytes = [1, 2]; filter.includeAllReadableWorkspaces = false
        roundTrip(filter)
        var spec = EDAM.NotesMetadataResultSpec(includeTitle: true, includeCreated: true, includeUpdated: false,
                                                includeNotebookGuid: true, includeAttributes: true)
        spec.includeContentLength = true; spec.includeDeleted = false; spec.includeUpdateSequenceNum = true
        spec.includeTagGuids = true; spec.includeLargestResourceMime = true; spec.includeLargestResourceSize = false
        roundTrip(spec)
        var meta = EDAM.NoteMetadata(guid: "g")
        meta.title = "t"; meta.contentLength = 1; meta.created = 2; meta.updated = 3; meta.deleted = 4
        meta.updateSequenceNum = 5; meta.notebookGuid = "nb"; meta.tagGuids = ["x"]
        meta.attributes = Samples.fullNote.attributes; meta.largestResourceMime = "image/png"; meta.largestResourceSize = 6
        roundTrip(meta)
        var list = EDAM.NotesMetadataList(startIndex: 0, totalNotes: 2, notes: [meta, EDAM.NoteMetadata(guid: "h")])
        list.stoppedWords = ["the"]; list.searchedWords = ["log"]; list.updateCount = 77
        list.searchContextBytes = [9]; list.debugInfo = "d"
        roundTrip(list)
        roundTrip(EDAM.NotesMetadataList(startIndex: 0, totalNotes: 0, notes: []))
        roundTrip(EDAM.NoteFilter()); roundTrip(EDAM.NotesMetadataResultSpec())
    }

    func testExceptionTypes() {
        roundTrip(EDAM.UserException(errorCode: .authExpired, parameter: "authenticationToken"))
        roundTrip(EDAM.SystemException(errorCode: .rateLimitReached, message: "m", rateLimitDuration: 60))
        roundTrip(EDAM.NotFoundException(identifier: "Note.guid", key: "k"))
        roundTrip(ThriftApplicationException(message: "boom", type: 6))
    }
}

/// Mapping of exceptions to EvernoteError and the client/protocol checks.
final class EDAMClientTests: XCTestCase {
    func testErrorCodeMapping() {
        XCTAssertEqual(EvernoteError(EDAM.UserException(errorCode: .authExpired, parameter: "authenticationToken")), .authExpired)
        XCTAssertEqual(EvernoteError(EDAM.UserException(errorCode: .invalidAuth)), .invalidAuth(parameter: nil))
        XCTAssertEqual(EvernoteError(EDAM.UserException(errorCode: .permissionDenied, parameter: "Note.notebookGuid")),
                       .permissionDenied(parameter: "Note.notebookGuid"))
        XCTAssertEqual(EvernoteError(EDAM.SystemException(errorCode: .rateLimitReached, rateLimitDuration: 900)), .rateLimited(seconds: 900))
        XCTAssertEqual(EvernoteError(EDAM.UserException(errorCode: .badDataFormat, parameter: "Note.title")), .badDataFormat(parameter: "Note.title"))
        XCTAssertEqual(EvernoteError(EDAM.UserException(errorCode: .quotaReached, parameter: "Accounting.uploadLimit")),
                       .quotaReached(parameter: "Accounting.uploadLimit"))
        XCTAssertEqual(EvernoteError(EDAM.UserException(errorCode: .dataConflict, parameter: "Notebook.name")), .dataConflict(parameter: "Notebook.name"))
        XCTAssertEqual(EvernoteError(EDAM.UserException(errorCode: .limitReached, parameter: "Note.size")), .limitReached(parameter: "Note.size"))
        XCTAssertEqual(EvernoteError(EDAM.UserException(errorCode: .dataRequired, parameter: "Resource.data")), .dataRequired(parameter: "Resource.data"))
        XCTAssertEqual(EvernoteError(EDAM.SystemException(errorCode: .shardUnavailable, message: "down")),
                       .service(code: .shardUnavailable, parameter: nil, message: "down"))
        XCTAssertEqual(EvernoteError(EDAM.UserException(errorCode: EDAM.ErrorCode(rawValue: 99))),
                       .service(code: EDAM.ErrorCode(rawValue: 99), parameter: nil, message: nil))

        XCTAssertTrue(EvernoteError.authExpired.requiresReauthentication)
        XCTAssertTrue(EvernoteError.dataRequired(parameter: "authenticationToken").requiresReauthentication)
        XCTAssertEqual(EvernoteError.rateLimited(seconds: 30).retryAfterSeconds, 30)
        XCTAssertTrue(EvernoteError.service(code: .shardUnavailable, parameter: nil, message: nil).isTransient)
        XCTAssertFalse(EvernoteError.enmlValidation(parameter: "*").isTransient)
    }

    func testReasonsAreOneLineWithSuggestions() {
        let all: [EvernoteError] = [
            .authExpired, .invalidAuth(parameter: nil), .permissionDenied(parameter: "x"), .rateLimited(seconds: 5),
            .rateLimited(seconds: nil), .enmlValidation(parameter: "*"), .badDataFormat(parameter: "Note.title"),
            .dataRequired(parameter: nil), .quotaReached(parameter: nil), .dataConflict(parameter: nil),
            .limitReached(parameter: nil), .notFound(identifier: "Note.guid", key: "k"),
            .service(code: .accountClear, parameter: nil, message: "line1\nline2\u{2028}x"),
            .application(type: 1, message: "Invalid method name: 'foo'"), .missingAuthenticationToken,
            .wrongSequenceID(expected: 1, received: 2), .wrongMethodName(expected: "a", received: "b"),
            .unexpectedMessageType(.call), .missingResult(method: "getNote"), .malformedReply(.badVersion(1)),
        ]
        for error in all {
            XCTAssertFalse(error.reason.contains("\n"), error.reason)
            XCTAssertFalse(error.reason.contains("\u{2028}"), error.reason)
            XCTAssertNotNil(error.recoverySuggestion, error.reason)
        }
        XCTAssertTrue(EvernoteError.authExpired.recoverySuggestion!.contains("enlog auth login"))
        XCTAssertTrue(EvernoteError.service(code: .lenTooLong, parameter: nil, message: nil).reason.contains("14"))
        XCTAssertTrue(EvernoteError.service(code: .lenTooLong, parameter: nil, message: nil).reason.contains("LEN_TOO_LONG"))
    }

    func testClientsSendTokenAndIncrementSeqid() async throws {
        let transport = echoingTransport { w in
            var tag = EDAM.Tag(name: "LocationHistory"); tag.guid = "t1"
            w.writeField(0, [tag])
        }
        let client = NoteStoreClient(transport: transport, authenticationToken: "S=s1:U=1:secret")
        let first = try await client.listTags()
        XCTAssertEqual(first.first?.name, "LocationHistory")
        _ = try await client.listTags(authenticationToken: "other")
        let seqids = try transport.requests.map { try callHeader($0).seqid }
        XCTAssertEqual(seqids, [1, 2])
        // The token is argument 1 of the args struct.
        var reader = ThriftBinaryReader(transport.requests[1])
        _ = try reader.readMessageBegin()
        try reader.readStructBegin()
        XCTAssertEqual(try reader.readFieldBegin(), ThriftFieldHeader(type: .string, id: 1))
        XCTAssertEqual(try reader.readString(), "other")
    }

    func testEveryNoteStoreMethodEncodesItsArgs() async throws {
        let note = Samples.fullNote
        let transport = ScriptedTransport { request in
            let header = try callHeader(request)
            return replyMessage(header.name, seqid: header.seqid) { w in
                switch header.name {
                case "listNotebooks": w.writeField(0, [EDAM.Notebook(name: "a")])
                case "getDefaultNotebook", "createNotebook": w.writeField(0, EDAM.Notebook(name: "b"))
                case "createNote", "getNote": w.writeField(0, note)
                case "findNotesMetadata": w.writeField(0, EDAM.NotesMetadataList(startIndex: 0, totalNotes: 1, notes: [EDAM.NoteMetadata(guid: "g")]))
                case "getNoteApplicationDataEntry": w.writeField(0, "value")
                case "getUser": var u = EDAM.User(); u.username = "me"; w.writeField(0, u)
                case "getUserUrls": w.writeField(0, EDAM.UserUrls(noteStoreUrl: "https://x/notestore"))
                default: break
                }
            }
        }
        let store = NoteStoreClient(transport: transport, authenticationToken: "tok")
        let notebooks = try await store.listNotebooks()
        XCTAssertEqual(notebooks, [EDAM.Notebook(name: "a")])
        let defaultNotebook = try await store.getDefaultNotebook()
        XCTAssertEqual(defaultNotebook.name, "b")
        _ = try await store.createNotebook(EDAM.Notebook(name: "new"))
        let created = try await store.createNote(note)
        XCTAssertEqual(created, note)
        let found = try await store.findNotesMetadata(filter: EDAM.NoteFilter(words: "x"), offset: 0, maxNotes: 250,
                                                      resultSpec: EDAM.NotesMetadataResultSpec(includeTitle: true))
        XCTAssertEqual(found.notes.map(\.guid), ["g"])
        let fetched = try await store.getNote(guid: "g", withContent: true, withResourcesData: false)
        XCTAssertEqual(fetched.title, note.title)
        let entry = try await store.getNoteApplicationDataEntry(guid: "g", key: "enlog.queue")
        XCTAssertEqual(entry, "value")

        let users = UserStoreClient(transport: transport, authenticationToken: "tok")
        let me = try await users.getUser()
        XCTAssertEqual(me.username, "me")
        let urls = try await users.getUserUrls()
        XCTAssertEqual(urls.noteStoreUrl, "https://x/notestore")

        // createNote_args{1: token, 2: note} decodes back to the same Note.
        let createRequest = transport.requests[3]
        var reader = ThriftBinaryReader(createRequest)
        XCTAssertEqual(try reader.readMessageBegin().name, "createNote")
        try reader.readStructBegin()
        _ = try reader.readFieldBegin(); XCTAssertEqual(try reader.readString(), "tok")
        XCTAssertEqual(try reader.readFieldBegin(), ThriftFieldHeader(type: .struct, id: 2))
        XCTAssertEqual(try EDAM.Note(from: &reader), note)
        XCTAssertNil(try reader.readFieldBegin())

        // getNoteApplicationDataEntry_args{1: token, 2: guid, 3: key}
        var entryReader = ThriftBinaryReader(transport.requests[6])
        XCTAssertEqual(try entryReader.readMessageBegin().name, "getNoteApplicationDataEntry")
        try entryReader.readStructBegin()
        _ = try entryReader.readFieldBegin(); _ = try entryReader.readString()
        XCTAssertEqual(try entryReader.readFieldBegin(), ThriftFieldHeader(type: .string, id: 2))
        XCTAssertEqual(try entryReader.readString(), "g")
        XCTAssertEqual(try entryReader.readFieldBegin(), ThriftFieldHeader(type: .string, id: 3))
        XCTAssertEqual(try entryReader.readString(), "enlog.queue")
    }

    func testDeclaredExceptionsAndApplicationException() async {
        let store = { (body: @escaping @Sendable (inout ThriftBinaryWriter) -> Void) in
            NoteStoreClient(transport: echoingTransport(body), authenticationToken: "tok")
        }
        await assertEvernoteError(try await store { $0.writeField(1, EDAM.UserException(errorCode: .authExpired)) }.listNotebooks(), .authExpired)
        await assertEvernoteError(try await store { $0.writeField(2, EDAM.SystemException(errorCode: .rateLimitReached, rateLimitDuration: 42)) }.createNote(EDAM.Note()),
                                  .rateLimited(seconds: 42))
        await assertEvernoteError(try await store { $0.writeField(3, EDAM.NotFoundException(identifier: "Note.guid", key: "g")) }.getNote(guid: "g", withContent: true, withResourcesData: false),
                                  .notFound(identifier: "Note.guid", key: "g"))
        await assertEvernoteError(try await store { _ in }.getDefaultNotebook(), .missingResult(method: "getDefaultNotebook"))
        // A success of the wrong type is skipped, leaving no result.
        await assertEvernoteError(try await store { $0.writeField(0, "not a list") }.listTags(), .missingResult(method: "listTags"))

        let appException = ScriptedTransport { request in
            let header = try callHeader(request)
            return replyMessage(header.name, seqid: header.seqid, type: .exception) { w in
                w.writeField(1, "Invalid method name: 'listTags'")
                w.writeField(2, Int32(1))
            }
        }
        await assertEvernoteError(try await NoteStoreClient(transport: appException, authenticationToken: "t").listTags(),
                                  .application(type: 1, message: "Invalid method name: 'listTags'"))
    }

    func testProtocolMismatches() async {
        let wrongSeqid = ScriptedTransport { request in
            replyMessage(try callHeader(request).name, seqid: 99) { $0.writeField(0, true) }
        }
        await assertEvernoteError(try await UserStoreClient(transport: wrongSeqid).checkVersion(clientName: "x"),
                                  .wrongSequenceID(expected: 1, received: 99))
        let wrongName = ScriptedTransport { request in
            replyMessage("getUser", seqid: try callHeader(request).seqid) { $0.writeField(0, true) }
        }
        await assertEvernoteError(try await UserStoreClient(transport: wrongName).checkVersion(clientName: "x"),
                                  .wrongMethodName(expected: "checkVersion", received: "getUser"))
        let callBack = ScriptedTransport { $0 }
        await assertEvernoteError(try await UserStoreClient(transport: callBack).checkVersion(clientName: "x"),
                                  .unexpectedMessageType(.call))
        let garbage = ScriptedTransport { _ in Array("<html>502 Bad Gateway</html>".utf8) }
        await assertEvernoteError(try await UserStoreClient(transport: garbage).checkVersion(clientName: "x"),
                                  .malformedReply(.lengthLimitExceeded(length: 0x3c68746d, limit: 16 << 20)))
        await assertEvernoteError(try await UserStoreClient(transport: garbage).getUser(), .missingAuthenticationToken)
    }
}
