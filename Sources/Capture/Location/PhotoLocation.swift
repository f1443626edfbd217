import CExif
import Foundation
import Support
import Configuration
import Network

/// A photo that cannot say where it was taken.
package enum PhotoError: ENLogError, Equatable {
    case noGPS(path: String)
    /// GPS tags are there but do not make a position (a latitude without its N/S reference…).
    case badGPS(path: String, detail: String)
    /// The GPS fix the camera stored is too old (or too inaccurate) for the moment of the photo.
    case rejected(path: String, rejection: QualityFilter.Rejection)
    /// Not a JPEG, TIFF or PNG: a file whose EXIF tags enlog cannot reach (HEIC, WebP, …).
    case unsupportedFormat(path: String)

    /// One line whatever the photo holds: a GPS reference tag is the camera's text.
    package var reason: String {
        HTTPText.oneLine(unflattenedReason, limit: 1000)
    }

    private var unflattenedReason: String {
        switch self {
        case .noGPS(let path):
            return "photo \(path) has no GPS position in its EXIF tags"
        case .badGPS(let path, let detail):
            return "photo \(path): its GPS tags do not make a position: \(detail)"
        case .rejected(let path, let rejection):
            return "photo \(path): its GPS fix is not usable for the moment it was taken: \(rejection)"
        case .unsupportedFormat(let path):
            return "photo \(path) is not a JPEG, TIFF or PNG image: enlog reads GPS tags from those only"
        }
    }

    package var recoverySuggestion: String? {
        switch self {
        case .noGPS, .badGPS, .unsupportedFormat:
            return "give the place with --at LAT,LON and attach the photo with --attach; nothing was stored"
        case .rejected: return "raise --max-age or --min-accuracy for this photo; nothing was stored"
        }
    }

    package var category: ErrorCategory { .badLocation }
}

/// What a photo's EXIF tags say about where and when it was taken.
package struct PhotoPosition: Sendable, Equatable {
    /// Position, altitude and accuracy from the GPS tags; its time is the GPS time (UTC) when the
    /// photo has one, else the time it was taken.
    package var fix: Fix
    /// `DateTimeOriginal` with its `OffsetTimeOriginal`; nil without an offset, since a camera's
    /// local time without its zone is no moment.
    package var takenAt: Date?

    /// Reads the GPS IFD through libexif (from a JPEG's APP1, a TIFF's own IFDs, or a PNG's
    /// eXIf chunk): `GPSLatitude`/`GPSLongitude` with their N/S and E/W
    /// references, `GPSAltitude` with its above/below reference, `GPSDateStamp` + `GPSTimeStamp`,
    /// `GPSHPositioningError` or else `GPSDOP` (× `NMEALogLocation.metresPerHDOP`, as gpsd) as
    /// the accuracy.
    package init(photo bytes: [UInt8], path: String) throws(PhotoError) {
        guard let data = exif_data_new() else { throw .noGPS(path: path) }
        defer { exif_data_unref(data) }
        // Keep tags this libexif does not name, so a newer camera's tags are still read.
        exif_data_unset_option(data, EXIF_DATA_OPTION_IGNORE_UNKNOWN_TAGS)
        let exif = try Self.exifBlock(bytes, path: path)
        exif.withUnsafeBufferPointer { exif_data_load_data(data, $0.baseAddress, UInt32($0.count)) }
        let tags = ExifTags(data)
        guard let latitude = tags.rationals(.gps, 0x0002), let longitude = tags.rationals(.gps, 0x0004) else {
            throw .noGPS(path: path)
        }
        func degrees(_ parts: [Double], _ name: String) throws(PhotoError) -> Double {
            guard parts.count == 3, parts.allSatisfy(\.isFinite) else {
                throw .badGPS(path: path, detail: "\(name) is not degrees, minutes, seconds")
            }
            return parts[0] + parts[1] / 60 + parts[2] / 3600
        }
        func sign(_ tag: UInt32, _ name: String, negative: String, positive: String) throws(PhotoError) -> Double {
            switch tags.text(.gps, tag)?.uppercased() {
            case negative?: return -1
            case positive?: return 1
            case let other: throw .badGPS(path: path, detail: "\(name) is \(other.map { "'\($0)'" } ?? "missing"), not \(positive) or \(negative)")
            }
        }
        let lat = try degrees(latitude, "GPSLatitude") * sign(0x0001, "GPSLatitudeRef", negative: "S", positive: "N")
        let lon = try degrees(longitude, "GPSLongitude") * sign(0x0003, "GPSLongitudeRef", negative: "W", positive: "E")
        var altitude = tags.rationals(.gps, 0x0006)?.first
        if let value = altitude, tags.byte(.gps, 0x0005) == 1 { altitude = -value }
        let accuracy = tags.rationals(.gps, 0x001F)?.first ?? tags.rationals(.gps, 0x000B)?.first.map { $0 * NMEALogLocation.metresPerHDOP }
        takenAt = Self.takenAt(tags)
        let gpsTime = try Self.gpsTime(tags, path: path)
        guard let time = gpsTime ?? takenAt else {
            throw .badGPS(path: path, detail: "no time: neither GPSDateStamp with GPSTimeStamp nor DateTimeOriginal with OffsetTimeOriginal")
        }
        do {
            fix = try Fix(latitude: lat, longitude: lon, altitude: altitude, horizontalAccuracy: accuracy,
                          timestamp: time, source: .photo)
        } catch {
            throw .badGPS(path: path, detail: error.reason)
        }
    }

    /// What libexif loads: a JPEG as it is; a TIFF (its header and IFDs are EXIF's own) or a
    /// PNG's eXIf chunk behind the "Exif\0\0" header libexif looks for.
    static func exifBlock(_ bytes: [UInt8], path: String) throws(PhotoError) -> [UInt8] {
        let header: [UInt8] = Array("Exif".utf8) + [0, 0]
        if bytes.starts(with: [0xFF, 0xD8]) { return bytes }
        if bytes.starts(with: Array("II*".utf8) + [0]) || bytes.starts(with: Array("MM".utf8) + [0, 0x2A]) { return header + bytes }
        guard bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) else { throw .unsupportedFormat(path: path) }
        var offset = 8
        while bytes.count - offset >= 12 {
            let length = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            guard length <= bytes.count - offset - 12 else { break }
            let data = Array(bytes[offset + 8..<offset + 8 + length])
            switch String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self) {
            case "eXIf": return data.starts(with: header) ? data : header + data
            case "IEND": return []
            default: offset += 12 + length
            }
        }
        return []
    }

    /// The filter's age check measured at the moment the photo was taken, not now: a photo from
    /// last year with a fix taken as the shutter closed is fresh. Without a time of its own the
    /// photo's fix is as old as the photo.
    package func check(_ filter: QualityFilter, path: String) throws(PhotoError) {
        if let rejection = filter.rejection(of: fix, now: takenAt ?? fix.timestamp) {
            throw .rejected(path: path, rejection: rejection)
        }
    }

    private static func gpsTime(_ tags: ExifTags, path: String) throws(PhotoError) -> Date? {
        guard let day = tags.text(.gps, 0x001D), let clock = tags.rationals(.gps, 0x0007), clock.count == 3,
              clock.allSatisfy(\.isFinite) else { return nil }
        // 25:61:61 would roll into the next day, as a 13th month is refused by the date's parser.
        guard Fix.Limits.isTimeOfDay(hour: clock[0], minute: clock[1], second: clock[2]) else {
            let shown = clock.map { LocationError.number($0) }.joined(separator: ":")
            throw .badGPS(path: path, detail: "GPSTimeStamp \(shown) is not a time of day")
        }
        let seconds = clock[0] * 3600 + clock[1] * 60 + clock[2]
        return parse(day, "yyyy:MM:dd", zone: "+00:00").map { $0.addingTimeInterval(seconds) }
    }

    private static func takenAt(_ tags: ExifTags) -> Date? {
        guard let local = tags.text(.exif, 0x9003), let offset = tags.text(.exif, 0x9011) else { return nil }
        return parse(local, "yyyy:MM:dd HH:mm:ss", zone: offset)
    }

    /// EXIF dates are fixed-width ASCII; the zone is "+09:00" style.
    private static func parse(_ text: String, _ pattern: String, zone: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.calendar = Calendar(identifier: .gregorian)
        formatter.dateFormat = pattern + " xxx"
        formatter.isLenient = false
        return formatter.date(from: text.trimmingCharacters(in: .whitespaces) + " " + zone)
    }
}

/// Typed access to the entries libexif decoded (every value a copy: the data is freed after).
private struct ExifTags {
    enum Directory { case exif, gps }

    let data: UnsafeMutablePointer<ExifData>

    init(_ data: UnsafeMutablePointer<ExifData>) { self.data = data }

    private func entry(_ directory: Directory, _ tag: UInt32) -> UnsafeMutablePointer<ExifEntry>? {
        let content = directory == .gps ? data.pointee.ifd.3 : data.pointee.ifd.2
        guard let content else { return nil }
        return exif_content_get_entry(content, ExifTag(rawValue: tag))
    }

    func rationals(_ directory: Directory, _ tag: UInt32) -> [Double]? {
        guard let entry = entry(directory, tag), entry.pointee.format == EXIF_FORMAT_RATIONAL,
              let bytes = entry.pointee.data, entry.pointee.components > 0,
              Int(entry.pointee.size) >= Int(entry.pointee.components) * 8 else { return nil }
        let order = exif_data_get_byte_order(data)
        return (0..<Int(entry.pointee.components)).map { index in
            let value = exif_get_rational(bytes + index * 8, order)
            return value.denominator == 0 ? .nan : Double(value.numerator) / Double(value.denominator)
        }
    }

    func text(_ directory: Directory, _ tag: UInt32) -> String? {
        guard let entry = entry(directory, tag), entry.pointee.format == EXIF_FORMAT_ASCII,
              let bytes = entry.pointee.data else { return nil }
        let characters = UnsafeBufferPointer(start: bytes, count: Int(entry.pointee.size)).prefix { $0 != 0 }
        let text = String(decoding: characters, as: UTF8.self).trimmingCharacters(in: .whitespaces)
        return text.isEmpty ? nil : text
    }

    func byte(_ directory: Directory, _ tag: UInt32) -> UInt8? {
        guard let entry = entry(directory, tag), entry.pointee.format == EXIF_FORMAT_BYTE,
              let bytes = entry.pointee.data, entry.pointee.size >= 1 else { return nil }
        return bytes.pointee
    }
}
