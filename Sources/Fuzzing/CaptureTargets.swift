import Capture
import Compose
import Diary
import Foundation

/// Where a location comes from: logs, tracks, gpsd and photos.
extension FuzzTarget {
    /// An NMEA 0183 log, read as `enlog log --nmea` and `enlog import` read it: every fix, the
    /// last one through the quality filter, or the one-line reason the log gives none.
    package static let nmea = FuzzTarget("nmea") { bytes throws(FuzzFinding) in
        do {
            let fixes = try NMEALogLocation(path: "fuzz.nmea").fixes(in: Data(bytes))
            if let last = fixes.last { _ = QualityFilter(maxAge: 300, minAccuracy: 100).rejection(of: last, now: last.timestamp) }
        } catch {
            try explain(error)
        }
    }

    /// A GPX document, read as `enlog import` reads it: the streaming reader, fed in chunks.
    package static let gpx = FuzzTarget("gpx") { bytes throws(FuzzFinding) in
        try importHistory(bytes, as: HistoryReaders.all.first { $0.format == .gpx })
    }

    /// A file given to `enlog import`: its format told by content (every reader's sniffing of
    /// the first 64 KiB), then read by that format's reader in chunks as the importer feeds it.
    package static let track = FuzzTarget("track") { bytes throws(FuzzFinding) in
        let prefix = HistoryReaders.withoutByteOrderMark(bytes.prefix(HistoryReaders.prefixLength))
        try importHistory(bytes, as: HistoryReaders.kind(for: prefix))
    }

    /// gpsd's JSON stream, one report per line, decoded as `enlog log` and `enlog watch` decode
    /// it (with and without ages mattering), each fix put through the quality filter.
    package static let gpsd = FuzzTarget("gpsd") { bytes throws(FuzzFinding) in
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
    package static let exif = FuzzTarget("exif") { bytes throws(FuzzFinding) in
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

/// Reads `bytes` with a reader of `kind` as `HistoryImport` does, in chunks whose size the input's
/// first byte picks (1 to 256 bytes, or all at once), so that records split at every place; a
/// failure must be one of the importer's one-line errors.
private func importHistory(_ bytes: [UInt8], as kind: HistoryReaderKind?) throws(FuzzFinding) {
    guard let kind else { return }
    let chunkSize = bytes.first.map { $0 == 0 ? max(1, bytes.count) : Int($0) } ?? 1
    var reader = kind.make("fuzz.history")
    var items = 0
    do {
        let content = HistoryReaders.withoutByteOrderMark(bytes[...])
        var start = content.startIndex
        while start < content.endIndex {
            let end = min(content.endIndex, start + chunkSize)
            try reader.feed(content[start..<end]) { _ in items += 1 }
            start = end
        }
        try reader.finish { _ in items += 1 }
    } catch let error as HistoryFileError {
        try explain(HistoryImportError.badFile(path: "fuzz.history", format: kind.format, error: error))
    } catch {
        try explain(error)
    }
}
