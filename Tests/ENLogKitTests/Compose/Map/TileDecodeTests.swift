import Foundation
import XCTest
@testable import Compose

/// Tiles are decoded by libpng straight into the map's canvas (`MapCanvas.paintPNG`). Every kind
/// of PNG a tile server may send is written by an independent encoder (pypng), drawn partly
/// outside the canvas, and the canvas is compared pixel by pixel with what pypng reads from the
/// tile blended over the canvas's background (Pillow reading the canvas).
final class TileDecodeTests: XCTestCase {
    /// `enlog map`'s own peak (`MeasuredRun`) with the hostile images: 46 to 63 MB. The bomb
    /// inflated to its end would add 200 MB, the huge chunk 2 GB.
    static let mapPeakKilobytesBound = 128 << 10

    static let kinds = ["palette", "palette_trns", "palette_interlaced", "grey1", "grey8", "grey16", "greyalpha8",
                        "rgb8", "rgb16", "rgba8", "rgba16", "rgb8_interlaced"]

    func testEveryKindOfPNGTileIsDrawnAsAnIndependentReaderSeesIt() throws {
        let python = try PythonServer.interpreter(stdlibOnly: false)
        let script = PythonServer.supportDirectory.appendingPathComponent("png_kinds.py").path
        let directory = try TemporaryDirectory()
        let written = try Subprocess.run(URL(fileURLWithPath: python), [script, "write", directory.url.path])
        XCTAssertEqual(written.status, 0, written.standardError)
        // Clipped on the left and at the bottom (rows below the canvas are never inflated), and
        // on the top and right: every edge of the clip.
        for (kind, (x, y)) in zip(Self.kinds, [(-50, 30), (70, -100), (200, 60)].cycled(to: Self.kinds.count)) {
            let tile = try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory.path("\(kind).png"))))
            let canvas = try MapCanvas(width: 300, height: 200)
            try canvas.paintPNG(tile, x: x, y: y, size: WebMercator.tileSize)
            let drawn = directory.path("\(kind)-canvas.png")
            try Data(canvas.encoded()).write(to: URL(fileURLWithPath: drawn))
            let compared = try Subprocess.run(URL(fileURLWithPath: python),
                                              [script, "compare", directory.path("\(kind).png"), drawn, "\(x)", "\(y)"])
            XCTAssertEqual(compared.status, 0, compared.standardError)
            let result = try JSONDecoder().decode(Comparison.self, from: Data(compared.standardOutput.utf8))
            XCTAssertEqual(result.pixels, 300 * 200, kind)
            // 1: the blend's rounding; an unblended, shifted or mis-expanded pixel is off by far more.
            XCTAssertLessThanOrEqual(result.maxDifference, 1, "\(kind) at \(x),\(y)")
        }
    }

    func testABrokenTileIsAnErrorWithLibpngsReason() throws {
        let canvas = try MapCanvas(width: 300, height: 200)
        let python = try PythonServer.interpreter(stdlibOnly: false)
        let directory = try TemporaryDirectory()
        let written = try Subprocess.run(URL(fileURLWithPath: python),
                                         [PythonServer.supportDirectory.appendingPathComponent("png_kinds.py").path, "write", directory.url.path])
        XCTAssertEqual(written.status, 0, written.standardError)
        let tile = try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory.path("rgb8.png"))))
        // Cut in the middle of its image data, at the top of the canvas: the rows it lacks are needed.
        XCTAssertThrowsError(try canvas.paintPNG(Array(tile.prefix(tile.count / 2)), x: 0, y: 0, size: WebMercator.tileSize)) { error in
            let detail = (error as? CairoPNG.DecodeFailure)?.detail ?? ""
            XCTAssertTrue(detail.hasPrefix("not a decodable PNG: "), detail)
        }
        var flipped = tile
        flipped[29] ^= 0x01          // the interlace byte of IHDR: its CRC no longer matches
        XCTAssertThrowsError(try canvas.paintPNG(flipped, x: 0, y: 0, size: WebMercator.tileSize)) { error in
            XCTAssertTrue(((error as? CairoPNG.DecodeFailure)?.detail ?? "").contains("CRC"), "\(error)")
        }
        XCTAssertThrowsError(try canvas.paintPNG(Array("<html>busy</html>".utf8), x: 0, y: 0, size: WebMercator.tileSize)) { error in
            XCTAssertEqual((error as? CairoPNG.DecodeFailure)?.detail, "no PNG signature (17 bytes)")
        }
    }

    /// What a hostile server sends costs a map bounded memory and CPU, drawn from tiles or
    /// downloaded as one static image: a 41-byte PNG whose text chunk claims 2 GB (libpng used to
    /// allocate and zero it: 4 GB and 20 s a map) is refused as it is, and a tile whose image data
    /// inflates 200 MB past its last row (once inflated to the end: 8 s of CPU a map) is drawn
    /// without it. Measured on the `enlog map` process itself, by the kernel.
    func testHostileImagesCostAMapBoundedMemoryAndCPU() async throws {
        let server = try TileTestServer()
        defer { server.stop() }
        let home = try TemporaryDirectory()
        for (kind, style) in [("hugechunk", "tiles"), ("hugechunk", "static"), ("bomb", "tiles"), ("bomb", "static")] {
            try await server.configure("garbage=\(kind)")
            let environment = ["PATH=/usr/bin:/bin", "HOME=\(home.url.path)", "TZ=UTC",
                               "XDG_CONFIG_HOME=\(home.path("config"))", "XDG_CACHE_HOME=\(home.path("cache-\(kind)-\(style)"))",
                               "ENLOG_MAP_STYLE=\(style)", "ENLOG_MAP_TILE_URL=\(server.tileURL)",
                               "ENLOG_NOTE_STATIC_MAP_URL=\(server.baseURL)/static?center={lat},{lon}&key={key}",
                               "ENLOG_NOTE_STATIC_MAP_KEY=k", "ENLOG_GEOCODING_CONTACT=decode-test@example.org"]
            let child = try ChildProcess(Subprocess.enlog, ["map", "--at", "48.858400,2.294500", "-o", home.path("map.png")],
                                         environment: environment, measuringUsage: true)
            let (status, output, measured) = child.finishWithUsage()
            let usage = try XCTUnwrap(measured, "\(kind) as \(style): no usage reported")
            let case_ = "\(kind) as \(style)"
            if kind == "bomb" {
                XCTAssertEqual(status, 0, "\(case_): \(output)")
            } else {
                XCTAssertEqual(status, 76, "\(case_): \(output)")
                XCTAssertTrue(output.contains("its tEXt chunk claims 2147483632 bytes where 4 follow"), "\(case_): \(output)")
            }
            XCTAssertLessThan(usage.peakKilobytes, Self.mapPeakKilobytesBound, "\(case_): peak memory")
            XCTAssertLessThan(usage.cpuSeconds, 3, "\(case_): CPU seconds")
        }
    }

    /// Both decoders (tiles into the canvas, any image into a surface of its own) refuse a chunk
    /// longer than the body, and draw the bomb's rows as any tile's.
    func testBothDecodersRefuseAChunkLongerThanTheBodyAndStopAtTheLastRow() throws {
        let python = try PythonServer.interpreter(stdlibOnly: false)
        let script = """
            import sys; sys.path.insert(0, sys.argv[1]); import tile_server
            open(sys.argv[3], "wb").write(tile_server.HOSTILE[sys.argv[2]]())
            """
        let directory = try TemporaryDirectory()
        for kind in ["hugechunk", "bomb"] {
            let written = try Subprocess.run(URL(fileURLWithPath: python),
                                             ["-c", script, PythonServer.supportDirectory.path, kind, directory.path(kind)])
            XCTAssertEqual(written.status, 0, written.standardError)
            let png = try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory.path(kind))))
            let canvas = try MapCanvas(width: 300, height: 200)
            switch kind {
            case "hugechunk":
                let expected = "not a decodable PNG: its tEXt chunk claims 2147483632 bytes where 4 follow"
                XCTAssertThrowsError(try canvas.paintPNG(png, x: 0, y: 0, size: WebMercator.tileSize)) { error in
                    XCTAssertEqual((error as? CairoPNG.DecodeFailure)?.detail, expected)
                }
                XCTAssertEqual(CairoPNG.decode(png).map { _ in "" }, .failure(CairoPNG.DecodeFailure(detail: expected)))
            default:
                XCTAssertNoThrow(try canvas.paintPNG(png, x: 0, y: 0, size: WebMercator.tileSize))
                let image = try CairoPNG.decode(png).get()
                XCTAssertEqual([image.width, image.height], [256, 256])
            }
        }
    }

    private struct Comparison: Decodable {
        let maxDifference: Int
        let pixels: Int
        enum CodingKeys: String, CodingKey {
            case maxDifference = "max_difference"
            case pixels
        }
    }
}

private extension MapCanvas {
    /// One tile, through the batch decoder as a map's tiles go.
    func paintPNG(_ bytes: [UInt8], x: Int, y: Int, size: Int) throws(CairoPNG.DecodeFailure) {
        do {
            try paintPNGs([PNGPlacement(bytes: bytes, x: x, y: y)], size: size)
        } catch {
            throw error.failure
        }
    }
}

private extension Array {
    /// The elements repeated until there are `count`.
    func cycled(to count: Int) -> [Element] { (0..<count).map { self[$0 % self.count] } }
}
