import Foundation
import Support
import Configuration
import Network

/// The formats `enlog import` reads, each told apart by content (never by name).
package enum HistoryFormat: String, Sendable, CaseIterable, Codable {
    case gpx, nmea, kml, tcx, csv, geojson
    case ownTracksRecords = "owntracks-rec"
    case ownTracksJSON = "owntracks-json"
    case googleRecords = "google-records"
    case googleSemantic = "google-semantic"
    case androidTimeline = "android-timeline"
    case iosTimeline = "ios-timeline"
    case timelineEdits = "timeline-edits"
}

/// One timed position read from another program's history file. `device` keeps apart points that
/// several devices recorded at the same instant (Records.json's `deviceTag`, OwnTracks' `tid`).
package struct HistoryPoint: Sendable, Equatable {
    package var fix: Fix
    package var device: String?
    /// Seconds east of UTC of the clock the source wrote the time in (`+10:00` in Google's newer
    /// exports): the zone the point was lived in. nil when the source said only the instant.
    package var utcOffset: Int?
}

/// A stay another program judged (Google's `placeVisit`, the on-device `visit`): kept for the
/// diary's stays and places as it was given, not only as points.
package struct HistoryVisit: Sendable, Equatable {
    package var start: Date
    package var end: Date
    package var latitude: Double
    package var longitude: Double
    package var name: String?
    package var address: String?
    package var placeId: String?
    /// Google's `semanticType` or the on-device label (HOME, WORK, …).
    package var semanticType: String?
    /// Seconds east of UTC at its start, as the source wrote it; nil when it said only the instant.
    package var utcOffset: Int?
}

/// A stretch of movement another program judged (Google's `activitySegment`, the on-device
/// `activity`): its timed ends, the distance and the mode the source states, and the untimed
/// waypoints it gives in order between its ends (Google's `waypointPath`). Kept beside the points
/// so a day's distance is the source's own figure where it has one, and a move has its mode.
package struct HistorySegment: Sendable, Equatable {
    package struct Waypoint: Sendable, Equatable {
        package var latitude: Double
        package var longitude: Double

        package init(latitude: Double, longitude: Double) {
            self.latitude = latitude
            self.longitude = longitude
        }
    }

    /// Waypoints kept per segment; a path longer than this keeps its first ones (a real drive of
    /// hours has a few dozen).
    package static let waypointLimit = 10_000
    /// The longest distance a segment may state, metres (more than any trip on Earth).
    package static let distanceLimit = 0.0...40_075_000.0

    package var start: Date
    package var end: Date
    package var startPoint: Waypoint?
    package var endPoint: Waypoint?
    /// Metres, as the source states it; nil when it states none.
    package var distance: Double?
    /// The source's own word for how the person moved ("IN_PASSENGER_VEHICLE", "walking").
    package var mode: String?
    package var waypoints: [Waypoint] = []
}

/// Why a record in a file that is otherwise fine did not become a point. Counted, not fatal:
/// real exports carry such records (0,0 at time 0, 1970 times, strings in number fields). Each
/// names its cause: a time that does not parse (or names a day no calendar has) is no date; a
/// date before 1980-01-06 (GPS time's start) or after 2099 is out of the range a fix may hold.
package enum HistorySkip: String, Sendable, CaseIterable, Codable {
    case noTime = "no time"
    case badTime = "time that is no date"
    case timeOutOfRange = "time out of range"
    case badPosition = "position that cannot be"
    case nullIsland = "0,0 position"
    case badValue = "value out of range"
    case notAPoint = "record that is not a point"
}

/// What a reader hands on as it goes, in file order.
package enum HistoryItem: Sendable, Equatable {
    case point(HistoryPoint)
    case visit(HistoryVisit)
    case segment(HistorySegment)
    case skipped(HistorySkip)
}

/// Why a file cannot be imported at all: one line naming the file, where (a line or a byte
/// offset) and what is wrong. Such a file adds nothing (exit 65).
package struct HistoryFileError: Error, Sendable, Equatable {
    package enum Place: Sendable, Equatable {
        case line(Int)
        case byte(Int)
        case wholeFile
    }
    package var place: Place
    package var reason: String
    /// The file is whole and of its format, but by its nature holds no point (a Timeline Edits
    /// file of place aggregates only): nothing to import, not a failure.
    package var holdsNoPoints = false

    package init(_ reason: String, at place: Place = .wholeFile) {
        self.reason = reason
        self.place = place
    }

    /// A file that holds no point by its nature, `reason` saying what it holds instead.
    package static func nothingToImport(_ reason: String) -> HistoryFileError {
        var error = HistoryFileError(reason)
        error.holdsNoPoints = true
        return error
    }
}

/// A push parser of one format: the importer reads the file in chunks of bounded size and feeds
/// them in order, so no reader ever holds a whole file. A reader emits items as soon as it has
/// them; `finish` says the file ended (a reader with an open record or document throws there:
/// the file is truncated).
package protocol HistoryReader {
    /// The format this reader reads.
    static var format: HistoryFormat { get }
    /// Whether a file whose first bytes (up to 64 KiB, fewer if the file is shorter, the UTF-8
    /// byte order mark already removed) is of this format. Decided by content: keys, elements,
    /// a header line, never the file's name.
    static func recognizes(prefix: ArraySlice<UInt8>) -> Bool
    mutating func feed(_ chunk: ArraySlice<UInt8>, emit: (HistoryItem) throws -> Void) throws
    mutating func finish(emit: (HistoryItem) throws -> Void) throws
}
