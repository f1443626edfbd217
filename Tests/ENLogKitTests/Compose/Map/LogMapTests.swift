import Foundation
import XCTest
@testable import Compose
@testable import Outbox

/// `enlog log` with the map on (tiles from the local tile server): the note carries its map as a
/// resource stored with it, or its map is pending when the tiles cannot be had now.
final class LogMapTests: XCTestCase {
    var server: TileTestServer!
    var home: EnlogHome!

    override func setUp() async throws {
        server = try TileTestServer()
        home = try EnlogHome()
        home.extraEnvironment = ["ENLOG_MAP_STYLE": "tiles", "ENLOG_MAP_TILE_URL": server.tileURL,
                                 "ENLOG_GEOCODING_ENABLED": "false", "XDG_CACHE_HOME": home.directory.path("cache"),
                                 "ENLOG_GEOCODING_CONTACT": "log-map-test@example.org"]
    }

    override func tearDown() async throws { server?.stop() }

    func show(_ id: Int) throws -> [String: Any] {
        let result = try home.run("queue", "show", "\(id)", "--json")
        XCTAssertEqual(result.status, 0, result.standardError)
        return try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as! [String: Any]
    }

    /// `queue show ID --resource HASH > file`, the shell way (stdout as text would mangle the bytes).
    func resourceBytes(_ id: Int, _ hash: String) throws -> Data {
        let output = home.directory.path("resource.bin")
        let result = try Subprocess.run(URL(fileURLWithPath: "/bin/sh"),
                                        ["-c", "\"$0\" queue show \"$1\" --resource \"$2\" > \"$3\"", Subprocess.enlog.path, "\(id)", hash, output],
                                        environment: home.environment)
        XCTAssertEqual(result.status, 0, result.standardError)
        return try Data(contentsOf: URL(fileURLWithPath: output))
    }

    func testALoggedNoteCarriesItsMapAsAResourceThatQueueShowWritesOut() async throws {
        let logged = try home.run("log", "--at", "48.8584,2.2945,35", "--no-sync")
        XCTAssertEqual(logged.status, 0, logged.standardError)
        XCTAssertFalse(logged.standardError.contains("map"), logged.standardError)
        let note = try show(1)
        let resources = try XCTUnwrap(note["resources"] as? [[String: Any]])
        XCTAssertEqual(resources.count, 1)
        let resource = resources[0]
        let hash = try XCTUnwrap(resource["hash"] as? String)
        XCTAssertEqual(resource["mime"] as? String, "image/png")
        XCTAssertEqual(resource["width"] as? Int, 600)
        XCTAssertEqual(resource["height"] as? Int, 400)
        XCTAssertEqual(resource["fileName"] as? String, "map.png")
        XCTAssertEqual(resource["latitude"] as? Double, 48.8584)
        XCTAssertEqual(note["mapPending"] as? Bool, false)
        let content = try XCTUnwrap(note["content"] as? String)
        XCTAssertTrue(content.contains("<en-media type=\"image/png\" hash=\"\(hash)\"/>"), content)
        // Above the place, as the default template shows it (geocoding off: the coordinates alone).
        XCTAssertLessThan(content.range(of: "<en-media")!.lowerBound, content.range(of: ">48.858400,2.294500</a>")!.lowerBound)

        let bytes = try resourceBytes(1, hash)
        XCTAssertEqual(bytes.count, resource["size"] as? Int)
        XCTAssertEqual(MapImage.md5Hex(bytes), hash)
        let decoded = try IndependentDecoder.decode(bytes)
        XCTAssertEqual([decoded.width, decoded.height], [600, 400])

        // The plain listing names the resource on stderr; the ENML alone goes to stdout.
        let plain = try home.run("queue", "show", "1")
        XCTAssertTrue(plain.standardOutput.hasPrefix("<?xml"), plain.standardOutput)
        XCTAssertTrue(plain.standardError.contains("resource \(hash)\timage/png\t600×400"), plain.standardError)

        let missing = try home.run("queue", "show", "1", "--resource", String(repeating: "0", count: 32))
        XCTAssertEqual(missing.status, 2, missing.standardError)
        XCTAssertTrue(missing.standardError.contains("has no resource"), missing.standardError)
    }

    func testATileServerFailureStoresTheNoteWithItsMapPending() async throws {
        try await server.configure("status=500")
        let logged = try home.run("log", "--at", "35.6812,139.7671", "--no-sync")
        XCTAssertEqual(logged.status, 0, logged.standardError)
        XCTAssertTrue(logged.standardError.contains("no map yet"), logged.standardError)
        let note = try show(1)
        XCTAssertEqual(note["mapPending"] as? Bool, true)
        XCTAssertEqual((note["resources"] as? [Any])?.count, 0)
        XCTAssertFalse((note["content"] as? String ?? "").contains("en-media"))

        // The tile server is back: the next note has its map; `queue list` marks the one waiting.
        try await server.configure("status=0")
        let second = try home.run("log", "--at", "35.6812,139.7671", "--no-sync", "--json")
        XCTAssertEqual(second.status, 0, second.standardError)
        let secondNote = try JSONSerialization.jsonObject(with: Data(second.standardOutput.utf8)) as! [String: Any]
        XCTAssertEqual(secondNote["mapPending"] as? Bool, false)
        let list = try home.run("queue", "list")
        XCTAssertEqual(list.status, 0, list.standardError)
        let lines = list.standardOutput.split(separator: "\n")
        XCTAssertEqual(lines.count, 2, list.standardOutput)
        XCTAssertTrue(lines[0].hasPrefix("1\t") && lines[0].hasSuffix("\t(map pending)"), String(lines[0]))
        XCTAssertFalse(lines[1].contains("map pending"), String(lines[1]))
        let json = try home.run("queue", "list", "--json")
        let listed = try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as! [[String: Any]]
        XCTAssertEqual(listed.map { $0["mapPending"] as? Bool }, [true, false])
    }

    func testNoMapWithStyleNoneAndNoPendingMap() async throws {
        home.extraEnvironment["ENLOG_MAP_STYLE"] = "none"
        let logged = try home.run("log", "--at", "35.6812,139.7671", "--no-sync")
        XCTAssertEqual(logged.status, 0, logged.standardError)
        XCTAssertEqual(logged.standardError, "")
        let note = try show(1)
        XCTAssertEqual(note["mapPending"] as? Bool, false)
        XCTAssertEqual((note["resources"] as? [Any])?.count, 0)
        let requests = try await server.log().requests
        XCTAssertTrue(requests.isEmpty)
    }

    func testDroppingANoteDeletesItsResources() async throws {
        XCTAssertEqual(try home.run("log", "--at", "48.8584,2.2945", "--no-sync").status, 0)
        XCTAssertEqual(try home.run("queue", "drop", "1", "--yes").status, 0)
        let outbox = try OutboxStore(path: home.database, access: .read)
        let left = try await outbox.databaseWriter.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM resource") }
        XCTAssertEqual(left, 0)
    }
}
