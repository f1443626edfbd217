import Foundation
import Capture
import Compose
import Outbox

/// The moves between stays, each as the legs it is made of: the source's own activity segments
/// (their distance, else their waypoints in order between their ends), the steps between fixes,
/// and the gaps without data, bridged in a straight line. Every move of the span is there: from
/// the track's first data to the first stay, between stays, and from the last stay to the
/// track's last data.
struct MovePlanner {
    struct End {
        var time: Double
        var latitude: Double
        var longitude: Double
    }

    struct Leg {
        enum Kind { case source, track, gap }
        var start: Double
        var end: Double
        var metres: Double
        var kind: Kind
        /// The source's word, as enlog writes it.
        var mode: String?

        /// The part of the leg within `span`: by time, a leg of no duration wholly or not at all.
        func share(of span: Range<Double>) -> (fraction: Double, seconds: Double) {
            guard end > start else { return (span.contains(start) ? 1 : 0, 0) }
            let seconds = max(0, min(end, span.upperBound) - max(start, span.lowerBound))
            return (seconds / (end - start), seconds)
        }
    }

    struct PlannedMove {
        var departure: End
        var arrival: End
        var legs: [Leg]

        var metres: Double { legs.reduce(0) { $0 + $1.metres } }
        var movingSeconds: Double { legs.filter { $0.kind != .gap }.reduce(0) { $0 + ($1.end - $1.start) } }
        var bridgedMetres: Double { legs.filter { $0.kind == .gap }.reduce(0) { $0 + $1.metres } }

        /// The mode of most of its distance the source named, else the one its pace suggests.
        func mode() -> (String?, String?) {
            var byMode: [String: Double] = [:]
            for leg in legs { if let mode = leg.mode { byMode[mode, default: 0] += max(leg.metres, 1) } }
            if let best = byMode.max(by: { ($0.value, $1.key) < ($1.value, $0.key) }) { return (best.key, "source") }
            let moving = legs.filter { $0.kind != .gap }
            let inferred = MoveMode.inferred(metres: moving.isEmpty ? metres : moving.reduce(0) { $0 + $1.metres },
                                             moving: movingSeconds, span: arrival.time - departure.time)
            return (inferred, inferred == nil ? nil : "inferred")
        }
    }

    /// A segment as the planner uses it: its figure (nil: it only names the mode of the fixes in its time).
    struct Segment {
        var start: Double
        var end: Double
        var first: (latitude: Double, longitude: Double)?
        var last: (latitude: Double, longitude: Double)?
        var metres: Double?
        var mode: String?
    }

    /// Metres per second no one travels at (1,200 km/h).
    static let fastestPace = 1200 / 3.6

    let stays: [StayDetector.Stay]
    let points: [StayDetector.Point]
    let segments: [Segment]

    /// The track's data just before and after the window, for a first or last move the window has no data for.
    let before: End?
    let after: End?

    init(stays: [StayDetector.Stay], points: [StayDetector.Point], segments: [OutboxStore.StaySegment],
         before: End? = nil, after: End? = nil) {
        self.stays = stays
        self.points = points
        self.before = before
        self.after = after
        self.segments = segments.map { segment in
            typealias Place = (latitude: Double, longitude: Double)
            let start: Place? = segment.startLatitude.flatMap { latitude in segment.startLongitude.map { (latitude: latitude, longitude: $0) } }
            let end: Place? = segment.endLatitude.flatMap { latitude in segment.endLongitude.map { (latitude: latitude, longitude: $0) } }
            let path: [Place] = [start].compactMap { $0 } + segment.waypoints + [end].compactMap { $0 }
            // The source's figure; else the length along its waypoints (ends included) when it has any.
            var metres = segment.distance
            if metres == nil, !segment.waypoints.isEmpty {
                metres = zip(path, path.dropFirst()).reduce(0.0) { total, pair in
                    total + Fix.metres(pair.0.latitude, pair.0.longitude, pair.1.latitude, pair.1.longitude)
                }
            }
            return Segment(start: segment.start, end: segment.end, first: path.first, last: path.last, metres: metres,
                           mode: segment.mode.flatMap(MoveMode.fromSource))
        }
    }

    private enum Event {
        case point(StayDetector.Point)
        case segment(Segment)

        var time: Double {
            switch self {
            case .point(let point): point.time
            case .segment(let segment): segment.start
            }
        }
    }

    /// Points inside a segment with a figure are that segment's (its figure counts, not they).
    private func events() -> [Event] {
        let figured = segments.filter { $0.metres != nil }.map { $0.start...$0.end }
        var events = segments.map(Event.segment)
        var window = 0
        for point in points {
            while window < figured.count, figured[window].upperBound < point.time { window += 1 }
            let inside = figured[window...].prefix { $0.lowerBound <= point.time }.contains { $0.contains(point.time) }
            if !inside { events.append(.point(point)) }
        }
        return events.sorted { $0.time < $1.time }
    }

    func moves() -> [PlannedMove] {
        let events = events()
        // The first data with a place (a segment of a GPX track's <type> has none of its own).
        let trackStart: End? = events.lazy.compactMap(start(of:)).first
        // The latest end: a segment begun earlier may end after the last point.
        let trackEnd: End? = events.compactMap(end(of:)).max { $0.time < $1.time }
        var ends: [(End, End)] = []
        let anchors = stays.map { (arrival: End(time: $0.arrival, latitude: $0.latitude, longitude: $0.longitude),
                                   departure: End(time: $0.departure, latitude: $0.latitude, longitude: $0.longitude)) }
        if anchors.isEmpty {
            if let trackStart, let trackEnd, trackEnd.time > trackStart.time { ends.append((trackStart, trackEnd)) }
        } else {
            if let trackStart, trackStart.time < anchors[0].arrival.time {
                ends.append((trackStart, anchors[0].arrival))
            } else if let before, before.time < anchors[0].arrival.time {
                ends.append((before, anchors[0].arrival))
            }
            for (leaving, reaching) in zip(anchors, anchors.dropFirst()) where reaching.arrival.time >= leaving.departure.time {
                ends.append((leaving.departure, reaching.arrival))
            }
            if let trackEnd, let last = anchors.last, trackEnd.time > last.departure.time {
                ends.append((last.departure, trackEnd))
            } else if let after, let last = anchors.last, after.time > last.departure.time {
                ends.append((last.departure, after))
            }
        }
        var index = 0
        return ends.map { departure, arrival in
            // Events in time order: those of this move begin at or after its departure, give or take a segment begun before.
            while index < events.count, eventEnd(events[index]) < departure.time { index += 1 }
            var upTo = index
            while upTo < events.count, events[upTo].time < arrival.time { upTo += 1 }
            return PlannedMove(departure: departure, arrival: arrival,
                               legs: legs(from: departure, to: arrival, events: events[index..<upTo]))
        }
    }

    private func eventEnd(_ event: Event) -> Double {
        switch event {
        case .point(let point): point.time
        case .segment(let segment): segment.end
        }
    }

    private func start(of event: Event) -> End? {
        switch event {
        case .point(let point): End(time: point.time, latitude: point.latitude, longitude: point.longitude)
        case .segment(let segment): segment.first.map { End(time: segment.start, latitude: $0.latitude, longitude: $0.longitude) }
        }
    }

    private func end(of event: Event) -> End? {
        switch event {
        case .point(let point): End(time: point.time, latitude: point.latitude, longitude: point.longitude)
        case .segment(let segment): segment.last.map { End(time: segment.end, latitude: $0.latitude, longitude: $0.longitude) }
        }
    }

    /// The legs from `departure` to `arrival`. A step that joins a source segment's end to what
    /// comes before or after within `Timeline.gapSeconds` adds nothing: the source says where its
    /// segment began and ended, and its figure is the move. Any longer step without data is a gap.
    private func legs(from departure: End, to arrival: End, events: ArraySlice<Event>) -> [Leg] {
        var legs: [Leg] = []
        var position = (departure.latitude, departure.longitude)
        var time = departure.time
        var atSegmentEnd = false
        /// The accuracy of `position`, metres (a stay's centre: as good as a fix of unknown accuracy).
        var positionRadius = TrackStatistics.unknownAccuracy
        /// The last data seen, passed over or not: silence is measured from it.
        var seen = departure.time
        // Segments without a figure: the source says the person moved then (and how), the fixes say where.
        let unfigured = segments.filter { $0.metres == nil && $0.start <= arrival.time && $0.end >= departure.time }

        func step(to next: (Double, Double), at when: Double, joint: Bool) {
            let metres = Fix.metres(position.0, position.1, next.0, next.1)
            let middle = (time + when) / 2
            let activity = unfigured.first { $0.start <= middle && middle <= $0.end }
            let silent = when - max(time, seen) > Timeline.gapSeconds && activity == nil
            // Faster than any airliner: the data jumped (two places a source put side by side), no one moved so.
            let jump = metres > 1000 && metres / max(when - time, 0.001) > Self.fastestPace
            if silent || jump {
                legs.append(Leg(start: time, end: max(time, when), metres: metres, kind: .gap, mode: nil))
            } else if !joint {
                legs.append(Leg(start: time, end: max(time, when), metres: metres, kind: .track, mode: activity?.mode))
            }
            position = next
            time = max(time, when)
        }

        for event in events {
            switch event {
            case .point(let point):
                guard point.time > departure.time, point.time < arrival.time else { continue }
                // Jitter is no movement: a fix within both fixes' accuracy of the last one counted
                // is passed over (as `TrackStatistics` does), unless a gap lies between them.
                let radius = point.accuracy ?? TrackStatistics.unknownAccuracy
                defer { seen = point.time }
                if !atSegmentEnd, point.time - seen <= Timeline.gapSeconds,
                   Fix.metres(position.0, position.1, point.latitude, point.longitude) <= radius + positionRadius {
                    continue
                }
                step(to: (point.latitude, point.longitude), at: point.time, joint: atSegmentEnd)
                positionRadius = radius
                atSegmentEnd = false
            case .segment(let segment):
                guard let metres = segment.metres else { continue }
                let from = max(segment.start, departure.time), to = min(segment.end, arrival.time)
                let instant = segment.end == segment.start && (departure.time...arrival.time).contains(segment.start)
                guard to > from || instant else { continue }
                if let first = segment.first { step(to: (first.latitude, first.longitude), at: from, joint: true) }
                let fraction = segment.end > segment.start ? (to - from) / (segment.end - segment.start) : 1
                legs.append(Leg(start: from, end: to, metres: metres * fraction, kind: .source, mode: segment.mode))
                if let last = segment.last { position = (last.latitude, last.longitude) }
                positionRadius = TrackStatistics.unknownAccuracy
                time = max(time, to)
                seen = max(seen, to)
                atSegmentEnd = true
            }
        }
        step(to: (arrival.latitude, arrival.longitude), at: arrival.time, joint: atSegmentEnd)
        return legs
    }
}
