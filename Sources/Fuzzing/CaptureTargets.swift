import Capture
import Compose
import Foundation

/// Where a location comes from: logs, tracks, gpsd and photos.
extension FuzzTarget {
    /// An NMEA 0183 log, read as `enlog log --nmea` and `enlog import` read it: every fix, the
    /// last one through the quality filter, or the one-line reason the log gives none.
    public static let nmea = FuzzTarget("nmea") { bytes throws(FuzzFinding) in
        do {
            let fixes = try NMEALogLocation(path: "fuzz.nmea").fixes(in: Data(bytes))
            if let last = fixes.last { _ = QualityFilter(maxAge: 300, minAccuracy: 100).rejection(of: last, now: last.timestamp) }
        } catch {
            try explain(error)
        }
    }

    /// A GPX document, read as `enlog import` reads it.
    public static let gpx = FuzzTarget("gpx") { bytes throws(FuzzFinding) in
        do {
            _ = try GPXReader(path: "fuzz.gpx").read(bytes)
        } catch {
            try explain(error)
        }
    }

    /// A file given to `enlog import`: told apart as GPX or NMEA, read, sorted, rid of repeated times.
    public static let track = FuzzTarget("track") { bytes throws(FuzzFinding) in
        do {
            _ = try TrackFile(path: "fuzz.track").contents(of: bytes)
        } catch {
            try explain(error)
        }
    }

    /// gpsd's JSON stream, one report per line, decoded as `enlog log` and `enlog watch` decode
    /// it (with and without ages mattering), each fix put through the quality filter.
    public static let gpsd = FuzzTarget("gpsd") { bytes throws(FuzzFinding) in
        let filter = QualityFilter(maxAge: 300, minAccuracy: 100)
        for line in bytes.split(separator: UInt8(ascii: "\n")) {
            for needsTime in [true, false] {
                if case .report(let fix?) = GPSDSession.decode(line: Data(line), needsTime: needsTime) {
                    _ = filter.rejection(of: fix)
                }
            }
        }
    }

    /// A photo given to `enlog log --photo` or `--attach`: its MIME type (libmagic), its size in
    /// pixels as each image format's header gives it, and the position and time of its EXIF GPS
    /// tags (libexif) through the quality filter.
    public static let exif = FuzzTarget("exif") { bytes throws(FuzzFinding) in
        _ = FileType.mimeType(of: bytes)
        for mime in ["image/jpeg", "image/png", "image/gif"] { _ = ImageSize(bytes, mime: mime) }
        do {
            let position = try PhotoPosition(photo: bytes, path: "fuzz.jpg")
            try position.check(QualityFilter(maxAge: 300, minAccuracy: 100), path: "fuzz.jpg")
        } catch {
            try explain(error)
        }
    }
}
