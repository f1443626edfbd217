import Support
import EvernoteAPI
import Configuration
import Network
import Capture
/// An image's size in pixels read from its header, for the resource's `width`/`height` (Evernote
/// lays the note out with them before the image arrives). Only the formats Evernote shows inline
/// in a note: PNG, JPEG and GIF; anything else, or a header that does not parse, is nil.
package struct ImageSize: Sendable, Equatable {
    package var width: Int
    package var height: Int
}

extension ImageSize {
    /// The size of an image of MIME type `mime` (as libmagic named it).
    package init?(_ bytes: [UInt8], mime: String) {
        let found: ImageSize?
        switch mime {
        case "image/png": found = Self.png(bytes)
        case "image/jpeg": found = Self.jpeg(bytes)
        case "image/gif": found = Self.gif(bytes)
        default: found = nil
        }
        guard let found, found.width > 0, found.height > 0 else { return nil }
        self = found
    }

    private static func bigEndian(_ bytes: [UInt8], _ at: Int, _ count: Int) -> Int? {
        guard at >= 0, at + count <= bytes.count else { return nil }
        return bytes[at..<at + count].reduce(0) { $0 << 8 | Int($1) }
    }

    /// The IHDR chunk comes first: width and height at offsets 16 and 20.
    private static func png(_ bytes: [UInt8]) -> ImageSize? {
        guard bytes.count >= 24, bytes[12..<16].elementsEqual("IHDR".utf8),
              let width = bigEndian(bytes, 16, 4), let height = bigEndian(bytes, 20, 4) else { return nil }
        return ImageSize(width: width, height: height)
    }

    /// Logical screen size, little-endian, after the 6-byte signature.
    private static func gif(_ bytes: [UInt8]) -> ImageSize? {
        guard bytes.count >= 10 else { return nil }
        return ImageSize(width: Int(bytes[6]) | Int(bytes[7]) << 8, height: Int(bytes[8]) | Int(bytes[9]) << 8)
    }

    /// Walks the marker segments to the first start-of-frame (SOF0–SOF15 but DHT, JPG and DAC),
    /// which holds height then width; EXIF thumbnails live inside APP1 and are skipped with it.
    private static func jpeg(_ bytes: [UInt8]) -> ImageSize? {
        guard bytes.count > 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return nil }
        var at = 2
        while at + 4 <= bytes.count {
            guard bytes[at] == 0xFF else { return nil }
            let marker = bytes[at + 1]
            if marker == 0xFF { at += 1; continue }                // fill byte
            if marker == 0x01 || (0xD0...0xD7).contains(marker) { at += 2; continue }   // no length
            guard let length = bigEndian(bytes, at + 2, 2), length >= 2 else { return nil }
            if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) {
                guard let height = bigEndian(bytes, at + 5, 2), let width = bigEndian(bytes, at + 7, 2) else { return nil }
                return ImageSize(width: width, height: height)
            }
            if marker == 0xDA || marker == 0xD9 { return nil }     // scan data or the end before any frame
            at += 2 + length
        }
        return nil
    }
}
