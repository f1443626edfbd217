import CCairo
import CMapShim
import Crypto
import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Capture

/// Pixels in cairo's layout (32-bit native-endian words: ARGB premultiplied, or xRGB when
/// opaque), `width * 4` bytes a row, held in a Swift array: a value that can cross threads,
/// unlike a cairo surface, so tiles can be decoded in parallel and strips kept in a cache.
struct DecodedImage: Sendable, Equatable {
    let width: Int
    let height: Int
    let hasAlpha: Bool
    let pixels: [UInt8]

    var stride: Int { width * 4 }

    init(width: Int, height: Int, hasAlpha: Bool, pixels: [UInt8]) {
        self.width = width
        self.height = height
        self.hasAlpha = hasAlpha
        self.pixels = pixels
    }

    /// Copies an image surface's pixels (cairo 1.16 decodes PNGs to ARGB32 or RGB24 only).
    init?(copying image: CairoImage) {
        let surface = image.surface
        cairo_surface_flush(surface)
        let format = cairo_image_surface_get_format(surface)
        guard format == CAIRO_FORMAT_ARGB32 || format == CAIRO_FORMAT_RGB24,
              let data = cairo_image_surface_get_data(surface) else { return nil }
        let width = image.width, height = image.height, rowBytes = width * 4
        let stride = Int(cairo_image_surface_get_stride(surface))
        self.init(width: width, height: height, hasAlpha: format == CAIRO_FORMAT_ARGB32,
                  pixels: [UInt8](unsafeUninitializedCapacity: rowBytes * height) { buffer, count in
                      for row in 0..<height {
                          (buffer.baseAddress! + row * rowBytes).update(from: data + row * stride, count: rowBytes)
                      }
                      count = rowBytes * height
                  })
    }

    /// A cairo surface over the pixels, valid only inside `body`.
    func withSurface<T>(_ body: (OpaquePointer) -> T) -> T {
        pixels.withUnsafeBufferPointer { buffer in
            // cairo only reads a surface used as a source; it is finished before the buffer goes.
            let surface = cairo_image_surface_create_for_data(
                UnsafeMutablePointer(mutating: buffer.baseAddress!), hasAlpha ? CAIRO_FORMAT_ARGB32 : CAIRO_FORMAT_RGB24,
                Int32(width), Int32(height), Int32(stride))!
            defer {
                cairo_surface_finish(surface)
                cairo_surface_destroy(surface)
            }
            return body(surface)
        }
    }
}

extension CairoPNG {
    /// Decodes `bytes` into pixels that may cross threads.
    static func decodePixels(_ bytes: [UInt8]) -> Result<DecodedImage, DecodeFailure> {
        decode(bytes).flatMap { image in
            DecodedImage(copying: image).map { .success($0) }
                ?? .failure(DecodeFailure(detail: "an image decoded to an unexpected pixel format"))
        }
    }
}

/// The tile licence's attribution as a strip of pixels with alpha: the translucent white band
/// and the text on it, ready to composite on a map's bottom right. The text never changes, so
/// the strip is drawn once and kept in the tile cache: a new map then never starts FreeType
/// (loading the font, rasterizing glyphs), a few milliseconds of a process's first map.
struct AttributionStrip: Sendable, Equatable {
    let image: DecodedImage

    static let fontSize = 11.0
    static let padding = 3.0
    /// Bump whenever the drawing changes (colours, band, placement): the cache key names it.
    static let version = 1

    /// DejaVu Sans (Debian fonts-dejavu-core; the second path is Fedora's), what fontconfig
    /// picks for "sans-serif" on Debian anyway. Loaded from its file by FreeType, the text skips
    /// fontconfig's start-up (~5 ms). Without it, cairo's "sans-serif" through fontconfig.
    static let fontFiles = ["/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
                            "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf"]

    static func fontFace() -> OpaquePointer? {
        let paths = fontFiles.map { strdup($0) }
        defer { paths.forEach { free($0) } }
        return paths.map { UnsafePointer($0) }.withUnsafeBufferPointer {
            enlog_font_face_from_files($0.baseAddress, Int32($0.count))
        }
    }

    /// Draws `text`; `fromFontFile` is false when no font file could be loaded (fontconfig's
    /// choice was used, which the cache key cannot name: such a strip is not cached).
    static func draw(_ text: String) throws(MapError) -> (strip: AttributionStrip, fromFontFile: Bool) {
        let face = fontFace()
        func withContext<T>(width: Int, height: Int, _ body: (OpaquePointer) -> T) throws(MapError) -> (T, CairoImage) {
            guard let surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, Int32(width), Int32(height)) else {
                throw .rendering("no image surface")
            }
            let image = CairoImage(adopting: surface)
            let context = cairo_create(surface)!
            defer { cairo_destroy(context) }
            if let face {
                cairo_set_font_face(context, face)
            } else {
                cairo_select_font_face(context, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL)
            }
            cairo_set_font_size(context, fontSize)
            let result = body(context)
            let status = cairo_status(context)
            guard status == CAIRO_STATUS_SUCCESS else { throw .rendering("attribution: \(String(cString: cairo_status_to_string(status)))") }
            return (result, image)
        }
        let (advance, _) = try withContext(width: 1, height: 1) { context in
            var extents = cairo_text_extents_t()
            cairo_text_extents(context, text, &extents)
            return extents.x_advance
        }
        let bandWidth = advance + 2 * padding, bandHeight = fontSize + 2 * padding
        // Whole pixels for the strip; the band keeps its fractional left edge, as drawn on the map.
        let width = Int(bandWidth.rounded(.up)), height = Int(bandHeight.rounded(.up))
        let left = Double(width) - bandWidth
        let (_, image) = try withContext(width: width, height: height) { context in
            cairo_rectangle(context, left, 0, bandWidth, bandHeight)
            cairo_set_source_rgba(context, 1, 1, 1, 0.75)
            cairo_fill(context)
            cairo_move_to(context, left + padding, bandHeight - padding - 2)
            cairo_set_source_rgb(context, 0.2, 0.2, 0.2)
            cairo_show_text(context, text)
        }
        guard let pixels = DecodedImage(copying: image) else { throw .rendering("attribution: no pixels") }
        return (AttributionStrip(image: pixels), face != nil)
    }

    /// The strip's name in the tile cache: the drawing, the text, and the identity of every
    /// candidate font file (device, inode, size, modification time), so an updated or replaced
    /// font is never served from a stale strip. nil when no font file exists (nothing to name).
    static func cacheKey(_ text: String, fontFiles: [String] = fontFiles) -> String? {
        var identity = "enlog-attribution \(version) \(fontSize) \(padding) \(1.littleEndian == 1 ? "le" : "be") \(text)\n"
        var found = false
        for path in fontFiles {
            var info = stat()
            if stat(path, &info) == 0 {
                found = true
                identity += "\(path) \(info.st_dev) \(info.st_ino) \(info.st_size) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)\n"
            } else {
                identity += "\(path) -\n"
            }
        }
        return found ? HexText.lowercase(SHA256.hash(data: Data(identity.utf8))) : nil
    }
}
