import Foundation
import Synchronization
import XCTest
@testable import Compose

/// The local tile server (Tests/support/tile_server.py, Pillow-generated tiles) through the shared harness.
final class TileTestServer {
    private let server: PythonServer
    var baseURL: String { server.baseURL }
    var tileURL: String { "\(server.baseURL)/{z}/{x}/{y}.png" }

    /// - Parameter city: busy palette tiles of 25-30 KB (a city centre's), where the default
    ///   ones are 2 KB: maps of the size real ones have.
    init(city: Bool = false) throws {
        server = try PythonServer(script: "tile_server.py", arguments: city ? ["--city"] : [])
    }

    struct Log {
        var requests: [[String: Any]]
        var maxInFlight: Int
        var paths: [String] { requests.compactMap { $0["path"] as? String } }
        var statuses: [Int] { requests.compactMap { $0["status"] as? Int } }
        func header(_ name: String, of request: [String: Any]) -> String? {
            (request["headers"] as? [String: String])?.first { $0.key.lowercased() == name.lowercased() }?.value
        }
    }

    func log() async throws -> Log {
        let json = try await fetchJSON("\(baseURL)/_test/requests") as! [String: Any]
        return Log(requests: json["requests"] as? [[String: Any]] ?? [], maxInFlight: json["max_in_flight"] as? Int ?? 0)
    }

    func configure(_ query: String) async throws { _ = try await fetchJSON("\(baseURL)/_test/configure?\(query)") }

    /// `enlog map` of one place with this server's tiles, in a scratch home of its own.
    func map() throws -> ProcessResult {
        let home = try TemporaryDirectory()
        return try Subprocess.run(Subprocess.enlog, ["map", "--at", "48.8584,2.2945", "-o", home.path("map.png")],
                                  environment: ["PATH": "/usr/bin:/bin", "HOME": home.url.path, "TZ": "UTC",
                                                "XDG_CONFIG_HOME": home.path("config"), "XDG_CACHE_HOME": home.path("cache"),
                                                "ENLOG_MAP_TILE_URL": tileURL, "ENLOG_GEOCODING_CONTACT": "map-test@example.org"])
    }
    func reset() async throws { _ = try await fetchJSON("\(baseURL)/_test/reset") }
    func stop() { server.stop() }
}

/// A test case with its own tile server and scratch directory (for the disk cache), per test.
class TileServerTestCase: XCTestCase {
    var server: TileTestServer!
    var directory: TemporaryDirectory!

    override func setUp() async throws {
        server = try TileTestServer()
        directory = try TemporaryDirectory()
    }

    override func tearDown() async throws {
        server?.stop()
    }

    var cachePath: String { directory.path("cache/enlog/tiles.sqlite") }
}

extension MapRenderer {
    /// A map drawn as one enlog process draws it: by a renderer of its own, whose writes to the
    /// disk cache are finished before it goes (as every command waits for them).
    static func renderAsAProcess(_ settings: MapSettings, latitude: Double, longitude: Double,
                                 accuracy: Double?) async throws -> MapImage {
        let renderer = MapRenderer(settings: settings)
        let image = try await renderer.render(latitude: latitude, longitude: longitude, accuracy: accuracy)
        await renderer.finishCaching()
        return image
    }
}

/// What an independent decoder (Python's PIL) reads from a PNG.
struct DecodedPNG: Decodable {
    let width: Int
    let height: Int
    let mode: String
    let center: [Int]
    /// SHA-256 of the pixels as 8-bit RGB rows: equal for two files that show the same picture.
    let pixels: String
}

enum IndependentDecoder {
    static func decode(_ png: Data) throws -> DecodedPNG {
        let scratch = try TemporaryDirectory()
        let file = scratch.path("map.png")
        try png.write(to: URL(fileURLWithPath: file))
        let python = try PythonServer.interpreter(stdlibOnly: false)
        let script = """
            import hashlib, json, sys
            from PIL import Image
            image = Image.open(sys.argv[1]); image.load()
            rgb = image.convert("RGB")
            print(json.dumps({"width": image.width, "height": image.height, "mode": image.mode,
                              "center": list(rgb.getpixel((image.width // 2, image.height // 2))),
                              "pixels": hashlib.sha256(rgb.tobytes()).hexdigest()}))
            """
        let result = try Subprocess.run(URL(fileURLWithPath: python), ["-c", script, file])
        guard result.status == 0 else { throw PythonServer.StartFailure(description: "PIL could not read the PNG: \(result.standardError)") }
        return try JSONDecoder().decode(DecodedPNG.self, from: Data(result.standardOutput.utf8))
    }

    /// `pngcheck` (Debian), a second independent reader, when installed.
    static func pngcheck(_ png: Data) throws -> ProcessResult? {
        guard let pngcheck = Subprocess.which("pngcheck") else { return nil }
        let scratch = try TemporaryDirectory()
        let file = scratch.path("map.png")
        try png.write(to: URL(fileURLWithPath: file))
        return try Subprocess.run(pngcheck, [file])
    }
}

extension MapSettings {
    /// Settings for a test: the local tile server, the given cache file (or memory only).
    static func local(_ server: TileTestServer, cache: String?, width: Int = 600, height: Int = 400, zoom: Int = 16,
                      budget: Duration = .seconds(60)) -> MapSettings {
        MapSettings(width: width, height: height, zoom: zoom, tileURL: server.tileURL, contact: "maps-test@example.org",
                    cachePath: cache, cacheSizeBytes: 50 << 20, timeBudget: budget)
    }
}

/// Collects the warnings a renderer gives.
final class WarningLog: Sendable {
    private let lines = Mutex<[String]>([])
    var all: [String] { lines.withLock { $0 } }
    var sink: @Sendable (String) -> Void { { line in self.lines.withLock { $0.append(line) } } }
}

func assertMapError(_ expected: MapError, file: StaticString = #filePath, line: UInt = #line,
                    _ body: () async throws -> MapImage) async {
    do {
        let image = try await body()
        XCTFail("expected \(expected), got an image of \(image.width)×\(image.height)", file: file, line: line)
    } catch {
        XCTAssertEqual(error as? MapError, expected, "\(error)", file: file, line: line)
    }
}

extension EnlogHome {
    /// A home drawing maps from the local tile server, without address lookups, signed in to the
    /// local Evernote test server with the test token.
    static func withMaps(from tiles: TileTestServer, signedInTo evernote: PythonServer, contact: String) throws -> EnlogHome {
        var home = try EnlogHome()
        home.extraEnvironment = ["ENLOG_MAP_STYLE": "tiles", "ENLOG_MAP_TILE_URL": tiles.tileURL,
                                 "ENLOG_GEOCODING_ENABLED": "false", "XDG_CACHE_HOME": home.directory.path("cache"),
                                 "ENLOG_GEOCODING_CONTACT": contact]
        var signingIn = home
        signingIn.extraEnvironment["ENLOG_TOKEN"] = SyncCommandTests.token
        let result = try signingIn.run("auth", "token", "--service", "custom", "--host", evernote.baseURL)
        guard result.status == 0 else { throw PythonServer.StartFailure(description: "auth token: \(result.standardError)") }
        return home
    }
}

/// A test case with its own tile server and Evernote test server, and a home signed in to the
/// one that draws maps from the other: the set-up of every test that syncs notes carrying maps.
class TilesAndEvernoteTestCase: XCTestCase {
    var tiles: TileTestServer!
    var evernote: PythonServer!
    var home: EnlogHome!

    /// The contact the tile requests carry (the User-Agent names it), one per suite.
    class var contact: String { "enlog-test@example.org" }

    override func setUp() async throws {
        tiles = try TileTestServer()
        evernote = try PythonServer(script: "evernote_server.py", arguments: ["--token", SyncCommandTests.token])
        home = try EnlogHome.withMaps(from: tiles, signedInTo: evernote, contact: Self.contact)
    }

    override func tearDown() async throws {
        tiles?.stop()
        evernote?.stop()
    }

    /// The notes the Evernote test server holds, as its SDK classes decoded them.
    func serverNotes() async throws -> [[String: Any]] {
        try await fetchJSON(evernote.baseURL + "/_test/notes") as? [[String: Any]] ?? []
    }
}
