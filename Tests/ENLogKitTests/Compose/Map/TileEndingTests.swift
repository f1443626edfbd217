import Foundation
import Testing
@testable import Compose

/// Whatever follows a PNG's image data, decoding it ends: libpng's progressive reader, stopped
/// from the row callback with png_process_data_pause, lost count of the bytes it had and read
/// chunks out of nothing until an IEND came, for ever when none did (a fuzzer's find: a 1×1 PNG
/// with a chunk after its image data, Tests/Fixtures/fuzz/tile/). Every kind of PNG, at 1, 16 and
/// 256 pixels, ending without IEND, with a chunk instead of it, with chunks after it, or cut in
/// its image data, is decoded both ways (as an image of its own, and as a tile into a canvas) in
/// a child process under a CPU-time limit, which a hang exceeds and a loaded machine does not.
@Suite("PNGs ending in every way")
struct TileEndingTests {
    enum Ending: String, CaseIterable {
        case withoutIEND, unknownChunkInsteadOfIEND, chunksAfterIEND, cutInTheImageData
    }

    /// A zero-length ancillary chunk, `zzZz`, with its CRC.
    static let unknownChunk: [UInt8] = [0, 0, 0, 0] + Array("zzZz".utf8) + [0x8C, 0x24, 0x5F, 0x9E]

    static func ended(_ png: [UInt8], _ ending: Ending) -> [UInt8] {
        let withoutIEND = Array(png.dropLast(12))   // pypng writes IEND last, and nothing after it
        switch ending {
        case .withoutIEND: return withoutIEND
        case .unknownChunkInsteadOfIEND: return withoutIEND + unknownChunk
        case .chunksAfterIEND: return png + unknownChunk + unknownChunk
        case .cutInTheImageData:
            let data = png.count - 12 - 4   // the last IDAT's CRC starts here
            return Array(png.prefix(data - max(1, (data - 33) / 2)))
        }
    }

    @Test func everyKindEndsDecodingWhateverFollowsItsImageData() async throws {
        let python = try PythonServer.interpreter(stdlibOnly: false)
        let script = PythonServer.supportDirectory.appendingPathComponent("png_kinds.py").path
        let directory = try TemporaryDirectory()
        for side in [1, 16, 256] {
            let written = try Subprocess.run(URL(fileURLWithPath: python), [script, "write", directory.url.path, "\(side)"])
            try #require(written.status == 0, "\(written.standardError)")
            for name in try FileManager.default.contentsOfDirectory(atPath: directory.url.path) where name.hasSuffix(".png") {
                let png = try [UInt8](Data(contentsOf: directory.url.appendingPathComponent(name)))
                for ending in Ending.allCases {
                    let variant = directory.path("variants/\(side)-\(ending.rawValue)-\(name)")
                    try FileManager.default.createDirectory(atPath: (variant as NSString).deletingLastPathComponent,
                                                            withIntermediateDirectories: true)
                    try Data(Self.ended(png, ending)).write(to: URL(fileURLWithPath: variant))
                }
                try FileManager.default.removeItem(at: directory.url.appendingPathComponent(name))
            }
        }
        await #expect(processExitsWith: .success, "SIGXCPU (24): a decoding spun for 30 CPU seconds") {
            [folder = directory.path("variants") as String] in
            guard lowerSoftLimit(RLIMIT_CORE, to: 0), lowerSoftLimit(RLIMIT_CPU, to: 30) else { exit(2) }
            var wrong: [String] = []
            for name in try FileManager.default.contentsOfDirectory(atPath: folder).sorted() {
                let png = try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(folder)/\(name)")))
                let side = Int(name.prefix { $0.isNumber })!
                let canvas = try MapCanvas(width: 2 * side, height: 2 * side)
                let asImage = CairoPNG.decode(png).map { [$0.width, $0.height] }
                let asTile = Result { () throws(MapCanvas.PNGPlacementFailure) in
                    try canvas.paintPNGs([MapCanvas.PNGPlacement(bytes: png, x: side / 2, y: -side / 3)], size: side)
                }
                // Cut in its image data a PNG lacks rows; any other ending leaves them all there.
                let complete = !name.contains(Ending.cutInTheImageData.rawValue)
                if (try? asImage.get()) != (complete ? [side, side] : nil) { wrong.append("\(name) as an image: \(asImage)") }
                if (try? asTile.get()) == nil ? complete : !complete { wrong.append("\(name) as a tile: \(asTile)") }
            }
            if !wrong.isEmpty {
                Issue.record(Comment(rawValue: wrong.joined(separator: "\n")))
                exit(EXIT_FAILURE)
            }
        }
    }
}
