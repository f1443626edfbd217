import CCairo
import CMapShim
import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Capture

/// A decoded image: a cairo image surface, owned (destroyed with this value). Used on one
/// thread at a time, inside one synchronous rendering step.
package final class CairoImage {
    let surface: OpaquePointer
    package var width: Int { Int(cairo_image_surface_get_width(surface)) }
    package var height: Int { Int(cairo_image_surface_get_height(surface)) }

    init(adopting surface: OpaquePointer) { self.surface = surface }
    deinit { cairo_surface_destroy(surface) }
}

/// PNG in and out of memory: decoded by libpng under CMapShim's limits, encoded by libpng or cairo.
package enum CairoPNG {
    /// The largest side a downloaded image may declare: a tile is 256 (512 for "retina" tiles),
    /// a static map a few hundred (the services' own largest are 1280); a header claiming more is
    /// refused before anything is allocated.
    static let maximumSide = 2048

    /// Decodes `bytes`, or says in a few words why they are not a usable PNG.
    package static func decode(_ bytes: [UInt8]) -> Result<CairoImage, DecodeFailure> {
        if let problem = structureProblem(bytes) { return .failure(DecodeFailure(detail: problem)) }
        var message = [CChar](repeating: 0, count: 160)
        let surface = bytes.withUnsafeBufferPointer { buffer in
            enlog_png_decode_image(buffer.baseAddress, buffer.count, Int32(maximumSide), &message, message.count)
        }
        guard let surface else {
            return .failure(DecodeFailure(detail: "not a decodable PNG: \(String(nulTerminated: message))"))
        }
        return .success(CairoImage(adopting: surface))
    }

    package struct DecodeFailure: Error, Equatable { package let detail: String }

    /// What libpng is never given: bytes without the signature, an image without pixels or
    /// larger than `maximumSide`, and a chunk claiming more bytes than follow its header. libpng
    /// allocates (and zeroes) the length a text chunk's header claims before reading it, 2 GB for
    /// a 40-byte body: here every length must fit in what was received.
    package static func structureProblem(_ bytes: [UInt8]) -> String? {
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        guard bytes.count >= 24, Array(bytes[0..<8]) == signature else {
            return bytes.isEmpty ? "an empty body" : "no PNG signature (\(bytes.count) bytes)"
        }
        func bigEndian(_ offset: Int) -> Int {
            bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
        }
        let width = bigEndian(16), height = bigEndian(20)
        if width == 0 || height == 0 { return "a PNG of \(width)×\(height) pixels: an image without pixels" }
        if width > maximumSide || height > maximumSide {
            return "a PNG of \(width)×\(height) pixels, larger than \(maximumSide)"
        }
        var offset = signature.count
        while offset < bytes.count {
            let left = bytes.count - offset
            guard left >= 12 else { return "not a decodable PNG: it ends inside a chunk's header" }
            let length = bigEndian(offset), type = bytes[offset + 4..<offset + 8]
            let name = type.allSatisfy { (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }
                ? String(decoding: type, as: UTF8.self) : "unnamed"
            // The header (8) and the CRC (4) around the data.
            guard length <= left - 12 else {
                return "not a decodable PNG: its \(name) chunk claims \(length) bytes where \(left - 12) follow"
            }
            if name == "IEND" { break }
            offset += 12 + length
        }
        return nil
    }

    /// With rows left unfiltered (see CMapShim), level 3 gives a busy city map 25 % smaller than
    /// cairo's writer (all filters, level 6) in a quarter of its time; the levels above it
    /// halve the speed for 2-7 % fewer bytes.
    static let zlibLevel: Int32 = 3

    /// How many threads decode a map's tiles (9 of 0.3-0.6 ms) and deflate its PNG (in two
    /// halves, so two at most): a core each, at most 4.
    package static let threads = max(1, min(4, ProcessInfo.processInfo.activeProcessorCount))

    /// A map canvas (RGB24) goes through libpng directly; any other surface (a downloaded
    /// static map, which may have alpha) through cairo's writer.
    package static func encode(_ image: CairoImage) throws(MapError) -> [UInt8] {
        cairo_surface_flush(image.surface)
        guard cairo_image_surface_get_format(image.surface) == CAIRO_FORMAT_RGB24,
              let pixels = cairo_image_surface_get_data(image.surface) else { return try encodeWithCairo(image) }
        var buffer = enlog_png_buffer()
        var message = [CChar](repeating: 0, count: 256)
        let status = enlog_png_encode_rgb24(pixels, Int32(image.width), Int32(image.height),
                                            cairo_image_surface_get_stride(image.surface), zlibLevel,
                                            Int32(threads), &buffer, &message, message.count)
        defer { enlog_png_buffer_free(&buffer) }
        guard status == 0, let bytes = buffer.bytes else {
            throw .rendering("PNG encoding: \(String(nulTerminated: message))")
        }
        return Array(UnsafeBufferPointer(start: bytes, count: buffer.count))
    }

    static func encodeWithCairo(_ image: CairoImage) throws(MapError) -> [UInt8] {
        let writer = ByteWriter()
        let status = withExtendedLifetime(writer) {
            cairo_surface_write_to_png_stream(image.surface, writeCallback, Unmanaged.passUnretained(writer).toOpaque())
        }
        guard status == CAIRO_STATUS_SUCCESS else {
            throw .rendering("PNG encoding: \(String(cString: cairo_status_to_string(status)))")
        }
        return writer.bytes
    }

    private final class ByteReader {
        let bytes: [UInt8]
        var offset = 0
        init(_ bytes: [UInt8]) { self.bytes = bytes }
    }

    private final class ByteWriter {
        var bytes: [UInt8] = []
    }

    private static let readCallback: cairo_read_func_t = { closure, data, length in
        let reader = Unmanaged<ByteReader>.fromOpaque(closure!).takeUnretainedValue()
        let count = Int(length)
        guard let data, reader.bytes.count - reader.offset >= count else { return CAIRO_STATUS_READ_ERROR }
        reader.bytes.withUnsafeBufferPointer { source in
            data.update(from: source.baseAddress! + reader.offset, count: count)
        }
        reader.offset += count
        return CAIRO_STATUS_SUCCESS
    }

    private static let writeCallback: cairo_write_func_t = { closure, data, length in
        let writer = Unmanaged<ByteWriter>.fromOpaque(closure!).takeUnretainedValue()
        guard let data else { return CAIRO_STATUS_WRITE_ERROR }
        writer.bytes.append(contentsOf: UnsafeBufferPointer(start: data, count: Int(length)))
        return CAIRO_STATUS_SUCCESS
    }
}

/// An RGB image being drawn: tiles painted in, then the accuracy circle, the marker and the
/// attribution on top.
package final class MapCanvas {
    let image: CairoImage
    /// Internal for the drawings other files add (the route of a digest).
    let context: OpaquePointer

    /// The marker's fill, sRGB bytes: a red that no OSM map style uses for large areas.
    static let markerColor: (red: UInt8, green: UInt8, blue: UInt8) = (0xE0, 0x1B, 0x24)
    static let markerRadius = 8.0

    package init(width: Int, height: Int) throws(MapError) {
        guard let surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, Int32(width), Int32(height)) else {
            throw .rendering("no image surface")
        }
        image = CairoImage(adopting: surface)
        guard cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS, let context = cairo_create(surface) else {
            throw .rendering("cannot allocate a \(width)×\(height) image")
        }
        self.context = context
        guard cairo_status(context) == CAIRO_STATUS_SUCCESS else {
            cairo_destroy(context)
            throw .rendering("cannot draw on a \(width)×\(height) image")
        }
        // Where no tile exists (beyond the poles' cut-off): the light grey of OSM's empty areas.
        cairo_set_source_rgb(context, 0.87, 0.87, 0.87)
        cairo_paint(context)
    }

    deinit { cairo_destroy(context) }

    /// Paints a decoded image with its top-left corner at (x, y), scaled to `size` square pixels.
    func paint(_ tile: DecodedImage, x: Int, y: Int, size: Int) {
        tile.withSurface { surface in
            cairo_save(context)
            cairo_translate(context, Double(x), Double(y))
            cairo_rectangle(context, 0, 0, Double(size), Double(size))
            cairo_clip(context)
            if tile.width != size || tile.height != size {
                cairo_scale(context, Double(size) / Double(tile.width), Double(size) / Double(tile.height))
            }
            cairo_set_source_surface(context, surface, 0, 0)
            cairo_paint(context)
            cairo_restore(context)
        }
    }

    /// A PNG to paint and where its top-left corner goes.
    package struct PNGPlacement {
        let bytes: [UInt8]
        let x: Int
        let y: Int

        package init(bytes: [UInt8], x: Int, y: Int) {
            self.bytes = bytes
            self.x = x
            self.y = y
        }
    }

    /// Why `paintPNGs` stopped: the first placement (by index) that could not be decoded.
    package struct PNGPlacementFailure: Error {
        package let index: Int
        package let failure: CairoPNG.DecodeFailure
    }

    /// Decodes PNG tiles straight into the canvas, each scaled to `size` square pixels, on up to
    /// `workers` threads: libpng writes the visible rows into the canvas's own pixels (no
    /// intermediate image, no rows below the canvas inflated); a "retina" tile of twice the side
    /// is decoded to an image of its own and scaled by cairo, a tile of any other size refused.
    /// Placements must not overlap.
    package func paintPNGs(_ placements: [PNGPlacement], size: Int, workers: Int = CairoPNG.threads) throws(PNGPlacementFailure) {
        for (index, placement) in placements.enumerated() {
            if let problem = CairoPNG.structureProblem(placement.bytes) {
                throw PNGPlacementFailure(index: index, failure: CairoPNG.DecodeFailure(detail: problem))
            }
        }
        let surface = image.surface
        guard let pixels = cairo_image_surface_get_data(surface) else {
            throw PNGPlacementFailure(index: 0, failure: CairoPNG.DecodeFailure(detail: "no canvas to draw on"))
        }
        // One buffer for all the tiles' bytes, so that C gets pointers that stay valid together.
        var offsets: [Int] = []
        var all: [UInt8] = []
        all.reserveCapacity(placements.reduce(0) { $0 + $1.bytes.count })
        for placement in placements {
            offsets.append(all.count)
            all.append(contentsOf: placement.bytes)
        }
        cairo_surface_flush(surface)
        var tiles = all.withUnsafeBufferPointer { buffer in
            var tiles = placements.indices.map { index in
                var tile = enlog_png_tile()
                tile.bytes = buffer.baseAddress! + offsets[index]
                tile.count = placements[index].bytes.count
                tile.x = Int32(placements[index].x)
                tile.y = Int32(placements[index].y)
                return tile
            }
            enlog_png_decode_tiles_into_rgb24(&tiles, Int32(tiles.count), Int32(size), pixels, Int32(image.width),
                                              Int32(image.height), cairo_image_surface_get_stride(surface), Int32(workers))
            return tiles
        }
        cairo_surface_mark_dirty(surface)
        for index in tiles.indices {
            switch tiles[index].status {
            case 0:
                continue
            case 1:
                // "Retina" tiles (twice the side) are scaled down; a tile of any other size is not
                // one of this map's and would be drawn distorted: refused, saying its size.
                let decoded: DecodedImage
                do {
                    decoded = try CairoPNG.decodePixels(placements[index].bytes).get()
                } catch {
                    throw PNGPlacementFailure(index: index, failure: error)
                }
                guard decoded.width == decoded.height, decoded.width == 2 * size else {
                    throw PNGPlacementFailure(index: index, failure: CairoPNG.DecodeFailure(
                        detail: "a tile of \(decoded.width)×\(decoded.height) pixels; map tiles are \(size)×\(size) (or \(2 * size)×\(2 * size))"))
                }
                paint(decoded, x: placements[index].x, y: placements[index].y, size: size)
            default:
                let message = withUnsafeBytes(of: &tiles[index].message) { Array($0.bindMemory(to: CChar.self)) }
                throw PNGPlacementFailure(index: index, failure: CairoPNG.DecodeFailure(
                    detail: "not a decodable PNG: \(String(nulTerminated: message))"))
            }
        }
    }

    /// The circle of horizontal accuracy: translucent blue, as map apps show it.
    func drawAccuracy(x: Double, y: Double, radius: Double) {
        cairo_new_path(context)
        cairo_arc(context, x, y, radius, 0, 2 * .pi)
        cairo_set_source_rgba(context, 0.16, 0.45, 0.90, 0.18)
        cairo_fill_preserve(context)
        cairo_set_source_rgba(context, 0.16, 0.45, 0.90, 0.75)
        cairo_set_line_width(context, 1.5)
        cairo_stroke(context)
    }

    func drawMarker(x: Double, y: Double) {
        let color = Self.markerColor
        cairo_new_path(context)
        cairo_arc(context, x, y, Self.markerRadius, 0, 2 * .pi)
        cairo_set_source_rgb(context, Double(color.red) / 255, Double(color.green) / 255, Double(color.blue) / 255)
        cairo_fill_preserve(context)
        cairo_set_source_rgb(context, 1, 1, 1)
        cairo_set_line_width(context, 2.5)
        cairo_stroke(context)
    }

    /// The licence's attribution, bottom right, as OSM's own maps show it.
    func drawAttribution(_ strip: AttributionStrip) {
        strip.image.withSurface { surface in
            cairo_set_source_surface(context, surface, Double(image.width - strip.image.width),
                                     Double(image.height - strip.image.height))
            cairo_paint(context)
        }
    }

    package func encoded() throws(MapError) -> [UInt8] {
        let status = cairo_status(context)
        guard status == CAIRO_STATUS_SUCCESS else { throw .rendering(String(cString: cairo_status_to_string(status))) }
        return try CairoPNG.encode(image)
    }
}
