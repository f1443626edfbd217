import Foundation
import XCTest
@testable import EvernoteAPI
@testable import Compose
@testable import Sync

/// Evernote's resource limits (Limits.thrift) are checked before upload, with the limit named.
final class ResourceLimitTests: XCTestCase {
    func resource(bytes: Int) -> NoteResource {
        NoteResource(hash: String(repeating: "0", count: 32), body: Data(count: bytes), mime: "image/png",
                     width: 600, height: 400, fileName: "map.png", latitude: 1, longitude: 2)
    }

    func testAResourceAtTheLimitPassesAndOneByteMoreIsRefused() throws {
        XCTAssertNoThrow(try ResourceLimits.check([resource(bytes: ResourceLimits.resourceSizeMax - 100)], content: "<en-note/>"))
        XCTAssertThrowsError(try ResourceLimits.check([resource(bytes: ResourceLimits.resourceSizeMax + 1)], content: "<en-note/>")) { error in
            XCTAssertTrue((error as? ResourceLimitError)?.reason.contains("EDAM_RESOURCE_SIZE_MAX_FREE") == true, "\(error)")
        }
    }

    func testTheNoteSizeCountsContentAndEveryResource() throws {
        let half = resource(bytes: ResourceLimits.noteSizeMax / 2)
        XCTAssertThrowsError(try ResourceLimits.check([half, half], content: "<en-note>x</en-note>")) { error in
            XCTAssertTrue((error as? ResourceLimitError)?.reason.contains("EDAM_NOTE_SIZE_MAX_FREE") == true, "\(error)")
        }
    }

    func testTooManyResourcesAreRefused() throws {
        let many = Array(repeating: resource(bytes: 1), count: ResourceLimits.resourcesPerNoteMax + 1)
        XCTAssertThrowsError(try ResourceLimits.check(many, content: "<en-note/>")) { error in
            XCTAssertTrue((error as? ResourceLimitError)?.reason.contains("EDAM_NOTE_RESOURCES_MAX") == true, "\(error)")
        }
    }

    /// The EDAM resource carries the raw MD5 of its body, its size, and the map's metadata.
    func testTheEDAMResourceCarriesBodyHashSizeAndMetadata() throws {
        let body = Data("not really a png".utf8)
        let stored = NoteResource(hash: MapImage.md5Hex(body), body: body, mime: "image/png", width: 600, height: 400,
                                  fileName: "map.png", latitude: 48.8584, longitude: 2.2945)
        let edam = try XCTUnwrap(try SyncEngine.edamResources([stored], content: "<en-note/>").first)
        XCTAssertEqual(edam.data?.body, [UInt8](body))
        XCTAssertEqual(edam.data?.size, Int32(body.count))
        XCTAssertEqual(edam.data?.bodyHash?.map { String(format: "%02x", $0) }.joined(), stored.hash)
        XCTAssertEqual(edam.mime, "image/png")
        XCTAssertEqual([edam.width, edam.height], [600, 400])
        XCTAssertEqual(edam.attributes?.fileName, "map.png")
        XCTAssertEqual(edam.attributes?.latitude, 48.8584)
        XCTAssertEqual(edam.attributes?.longitude, 2.2945)
    }
}
