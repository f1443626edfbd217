import Foundation
import XCTest
@testable import Network
@testable import Compose

/// `enlog map` run as a user runs it: separate processes sharing the tile cache on disk, and
/// bad settings turned into one-line errors with their exit codes.
final class MapCommandTests: XCTestCase {
    var server: TileTestServer!
    var home: TemporaryDirectory!

    override func setUp() async throws {
        server = try TileTestServer()
        home = try TemporaryDirectory()
    }

    override func tearDown() async throws { server?.stop() }

    func environment(_ extra: [String: String] = [:]) -> [String: String] {
        var environment = ["PATH": "/usr/bin:/bin", "HOME": home.url.path, "XDG_CONFIG_HOME": home.path("config"),
                           "XDG_CACHE_HOME": home.path("cache"), "TZ": "UTC",
                           "ENLOG_MAP_TILE_URL": server.tileURL, "ENLOG_GEOCODING_CONTACT": "cli-test@example.org"]
        environment.merge(extra) { $1 }
        return environment
    }

    func enlog(_ arguments: [String], _ extra: [String: String] = [:]) throws -> ProcessResult {
        try Subprocess.run(Subprocess.enlog, arguments, environment: environment(extra))
    }

    func testSecondProcessFindsTheTilesInTheDiskCache() async throws {
        let first = try enlog(["map", "--at", "48.858400,2.294500", "--accuracy", "20", "-o", home.path("first.png")])
        XCTAssertEqual(first.status, 0, first.standardError)
        let downloaded = try await server.log().requests.count
        XCTAssertGreaterThan(downloaded, 0)
        XCTAssertTrue(FileManager.default.fileExists(atPath: home.path("cache/enlog/tiles.sqlite")))

        let second = try enlog(["map", "--at", "48.858400,2.294500", "--accuracy", "20", "-o", home.path("second.png")])
        XCTAssertEqual(second.status, 0, second.standardError)
        XCTAssertTrue(second.standardOutput.contains("\(downloaded) from disk, 0 downloaded"), second.standardOutput)
        XCTAssertTrue(second.standardOutput.contains("; the picture itself from the cache"), second.standardOutput)
        XCTAssertFalse(first.standardOutput.contains("from the cache"), first.standardOutput)
        let after = try await server.log().requests.count
        XCTAssertEqual(after, downloaded, "the second process asked the server nothing")
        XCTAssertEqual(try Data(contentsOf: home.url.appendingPathComponent("first.png")),
                       try Data(contentsOf: home.url.appendingPathComponent("second.png")))

        let decoded = try IndependentDecoder.decode(try Data(contentsOf: home.url.appendingPathComponent("second.png")))
        XCTAssertEqual([decoded.width, decoded.height], [600, 400])
        let marker = MapCanvas.markerColor
        XCTAssertEqual(decoded.center, [Int(marker.red), Int(marker.green), Int(marker.blue)])
    }

    /// Every process is the first to open the cache, so SQLite never restarts its WAL on its own:
    /// without truncation it would grow by each new map (~190 KB of a city's) for good.
    func testTheTileCachesWALStaysShortAcrossProcesses() async throws {
        let city = try TileTestServer(city: true)
        defer { city.stop() }
        var largest = 0
        for run in 0..<10 {
            let at = String(format: "48.858400,%.6f", 2.2945 + 3e-5 * Double(run))   // a pixel and a half apart
            let result = try enlog(["map", "--at", at, "-o", home.path("map.png")], ["ENLOG_MAP_TILE_URL": city.tileURL])
            XCTAssertEqual(result.status, 0, result.standardError)
            let wal = try? FileManager.default.attributesOfItem(atPath: home.path("cache/enlog/tiles.sqlite-wal"))
            largest = max(largest, (wal?[.size] as? Int) ?? 0)
        }
        let picture = try Data(contentsOf: home.url.appendingPathComponent("map.png")).count
        XCTAssertGreaterThan(picture, 100_000, "city tiles make maps of a real one's size")
        XCTAssertLessThanOrEqual(largest, TileDiskCache.walLimit + 2 * picture)
    }

    /// `-o` onto something that is not a regular file is written through, never replaced by a
    /// rename: a FIFO stays a FIFO (as /dev/null stays a device), a symbolic link stays a link.
    func testOutputThatIsNotARegularFileIsWrittenInPlace() async throws {
        let fifo = home.path("pipe.png")
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let received = home.path("received.png")
        // The reader: the FIFO opened for reading before enlog opens it for writing.
        let reader = try ChildProcess(URL(fileURLWithPath: "/bin/sh"), ["-c", "cat \"$0\" > \"$1\"", fifo, received])
        let result = try enlog(["map", "--at", "48.858400,2.294500", "-o", fifo])
        XCTAssertEqual(result.status, 0, result.standardError)
        var status = stat()
        XCTAssertEqual(lstat(fifo, &status), 0)
        guard status.st_mode & S_IFMT == S_IFIFO else {
            reader.kill()   // nobody will ever write to the FIFO it waits on
            return XCTFail("the FIFO was replaced by a regular file")
        }
        XCTAssertEqual(reader.wait(), 0)
        XCTAssertEqual(try IndependentDecoder.decode(try Data(contentsOf: URL(fileURLWithPath: received))).width, 600)

        let target = try home.file("target.png", contents: "old")
        try FileManager.default.createSymbolicLink(atPath: home.path("link.png"), withDestinationPath: target.path)
        let linked = try enlog(["map", "--at", "48.858400,2.294500", "-o", home.path("link.png")])
        XCTAssertEqual(linked.status, 0, linked.standardError)
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: home.path("link.png")), target.path)
        XCTAssertEqual(try IndependentDecoder.decode(try Data(contentsOf: target)).width, 600)
    }

    func testConfiguredSizeAndZoomAndThePNGOnStandardOutput() async throws {
        _ = try home.file("config/enlog/config.toml", contents: "[map]\nwidth = 320\nheight = 200\nzoom = 12\n")
        let decoded = try IndependentDecoder.decode(try pngFromStdout())
        XCTAssertEqual([decoded.width, decoded.height], [320, 200])
        let paths = try await server.log().paths
        XCTAssertFalse(paths.isEmpty)
        XCTAssertTrue(paths.allSatisfy { $0.hasPrefix("/12/") }, "\(paths)")
    }

    /// stdout captured as text would mangle the binary: run again into a file the shell way.
    private func pngFromStdout() throws -> Data {
        let output = home.path("stdout.png")
        let result = try Subprocess.run(URL(fileURLWithPath: "/bin/sh"), ["-c", "\"$0\" map --at -33.8568,151.2153 > \"$1\"",
                                                                          Subprocess.enlog.path, output], environment: environment())
        XCTAssertEqual(result.status, 0, result.standardError)
        return try Data(contentsOf: URL(fileURLWithPath: output))
    }

    func testBadSettingsAndServersAreOneLineErrorsWithTheirExitCodes() throws {
        let cases: [(arguments: [String], environment: [String: String], status: Int32, says: String)] = [
            (["--zoom", "20"], [:], 2, "--zoom is '20'; it must be a whole number of zoom levels from 0 to 19"),
            ([], ["ENLOG_MAP_ZOOM": "-1"], 78, "ENLOG_MAP_ZOOM is '-1'; it must be a whole number of zoom levels from 0 to 19"),
            (["--width", "0"], [:], 2, "--width is '0'; it must be a whole number of pixels from 16 to 4096"),
            (["--width", "100000"], [:], 2, "--width is '100000'; it must be a whole number of pixels from 16 to 4096"),
            ([], ["ENLOG_MAP_HEIGHT": "12.5"], 78, "ENLOG_MAP_HEIGHT is '12.5'; it must be a whole number"),
            ([], ["ENLOG_MAP_STYLE": "satellite"], 78, "ENLOG_MAP_STYLE must be tiles, static or none"),
            ([], ["ENLOG_MAP_STYLE": "none"], 78, "no map image is made with map.style = none"),
            ([], ["ENLOG_MAP_STYLE": "static"], 78, "map.style = static needs note.static_map_url"),
            ([], ["ENLOG_MAP_TILE_URL": "\(server.baseURL)/tiles.png"], 78, "ENLOG_MAP_TILE_URL must contain {z}, {x} and {y}"),
            ([], ["ENLOG_MAP_TILE_URL": "ftp://127.0.0.1/{z}/{x}/{y}.png"], 78, "ENLOG_MAP_TILE_URL is not usable"),
            ([], ["ENLOG_MAP_TILE_URL": "http://192.0.2.1/{z}/{x}/{y}.png"], 78, "refusing to send an unencrypted http:// request"),
            ([], ["ENLOG_MAP_CACHE_SIZE": "-5"], 78, "ENLOG_MAP_CACHE_SIZE is '-5'; it must be a number of megabytes from 0 to 100000"),
            ([], ["ENLOG_MAP_TILE_URL": "http://127.0.0.1:1/{z}/{x}/{y}.png"], 69, "the map server http://127.0.0.1:1 cannot be reached"),
            (["--at", "91,0"], [:], 65, "latitude 91 is outside -90...90"),
        ]
        for item in cases {
            let arguments = ["map"] + (item.arguments.contains("--at") ? [] : ["--at", "35.68,139.76"]) + item.arguments + ["-o", home.path("x.png")]
            let result = try enlog(arguments, item.environment)
            XCTAssertEqual(result.status, item.status, "\(item): \(result.standardError)")
            XCTAssertEqual(result.standardErrorLines.count, 1, result.standardError)
            XCTAssertTrue(result.standardError.hasPrefix("enlog: error: "), result.standardError)
            XCTAssertTrue(result.standardError.contains(item.says), "\(item.says) not in: \(result.standardError)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: home.path("x.png")), "no file from a failed map")
        }
    }

    /// README's table: a server failing (5xx) is 69, an answer that is not the protocol 76.
    func testTileServerErrorsExitAsTheTableSaysAndWriteNoFile() async throws {
        for (mode, status) in [("status=404", Int32(76)), ("status=500", 69), ("garbage=html", 76)] {
            try await server.reset()
            try await server.configure(mode)
            let result = try enlog(["map", "--at", "35.68,139.76", "-o", home.path("x.png")])
            XCTAssertEqual(result.status, status, "\(mode): \(result.standardError)")
            XCTAssertEqual(result.standardErrorLines.count, 1, result.standardError)
            XCTAssertFalse(FileManager.default.fileExists(atPath: home.path("x.png")))
        }
    }

    func testUnwritableCacheDirectoryWarnsOnceAndStillWritesTheMap() throws {
        // XDG_CACHE_HOME names a file: no cache directory can be made there, even by root.
        _ = try home.file("cache", contents: "a file, not a directory")
        let result = try enlog(["map", "--at", "35.68,139.76", "-o", home.path("x.png")])
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertEqual(result.standardErrorLines.count, 1, result.standardError)
        XCTAssertTrue(result.standardError.hasPrefix("enlog: warning: tile cache off"), result.standardError)
        XCTAssertTrue(FileManager.default.fileExists(atPath: home.path("x.png")))
    }
}

/// Issue 20: redirects from a tile server are followed, a few at most, never from https to
/// http nor to this machine from elsewhere (the second cannot be shown with servers that are
/// all on loopback: TileRedirects' rule is checked directly).
extension MapCommandTests {
    func testTileServerRedirectsAreFollowedWithinBounds() async throws {
        for (mode, status, says) in [("once", Int32(0), ""), ("loop", 76, "more than 3 redirects"),
                                     ("away", 76, "a redirect to http://198.51.100.7")] {
            try await server.reset()
            try await server.configure("redirect=\(mode)")
            let result = try enlog(["map", "--at", "35.68,139.76", "-o", home.path("x-\(mode).png")],
                                   ["XDG_CACHE_HOME": home.path("cache-\(mode)")])
            XCTAssertEqual(result.status, status, "\(mode): \(result.standardError)")
            XCTAssertTrue(says.isEmpty || result.standardError.contains(says), "\(mode): \(result.standardError)")
        }
        XCTAssertThrowsError(try TileRedirects.nextURL(from: "https://tiles.example.org/1/2/3.png", to: "http://127.0.0.1:8080/admin"))
        XCTAssertThrowsError(try TileRedirects.nextURL(from: "https://tiles.example.org/1/2/3.png", to: "https://localhost/admin")) { error in
            XCTAssertEqual(error as? TileRedirects.Refusal, .toLoopback("https://localhost"))
        }
        XCTAssertEqual(try TileRedirects.nextURL(from: "http://127.0.0.1:9/1/2/3.png", to: "/moved/1/2/3.png"), "http://127.0.0.1:9/moved/1/2/3.png")
        // Issue 32: only within the origin, as the other clients: another host, port or scheme is refused.
        for (from, to) in [("https://a.example.org/t.png", "https://b.example.org/t.png"),
                           ("https://a.example.org/t.png", "https://a.example.org:8443/t.png"),
                           ("https://a.example.org/t.png", "https://169.254.169.254/latest/meta-data/"),
                           ("http://127.0.0.1:9/t.png", "http://127.0.0.1:10/t.png"),
                           ("http://127.0.0.1:9/t.png", "https://127.0.0.1:9/t.png")] {
            XCTAssertThrowsError(try TileRedirects.nextURL(from: from, to: to), "\(from) → \(to)") { error in
                XCTAssertEqual(error as? TileRedirects.Refusal, .otherOrigin(HTTPURLPolicy.describe(to)), "\(from) → \(to)")
            }
        }
    }
}
