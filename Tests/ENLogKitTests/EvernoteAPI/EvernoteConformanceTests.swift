import Foundation
import XCTest
@testable import Support
@testable import EvernoteAPI
@testable import Network

/// End to end: our Thrift codec and EDAM clients over ThriftHTTPTransport/HTTPClient against a
/// server built on the official SDK's generated code (Tests/support/evernote_server.py).
final class EvernoteConformanceTests: XCTestCase {
    static let token = "S=s1:U=1:E=18b00000000:C=18a00000000:P=1cd:A=enlog-test:V=2:H=0123456789abcdef"
    static let otherToken = "S=s1:U=2:E=18b00000000:C=18a00000000:P=1cd:A=enlog-test:V=2:H=fedcba9876543210"
    var server: PythonServer!
    let http = HTTPClient()

    override func setUpWithError() throws {
        server = try PythonServer(script: "evernote_server.py",
                                  arguments: ["--token", Self.token, "--token", Self.otherToken])
    }

    override func tearDown() {
        server?.stop()
        server = nil
    }

    private func userStore(token: String = EvernoteConformanceTests.token) -> UserStoreClient {
        UserStoreClient(transport: ThriftHTTPTransport(url: server.baseURL + "/edam/user", client: http),
                        authenticationToken: token)
    }

    private func noteStore(url: String, token: String = EvernoteConformanceTests.token) -> NoteStoreClient {
        NoteStoreClient(transport: ThriftHTTPTransport(url: url, client: http), authenticationToken: token)
    }

    static let resourceBody: [UInt8] = Array(0...255) + Array("enlog".utf8)
    static let resourceMD5 = "9d0a550d10f3ba5f83b6b907ebc826c7"

    func testFullFlowArrivesFieldByField() async throws {
        let users = userStore()
        let versionOK = try await users.checkVersion(clientName: "enlog/\(ENLogVersion.current); Linux")
        XCTAssertTrue(versionOK)
        let user = try await users.getUser()
        XCTAssertEqual(user.id, 1)
        XCTAssertEqual(user.username, "tester1")
        XCTAssertEqual(user.shardId, "s1")
        XCTAssertEqual(user.privilege, 1)
        let urls = try await users.getUserUrls()
        let noteStoreURL = try XCTUnwrap(urls.noteStoreUrl)
        XCTAssertEqual(noteStoreURL, server.baseURL + "/shard/s1/notestore")
        XCTAssertEqual(urls.userStoreUrl, server.baseURL + "/edam/user")

        let notes = noteStore(url: noteStoreURL)
        let initial = try await notes.listNotebooks()
        XCTAssertEqual(initial.map(\.name), ["First Notebook"])
        let defaultNotebook = try await notes.getDefaultNotebook()
        XCTAssertEqual(defaultNotebook.defaultNotebook, true)
        XCTAssertEqual(defaultNotebook.guid, initial.first?.guid)

        let notebook = try await notes.createNotebook(EDAM.Notebook(name: "Location Log"))
        let notebookGuid = try XCTUnwrap(notebook.guid)
        XCTAssertEqual(notebook.name, "Location Log")
        XCTAssertNotNil(notebook.updateSequenceNum)
        do {
            _ = try await notes.createNotebook(EDAM.Notebook(name: "location LOG"))
            XCTFail("duplicate notebook name accepted")
        } catch let error as EvernoteError {
            XCTAssertEqual(error, .dataConflict(parameter: "Notebook.name"))
        }
        let afterCreate = try await notes.listNotebooks()
        XCTAssertEqual(Set(afterCreate.compactMap(\.name)), ["First Notebook", "Location Log"])

        var attributes = EDAM.NoteAttributes()
        attributes.latitude = 35.681236
        attributes.longitude = 139.767125
        attributes.altitude = -12.5
        attributes.subjectDate = 1_700_000_000_123
        attributes.source = "enlog"
        attributes.sourceApplication = "enlog/\(ENLogVersion.current)"
        attributes.placeName = "Tōkyō Station"
        attributes.applicationData = EDAM.LazyMap(fullMap: ["enlog.id": "q-42", "enlog.v": "1"])
        var resourceAttributes = EDAM.ResourceAttributes()
        resourceAttributes.fileName = "track.gpx"
        resourceAttributes.latitude = 1.5
        let md5 = Self.hexBytes(Self.resourceMD5)
        let resource = EDAM.Resource(data: EDAM.Data(bodyHash: md5, size: Int32(Self.resourceBody.count),
                                                     body: Self.resourceBody),
                                     mime: "application/gpx+xml", attributes: resourceAttributes)
        let content = """
            <?xml version="1.0" encoding="UTF-8"?><!DOCTYPE en-note SYSTEM "http://xml.evernote.com/pub/enml2.dtd">\
            <en-note><div>Tōkyō — 35.681236, 139.767125</div><en-media type="application/gpx+xml" hash="\(Self.resourceMD5)"/></en-note>
            """
        let note = EDAM.Note(title: "Location 2023-11-14 22:13 ✓", content: content, notebookGuid: notebookGuid,
                             tagNames: ["LocationHistory", "enlog"], resources: [resource], attributes: attributes)
        let created = try await notes.createNote(note)
        let noteGuid = try XCTUnwrap(created.guid)
        XCTAssertNotNil(created.updateSequenceNum)
        XCTAssertEqual(created.notebookGuid, notebookGuid)
        XCTAssertEqual(created.tagGuids?.count, 2)
        XCTAssertNil(created.content, "createNote's reply omits the content")
        XCTAssertNil(created.resources?.first?.data?.body, "and the resource bodies")
        XCTAssertEqual(created.resources?.first?.data?.bodyHash, md5)
        XCTAssertEqual(created.contentLength, Int32(content.utf8.count))

        let tags = try await notes.listTags()
        XCTAssertEqual(Set(tags.compactMap(\.name)), ["LocationHistory", "enlog"])

        var spec = EDAM.NotesMetadataResultSpec(includeTitle: true, includeAttributes: true)
        spec.includeTagGuids = true
        let found = try await notes.findNotesMetadata(filter: EDAM.NoteFilter(notebookGuid: notebookGuid),
                                                      offset: 0, maxNotes: 50, resultSpec: spec)
        XCTAssertEqual(found.totalNotes, 1)
        XCTAssertEqual(found.notes.map(\.guid), [noteGuid])
        XCTAssertEqual(found.notes.first?.title, note.title)
        // Like the service, metadata names applicationData keys only; values come one by one.
        XCTAssertEqual(found.notes.first?.attributes?.applicationData?.keysOnly, ["enlog.id", "enlog.v"])
        XCTAssertEqual(found.notes.first?.attributes?.latitude, 35.681236)
        let none = try await notes.findNotesMetadata(filter: EDAM.NoteFilter(notebookGuid: defaultNotebook.guid),
                                                     offset: 0, maxNotes: 50, resultSpec: spec)
        XCTAssertEqual(none.totalNotes, 0)
        XCTAssertTrue(none.notes.isEmpty)

        let fetched = try await notes.getNote(guid: noteGuid, withContent: true, withResourcesData: true)
        XCTAssertEqual(fetched.content, content)
        XCTAssertEqual(fetched.resources?.first?.data?.body, Self.resourceBody)
        XCTAssertEqual(fetched.attributes?.placeName, "Tōkyō Station")
        let entry = try await notes.getNoteApplicationDataEntry(guid: noteGuid, key: "enlog.id")
        XCTAssertEqual(entry, "q-42")
        do {
            _ = try await notes.getNoteApplicationDataEntry(guid: noteGuid, key: "missing")
            XCTFail("missing key found")
        } catch let error as EvernoteError {
            XCTAssertEqual(error, .notFound(identifier: "NoteAttributes.applicationData", key: "missing"))
        }

        // What the SDK-decoded server actually stored, field by field.
        let notesJSON = try await fetchJSON(server.baseURL + "/_test/notes")
        let stored = try XCTUnwrap(notesJSON as? [[String: Any]])
        XCTAssertEqual(stored.count, 1)
        let s = try XCTUnwrap(stored.first)
        XCTAssertEqual(s["guid"] as? String, noteGuid)
        XCTAssertEqual(s["title"] as? String, note.title)
        XCTAssertEqual(s["content"] as? String, content)
        XCTAssertEqual(s["notebookGuid"] as? String, notebookGuid)
        XCTAssertEqual(s["tagNames"] as? [String], ["LocationHistory", "enlog"])
        let a = try XCTUnwrap(s["attributes"] as? [String: Any])
        XCTAssertEqual(a["latitude"] as? Double, 35.681236)
        XCTAssertEqual(a["longitude"] as? Double, 139.767125)
        XCTAssertEqual(a["altitude"] as? Double, -12.5)
        XCTAssertEqual((a["subjectDate"] as? NSNumber)?.int64Value, 1_700_000_000_123)
        XCTAssertEqual(a["source"] as? String, "enlog")
        XCTAssertEqual(a["sourceApplication"] as? String, "enlog/\(ENLogVersion.current)")
        XCTAssertEqual(a["placeName"] as? String, "Tōkyō Station")
        let appData = try XCTUnwrap(a["applicationData"] as? [String: Any])
        XCTAssertEqual(appData["fullMap"] as? [String: String], ["enlog.id": "q-42", "enlog.v": "1"])
        let resources = try XCTUnwrap(s["resources"] as? [[String: Any]])
        XCTAssertEqual(resources.count, 1)
        XCTAssertEqual(resources.first?["mime"] as? String, "application/gpx+xml")
        XCTAssertEqual(resources.first?["md5"] as? String, Self.resourceMD5)
        XCTAssertEqual(resources.first?["size"] as? Int, Self.resourceBody.count)
        let ra = try XCTUnwrap(resources.first?["attributes"] as? [String: Any])
        XCTAssertEqual(ra["fileName"] as? String, "track.gpx")
        XCTAssertEqual(ra["latitude"] as? Double, 1.5)

        // Every Thrift request carried the right headers.
        let requestsJSON = try await fetchJSON(server.baseURL + "/_test/requests")
        let requests = try XCTUnwrap(requestsJSON as? [[String: Any]])
        XCTAssertEqual(requests.compactMap { $0["method"] as? String },
                       ["checkVersion", "getUser", "getUserUrls", "listNotebooks", "getDefaultNotebook",
                        "createNotebook", "createNotebook", "listNotebooks", "createNote", "listTags",
                        "findNotesMetadata", "findNotesMetadata", "getNote", "getNoteApplicationDataEntry",
                        "getNoteApplicationDataEntry"])
        for request in requests {
            XCTAssertEqual(request["content_type"] as? String, "application/x-thrift")
            XCTAssertEqual(request["accept"] as? String, "application/x-thrift")
            XCTAssertEqual(request["user_agent"] as? String, HTTPConfiguration.defaultUserAgent)
            XCTAssertEqual(request["type"] as? Int, 1, "CALL")
        }
    }

    func testWrongTokenIsInvalidAuth() async throws {
        let users = userStore(token: "S=s1:U=99:bogus")
        do {
            _ = try await users.getUser()
            XCTFail("bogus token accepted")
        } catch let error as EvernoteError {
            XCTAssertEqual(error, .invalidAuth(parameter: "authenticationToken"))
            XCTAssertTrue(error.requiresReauthentication)
            XCTAssertFalse(error.reason.contains("bogus"))
        }
        let notes = noteStore(url: server.baseURL + "/shard/s1/notestore", token: "S=s1:U=99:bogus")
        do {
            _ = try await notes.listNotebooks()
            XCTFail("bogus token accepted")
        } catch let error as EvernoteError {
            XCTAssertEqual(error, .invalidAuth(parameter: "authenticationToken"))
        }
    }

    func testAccountsAreSeparate() async throws {
        let url = server.baseURL + "/shard/s1/notestore"
        _ = try await noteStore(url: url).createNotebook(EDAM.Notebook(name: "Only Mine"))
        let theirs = try await noteStore(url: url, token: Self.otherToken).listNotebooks()
        XCTAssertEqual(theirs.map(\.name), ["First Notebook"])
        let user = try await userStore(token: Self.otherToken).getUser()
        XCTAssertEqual(user.id, 2)
    }

    func testServiceHTTP503IsReportedThenRecovers() async throws {
        _ = try await fetchJSON(server.baseURL + "/_test/fail?status=503&count=1")
        let users = userStore()
        do {
            _ = try await users.getUser()
            XCTFail("503 accepted")
        } catch let error as ThriftHTTPError {
            XCTAssertEqual(error, .unexpectedStatus(status: 503, snippet: "503 Service Unavailable"))
            XCTAssertTrue(error.reason.hasPrefix("Evernote answered HTTP 503"))
        }
        let user = try await users.getUser()   // the next call goes through (new seqid, same channel)
        XCTAssertEqual(user.id, 1)
    }

    static func hexBytes(_ hex: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }
}
