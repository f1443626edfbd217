import Foundation
import Support
import Configuration
import Network

/// Why a track file cannot be imported, or a track not exported. Every case is one line, and a
/// file that fails is imported not at all (the history is written in one transaction, after the
/// whole file has been read).
public enum TrackError: ENLogError, Equatable {
    /// The file cannot be opened or read (missing, permission, a directory).
    case unreadable(path: String, detail: String)
    /// Larger than `TrackFile.maximumBytes`: refused before it is parsed.
    /// `bytes` is nil for a pipe or device, known only to go on past the limit.
    case tooLarge(path: String, bytes: Int?, limit: Int)
    /// Neither XML (GPX) nor NMEA sentences at the start of the file.
    case unknownFormat(path: String)
    /// Not well-formed XML, as libxml2 reports it (first error, with its line).
    case malformedXML(path: String, line: Int, message: String)
    /// Well-formed XML that is not GPX 1.0 or 1.1.
    case notGPX(path: String, detail: String)
    /// A DOCTYPE: GPX has none, and refusing it keeps entity expansion and external entities out.
    case doctypeRefused(path: String, line: Int)
    /// A point whose values cannot be a fix (latitude 99, no time in a track, a time that is no date).
    case badPoint(path: String, line: Int, detail: String)
    /// A well-formed file without a single timed point.
    case noPoints(path: String)
    /// An NMEA log without a valid, dated fix (the reader's own explanation).
    case nmea(LocationError)

    public var category: ErrorCategory {
        switch self {
        case .unreadable: return .noInput
        case .nmea(let error): return error.category
        case .tooLarge, .unknownFormat, .malformedXML, .notGPX, .doctypeRefused, .badPoint, .noPoints: return .badLocation
        }
    }

    public var reason: String {
        switch self {
        case let .unreadable(path, detail):
            return "cannot read \(path): \(detail)"
        case let .tooLarge(path, bytes, limit):
            return "\(path) \(bytes.map { "is \($0) bytes" } ?? "goes on past the limit"); enlog imports tracks of at most \(limit / 1_048_576) MiB"
        case let .unknownFormat(path):
            return "\(path) is neither GPX (XML) nor an NMEA 0183 log"
        case let .malformedXML(path, line, message):
            return "\(path) line \(line): not well-formed XML: \(HTTPText.oneLine(message))"
        case let .notGPX(path, detail):
            return "\(path) is not GPX: \(HTTPText.oneLine(detail))"
        case let .doctypeRefused(path, line):
            return "\(path) line \(line): a DOCTYPE is not allowed in GPX (entities are refused)"
        case let .badPoint(path, line, detail):
            return "\(path) line \(line): \(HTTPText.oneLine(detail))"
        case let .noPoints(path):
            return "\(path) holds no point with a time: nothing to import"
        case let .nmea(error):
            return error.reason
        }
    }

    public var recoverySuggestion: String? {
        switch self {
        case .tooLarge: return "split the file (gpsbabel -x track,split=1d), then import the parts"
        case .unknownFormat: return "convert it with gpsbabel to GPX (-o gpx) first"
        case .nmea(let error): return error.recoverySuggestion
        default: return nil
        }
    }
}
