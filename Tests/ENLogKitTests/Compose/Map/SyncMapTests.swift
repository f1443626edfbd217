import Foundation
import XCTest
@testable import Compose
@testable import Outbox

/// Notes with maps through `enlog sync` to the official Evernote SDK's server classes, which
/// decode the uploaded note: the map arrives as a resource whose body, hash and size agree.
final class SyncMapTests: TilesAndEvernoteTestCase {
    override class var contact: String { "sync-map-test@example.org" }

    /// Checks one uploaded note's map as the SDK decoded it; returns the PNG.
    @discardableResult
    func assertCarriesItsMap(_ note: [String: Any], file: StaticString = #filePath, line: UInt = #line) throws -> Data {
        let resources = try XCTUnwrap(note["resources"] as? [[String: Any]], "no resources: \(note.keys)", file: file, line: line)
        XCTAssertEqual(resources.count, 1, file: file, line: line)
        let resource = resources[0]
        // As the server's Python read it: its own MD5 and length of the body, the bodyHash and size sent.
        let body = try XCTUnwrap(Data(base64Encoded: resource["body"] as? String ?? ""), "\(resource.keys)", file: file, line: line)
        let md5 = MapImage.md5Hex(body)
        XCTAssertEqual(resource["md5"] as? String, md5, file: file, line: line)
        XCTAssertEqual(resource["bodyHash"] as? String, md5, file: file, line: line)
        XCTAssertEqual(resource["size"] as? Int, body.count, file: file, line: line)
        XCTAssertEqual(resource["dataSize"] as? Int, body.count, file: file, line: line)
        let content = note["content"] as? String ?? ""
        XCTAssertTrue(content.contains("<en-media type=\"image/png\" hash=\"\(md5)\"/>"), content, file: file, line: line)
        XCTAssertEqual(resource["mime"] as? String, "image/png", file: file, line: line)
        XCTAssertEqual(resource["width"] as? Int, 600, file: file, line: line)
        XCTAssertEqual(resource["height"] as? Int, 400, file: file, line: line)
        let attributes = try XCTUnwrap(resource["attributes"] as? [String: Any], "\(resource)", file: file, line: line)
        XCTAssertEqual(attributes["fileName"] as? String, "map.png", file: file, line: line)
        XCTAssertNotNil(attributes["latitude"] as? Double, file: file, line: line)
        XCTAssertNotNil(attributes["longitude"] as? Double, file: file, line: line)
        let decoded = try IndependentDecoder.decode(body)
        XCTAssertEqual([decoded.width, decoded.height], [600, 400], file: file, line: line)
        return body
    }

    func testMapsAreUploadedAsResourcesAndAPendingMapIsMadeAtSyncFirst() async throws {
        XCTAssertEqual(try home.run("log", "--at", "48.8584,2.2945", "--no-sync").status, 0)
        try await tiles.configure("status=500")
        let offline = try home.run("log", "--at", "35.6812,139.7671", "--no-sync")
        XCTAssertEqual(offline.status, 0, offline.standardError)
        XCTAssertTrue(offline.standardError.contains("no map yet"), offline.standardError)

        try await tiles.configure("status=0")
        let sync = try home.run("sync")
        XCTAssertEqual(sync.status, 0, sync.standardError)
        XCTAssertTrue(sync.standardOutput.hasPrefix("uploaded 2, 0 remaining"), sync.standardOutput)
        XCTAssertTrue(sync.standardOutput.contains("made 1 map"), sync.standardOutput)
        let notes = try await serverNotes()
        XCTAssertEqual(notes.count, 2)
        for note in notes { try assertCarriesItsMap(note) }

        // What was uploaded is what the outbox holds, byte for byte.
        let stored = try await OutboxStore(path: home.database, access: .read).resources(of: 2)
        let uploaded = try XCTUnwrap(notes.first { ($0["attributes"] as? [String: Any])?["latitude"] as? Double == 35.6812 }, "\(notes.map { $0["attributes"] ?? "-" })")
        XCTAssertEqual(try assertCarriesItsMap(uploaded), stored.first?.body)

        let again = try home.run("sync")
        XCTAssertEqual(again.status, 0, again.standardError)
        let afterwards = try await serverNotes()
        XCTAssertEqual(afterwards.count, 2)
        XCTAssertEqual(afterwards.map { ($0["resources"] as? [Any])?.count }, [1, 1])
    }

    func testAMapThatCannotBeMadeIsGivenUpAfterBoundedRunsAndTheSummarySaysSo() async throws {
        try await tiles.configure("status=500")
        XCTAssertEqual(try home.run("log", "--at", "35.6812,139.7671", "--no-sync").status, 0)
        for run in 1...2 {
            let sync = try home.run("sync")
            XCTAssertEqual(sync.status, ExitStatusCode.temporary.rawValue, "run \(run): \(sync.standardError)")
            XCTAssertTrue(sync.standardError.contains("1 note waits for its map"), "run \(run): \(sync.standardError)")
            XCTAssertTrue(sync.standardOutput.contains("uploaded 0"), "run \(run): \(sync.standardOutput)")
            XCTAssertTrue(sync.standardOutput.contains("1 note waits for its map (the map server"), "run \(run): \(sync.standardOutput)")
            let none = try await serverNotes()
            XCTAssertEqual(none.count, 0)
        }
        let last = try home.run("sync")
        XCTAssertEqual(last.status, 0, last.standardError)
        XCTAssertTrue(last.standardOutput.hasPrefix("uploaded 1"), last.standardOutput)
        XCTAssertTrue(last.standardOutput.contains("1 note goes without its map"), last.standardOutput)
        let notes = try await serverNotes()
        XCTAssertEqual(notes.count, 1)
        XCTAssertEqual((notes[0]["resources"] as? [Any])?.count ?? 0, 0)
        XCTAssertFalse((notes[0]["content"] as? String ?? "").contains("en-media"))
    }

    /// Evernote stored the note with its map but the reply was lost: the next sync finds it by its
    /// enlog.id and uploads nothing again — one note, one copy of its image.
    func testALostReplyIsFoundByTheLookupAndTheImageIsNotUploadedTwice() async throws {
        XCTAssertEqual(try home.run("log", "--at", "48.8584,2.2945", "--no-sync").status, 0)
        _ = try await fetchJSON(evernote.baseURL + "/_test/inject?kind=drop&method=createNote")
        let lost = try home.run("sync")
        XCTAssertNotEqual(lost.status, 0, lost.standardOutput)
        XCTAssertEqual(try home.run("queue", "retry", "1").status, 0)
        let found = try home.run("sync")
        XCTAssertEqual(found.status, 0, found.standardError)
        XCTAssertTrue(found.standardOutput.contains("1 already on Evernote"), found.standardOutput)
        let notes = try await serverNotes()
        XCTAssertEqual(notes.count, 1)
        try assertCarriesItsMap(notes[0])
        let createNotes = try await fetchJSON(evernote.baseURL + "/_test/requests") as? [[String: Any]] ?? []
        XCTAssertEqual(createNotes.filter { $0["method"] as? String == "createNote" }.count, 1)
    }
}
