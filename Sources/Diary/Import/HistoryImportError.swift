import Foundation
import Support
import Capture
import Outbox

/// Why one file of `enlog import` added nothing: one line naming the file, where and what.
package enum HistoryImportError: ENLogError, Equatable {
    /// Missing, unreadable, a directory where a file was expected, a device.
    case unreadable(path: String, detail: String)
    /// Not empty, but not any format enlog reads.
    case unknownFormat(path: String, detail: String)
    case empty(path: String)
    /// A zip archive libarchive cannot read (cut short, damaged, encrypted).
    case badArchive(path: String, detail: String)
    /// A file of a known format that is wrong where `error` says (cut short, a bad value).
    case badFile(path: String, format: HistoryFormat, error: HistoryFileError)
    /// A folder in which nothing could be imported or failed: empty, or only files of no known
    /// format (`passedOver` of them).
    case noHistoryInFolder(path: String, passedOver: Int)
    /// The outbox failed while the file was written into it (a full disk, a lock held too long):
    /// not the file's fault, and said with the outbox's own words and exit code.
    case outbox(path: String, error: OutboxError)
    /// Read to its end without a single point or stay.
    case nothingToImport(path: String, format: HistoryFormat, skipped: [HistorySkip: Int])

    package var category: ErrorCategory {
        switch self {
        case .unreadable, .noHistoryInFolder: return .noInput
        case let .outbox(_, error): return error.category
        default: return .badLocation
        }
    }

    /// One line whatever it quotes: a reader's words on the file (an NMEA field, a value), a
    /// path, the system's detail.
    package var reason: String { TerminalText.oneLine(unflattenedReason) }

    private var unflattenedReason: String {
        switch self {
        case let .unreadable(path, detail):
            return "cannot read \(path): \(detail)"
        case let .unknownFormat(path, detail):
            return "\(path) is not a location history enlog reads (neither GPX, KML, TCX, CSV, OwnTracks, GeoJSON, a Google Timeline export nor an NMEA 0183 log): \(detail)"
        case let .empty(path):
            return "\(path) is empty: nothing to import"
        case let .noHistoryInFolder(path, 0):
            return "the folder \(path) holds no file: nothing to import"
        case let .noHistoryInFolder(path, passedOver):
            return "the folder \(path) holds no location history: its \(passedOver == 1 ? "only file is" : "\(passedOver) files are all") "
                + "of no format enlog reads (GPX, KML, TCX, CSV, OwnTracks, GeoJSON, Google Timeline, NMEA 0183)"
        case let .badArchive(path, detail):
            return "\(path) is a zip archive that cannot be read (cut short or damaged?): \(HTTPText.oneLine(detail))"
        case let .badFile(path, format, error):
            // A reader whose messages name the file already (NMEA's are `log --nmea`'s).
            if error.reason.contains(path) { return error.reason }
            let place: String
            switch error.place {
            case .line(let line): place = " line \(line)"
            case .byte(let offset): place = " byte \(offset)"
            case .wholeFile: place = ""
            }
            return "\(path)\(place): \(format.title): \(HTTPText.oneLine(error.reason))"
        case let .outbox(path, error):
            return "\(error.reason), importing \(path)"
        case let .nothingToImport(path, format, skipped):
            // What the records lacked is in the reasons; the summary names none of its own.
            let reasons = skipped.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.value) with \($0.key.rawValue)" }
            guard !reasons.isEmpty else { return "\(path) holds no point: nothing to import (\(format.title))" }
            return "\(path) holds no record that can be a point: nothing to import (\(format.title); skipped: \(reasons.joined(separator: ", ")))"
        }
    }

    package var recoverySuggestion: String? {
        switch self {
        case .unknownFormat: return "convert it with gpsbabel to GPX (-o gpx) first"
        case .noHistoryInFolder(_, 1...): return "convert them with gpsbabel to GPX (-o gpx) first"
        case let .outbox(_, error):
            // A rerun adds only what is missing (the chunks an interrupted run left are found).
            return (error.recoverySuggestion.map { $0 + ", then " } ?? "") + "import the file again: it adds only what is missing"
        default: return nil
        }
    }
}

extension HistoryFormat {
    /// How messages name the format.
    package var title: String {
        switch self {
        case .gpx: return "GPX"
        case .nmea: return "NMEA"
        case .kml: return "KML"
        case .tcx: return "TCX"
        case .csv: return "CSV"
        case .geojson: return "GeoJSON"
        case .ownTracksRecords: return "OwnTracks records"
        case .ownTracksJSON: return "OwnTracks JSON"
        case .googleRecords: return "Google Records.json"
        case .googleSemantic: return "Google Semantic Location History"
        case .androidTimeline: return "Android Timeline.json"
        case .iosTimeline: return "iOS location-history.json"
        case .timelineEdits: return "Timeline Edits.json"
        }
    }
}
