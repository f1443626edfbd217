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
    /// The namespaces of GPX 1.1 and 1.0.
    static let namespaces: Set<String> = ["http://www.topografix.com/GPX/1/1", "http://www.topografix.com/GPX/1/0"]
    static let pointElements: Set<String> = ["wpt", "rtept", "trkpt"]
    static let valueElements: Set<String> = ["time", "ele", "hdop", "speed", "course"]

    package let stream = XMLStream()
    private var depth = 0
    private var rootNamespace: String??
    private var point: (element: XMLStream.Element, depth: Int)?
    private var values: [String: String] = [:]
    /// The `<trk>` being read: its `<type>` and the times of its first and last points.
    private var track: (depth: Int, type: String?, first: Date?, last: Date?)?

    package init() {}

    package static func recognizes(prefix: ArraySlice<UInt8>) -> Bool {
        XMLStream.rootName(prefix) == "gpx"
    }

    package mutating func handle(_ event: XMLStream.Event, _ emit: (HistoryItem) throws -> Void) throws {
        switch event {
        case .start(let element):
            depth += 1
            guard let namespace = rootNamespace else {
                guard element.name == "gpx", element.namespace.map(Self.namespaces.contains) ?? true else {
                    throw HistoryFileError("not GPX: the root element is <\(element.name)>" + (element.namespace.map { " in \($0)" } ?? "")
                                           + "; GPX has <gpx xmlns=\"http://www.topografix.com/GPX/1/1\">", at: .line(element.line))
                }
                rootNamespace = .some(element.namespace)
                return
            }
            if point == nil, track == nil, element.namespace == namespace, element.name == "trk" {
                track = (depth, nil, nil, nil)
            }
            if point == nil, element.namespace == namespace, Self.pointElements.contains(element.name) {
                point = (element, depth)
                values = [:]
            }
        case let .end(name, namespace, text):
            defer { depth -= 1 }
            guard namespace == rootNamespace ?? nil else { return }
            if let open = track, point == nil {
                if depth == open.depth + 1, name == "type" {
                    let word = text.trimmingCharacters(in: .whitespacesAndNewlines)
                    if !word.isEmpty, word.count <= 64 { track?.type = word }
                } else if depth == open.depth {
                    track = nil
                    if let mode = open.type, let first = open.first, let last = open.last {
                        try emit(.segment(HistorySegment(start: first, end: last, mode: mode)))
                    }
                }
            }
            guard let open = point else { return }
            if depth == open.depth + 1, Self.valueElements.contains(name) {
                values[name] = text
            } else if depth == open.depth {
                point = nil
                let item = try item(open.element)
                if open.element.name == "trkpt", track != nil, case .point(let read) = item {
                    if track?.first == nil { track?.first = read.fix.timestamp }
                    track?.last = read.fix.timestamp
                }
                try emit(item)
            }
        }
    }

    private func item(_ element: XMLStream.Element) throws(HistoryFileError) -> HistoryItem {
        let kind = element.name
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
        guard let timeText = values["time"] else {
            if kind == "trkpt" { throw HistoryFileError("<\(kind)> has no <time>: it cannot go into the history", at: place) }
            return .skipped(.noTime)
        }
        // GPX times are UTC by definition; some writers leave the `Z` out.
        // A stated offset (`+10:00`) is the clock the point was lived by: kept, as the JSON readers keep it.
        guard let (time, utcOffset) = TrackTime.parseStated(timeText) ?? TrackTime.parseStated(timeText + "Z") else {
            throw HistoryFileError("<time> '\(timeText.prefix(40))' is not an ISO 8601 date and time with a zone", at: place)
        }
        let hdop = try number(values["hdop"], "hdop")
        let altitude = try number(values["ele"], "ele")
        // GPX 1.0 has <speed> (m/s) and <course> (degrees) in points; 1.1 moved them to extensions.
        let speed = try number(values["speed"], "speed"), course = try number(values["course"], "course")
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
