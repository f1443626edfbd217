import Foundation
import Support
import Configuration
import Network

/// GPX 1.0 and 1.1 of any size, streamed: track points of every track and segment, and route
/// points and waypoints that carry a time (a route or a waypoint without one is a plan, not a
/// place someone was; counted as skipped). Extensions and elements of other namespaces are
/// ignored. A `<gpx>` root without a namespace (written by some older tools) is read as GPX too.
///
/// A track point is where someone was: one without a time, with a time that is no date, or with
/// a position that cannot be, makes the file wrong (an error naming its line), as it always did.
/// A time before GPS began (1970, a receiver without a date) and 0,0 are counted and skipped.
///
/// A track's `<type>` (Arc, OsmAnd, Strava: "walking", "taxi", "cycling") names how its points
/// were travelled: it becomes a `HistorySegment` over the track's first to last time, with that
/// mode and no distance of its own (the points give it).
package struct GPXHistoryReader: XMLHistoryReader {
    package static let format = HistoryFormat.gpx
    package static let rootElement = "gpx"
    /// The namespaces of GPX 1.1 and 1.0.
    static let namespaces: Set<String> = ["http://www.topografix.com/GPX/1/1", "http://www.topografix.com/GPX/1/0"]
    static let pointElements: Set<String> = ["wpt", "rtept", "trkpt"]
    static let valueElements: Set<String> = ["time", "ele", "hdop", "speed", "course"]

    package let stream = XMLStream()
    private var machine = XMLPointReaderStateMachine(.init(
        root: rootElement, formatName: "GPX", namespaces: namespaces,
        rootHint: "; GPX has <gpx xmlns=\"http://www.topografix.com/GPX/1/1\">",
        records: ["trk": 0, "wpt": 1, "rtept": 1, "trkpt": 1],
        destination: { name, parent in
            guard let parent = parent?.name else { return nil }
            if parent == "trk", name == "type" { return .value(record: "trk", key: name) }
            return pointElements.contains(parent) && valueElements.contains(name) ? .value(record: parent, key: name) : nil
        }))
    /// The times of the first and last points of the `<trk>` being read.
    private var trackSpan: (first: Date, last: Date)?

    package init() {}

    package mutating func handle(_ event: XMLStream.Event, _ emit: (HistoryItem) throws -> Void) throws {
        switch machine.handle(event) {
        case .none, .text: break
        case .fail(let error): throw error
        case .closed(let track) where track.element.name == "trk":
            defer { trackSpan = nil }
            let mode = track.all("type").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
                .last { !$0.isEmpty && $0.count <= 64 }
            if let mode, let trackSpan {
                try emit(.segment(HistorySegment(start: trackSpan.first, end: trackSpan.last, mode: mode)))
            }
        case .closed(let point):
            let item = try item(point)
            if point.element.name == "trkpt", machine.isOpen("trk"), case .point(let read) = item {
                trackSpan = (trackSpan?.first ?? read.fix.timestamp, read.fix.timestamp)
            }
            try emit(item)
        }
    }

    private func item(_ point: XMLPointReaderStateMachine.Record) throws(HistoryFileError) -> HistoryItem {
        let element = point.element, kind = element.name
        let place = HistoryFileError.Place.line(element.line)
        func number(_ text: String?, _ what: String) throws(HistoryFileError) -> Double? {
            // `<ele></ele>`, `<fix></fix>`: written by real exporters for "unknown".
            guard let text, !text.isEmpty else { return nil }
            guard let value = HistoryPoints.number(text) else {
                throw HistoryFileError("<\(kind)> \(what) '\(text.prefix(40))' is not a number", at: place)
            }
            return value
        }
        guard let latitude = try number(element.attributes["lat"], "lat"),
              let longitude = try number(element.attributes["lon"], "lon") else {
            throw HistoryFileError("<\(kind)> needs both lat and lon", at: place)
        }
        guard let timeText = point.last("time") else {
            if kind == "trkpt" { throw HistoryFileError("<\(kind)> has no <time>: it cannot go into the history", at: place) }
            return .skipped(.noTime)
        }
        // GPX times are UTC by definition; some writers leave the `Z` out.
        // A stated offset (`+10:00`) is the clock the point was lived by: kept, as the JSON readers keep it.
        guard let (time, utcOffset) = TrackTime.parseStated(timeText) ?? TrackTime.parseStated(timeText + "Z") else {
            throw HistoryFileError("<time> '\(timeText.prefix(40))' is not an ISO 8601 date and time with a zone", at: place)
        }
        let hdop = try number(point.last("hdop"), "hdop")
        let altitude = try number(point.last("ele"), "ele")
        // GPX 1.0 has <speed> (m/s) and <course> (degrees) in points; 1.1 moved them to extensions.
        let speed = try number(point.last("speed"), "speed"), course = try number(point.last("course"), "course")
        do {
            let fix = try Fix(latitude: latitude, longitude: longitude, altitude: altitude,
                              horizontalAccuracy: hdop.map { $0 * NMEALogLocation.metresPerHDOP },
                              speed: speed, course: course, timestamp: time, source: .gpx)
            if latitude == 0 && longitude == 0 { return .skipped(.nullIsland) }
            return .point(HistoryPoint(fix: fix, utcOffset: utcOffset))
        } catch .timeOutOfRange {
            return .skipped(.timeOutOfRange)
        } catch {
            throw HistoryFileError("<\(kind)>: \(error.reason)", at: place)
        }
    }
}
