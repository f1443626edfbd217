import Foundation

/// What one record of a JSON history file said about a position, gathered field by field in
/// whatever order the file wrote them, then checked once as a whole.
package struct PointFields {
    package var latitude: Double?
    package var longitude: Double?
    /// Seconds since 1970.
    package var time: Double?
    /// A time field was there but said no date.
    package var timeUnreadable = false
    /// A coordinate field was there but held no number.
    package var positionUnreadable = false
    package var altitude: Double?
    package var accuracy: Double?
    package var speed: Double?
    package var course: Double?
    package var device: String?
    /// The offset from UTC (seconds) the time was written with: the zone the point was lived in.
    package var utcOffset: Int?

    package init() {}

    package mutating func setTime(_ value: JSONScalar) {
        let read = value.timeAndStatedOffset
        if let read { time = read.seconds } else if value.kind != .null { timeUnreadable = true }
        utcOffset = read?.offset
    }

    package mutating func setCoordinate(_ value: JSONScalar, latitude isLatitude: Bool, scale: Double = 1) {
        guard let number = value.double else {
            if value.kind != .null { positionUnreadable = true }
            return
        }
        if isLatitude { latitude = number * scale } else { longitude = number * scale }
    }

    /// Google's E7 integers (degrees × 10⁷). Old exports wrapped negative values past 2³¹; Google's
    /// own description of the format says to subtract 2³² from a latitude above 900000000 or a
    /// longitude above 1800000000.
    package mutating func setE7(_ value: JSONScalar, latitude isLatitude: Bool) {
        guard var number = value.double else {
            if value.kind != .null { positionUnreadable = true }
            return
        }
        if number > (isLatitude ? 900_000_000 : 1_800_000_000) { number -= 4_294_967_296 }
        if isLatitude { latitude = number / 1e7 } else { longitude = number / 1e7 }
    }

    package mutating func setPair(_ value: JSONScalar) {
        if let pair = value.coordinatePair {
            latitude = pair.latitude
            longitude = pair.longitude
        } else if value.kind != .null {
            positionUnreadable = true
        }
    }

    package var hasAnything: Bool { latitude != nil || longitude != nil || time != nil || positionUnreadable || timeUnreadable }

    /// The record as a point, or why it is none. The rules, in order (the real-data tests count
    /// with the same ones, independently): no coordinates at all → not a point; a missing or
    /// unreadable coordinate or one out of range → bad position; exactly 0,0 → null island; no
    /// time → no time; a time that is no date → bad time; one outside `Fix.Limits.time` → out of range.
    /// Optional measurements outside `Fix.Limits` (the -1 "unknown" of many trackers) are dropped,
    /// not the point: its position and time are still good.
    package func item(source: Fix.Source = .imported) -> HistoryItem {
        guard latitude != nil || longitude != nil || positionUnreadable else { return .skipped(.notAPoint) }
        guard let latitude, let longitude, Fix.Limits.latitude.contains(latitude),
              Fix.Limits.longitude.contains(longitude) else { return .skipped(.badPosition) }
        if latitude == 0 && longitude == 0 { return .skipped(.nullIsland) }
        guard let time else { return .skipped(timeUnreadable ? .badTime : .noTime) }
        let timestamp = Date(timeIntervalSince1970: time)
        guard Fix.Limits.time.contains(timestamp) else { return .skipped(.timeOutOfRange) }
        func within(_ value: Double?, _ limits: ClosedRange<Double>) -> Double? {
            value.flatMap { limits.contains($0) ? $0 : nil }
        }
        do {
            let fix = try Fix(latitude: latitude, longitude: longitude,
                              altitude: within(altitude, Fix.Limits.altitude),
                              horizontalAccuracy: within(accuracy, Fix.Limits.horizontalAccuracy),
                              speed: within(speed, Fix.Limits.speed),
                              course: within(course, Fix.Limits.course),
                              timestamp: timestamp, source: source)
            return .point(HistoryPoint(fix: fix, device: device, utcOffset: utcOffset))
        } catch {
            return .skipped(.badValue)
        }
    }
}

/// A visit as a file gave it, field by field; checked as a whole when its object ends.
package struct VisitFields {
    package var position = PointFields()
    package var start: Double?
    package var end: Double?
    package var name: String?
    package var address: String?
    package var placeId: String?
    package var semanticType: String?
    /// The offsets from UTC (seconds) the start and end were written with.
    package var startOffset: Int?, endOffset: Int?

    package init() {}

    package mutating func setStart(_ value: JSONScalar) {
        start = value.epochSeconds
        startOffset = value.statedUTCOffset
    }

    package mutating func setEnd(_ value: JSONScalar) {
        end = value.epochSeconds
        endOffset = value.statedUTCOffset
    }

    /// An offset stated apart from the time, in minutes (Android's `startTimeTimezoneUtcOffsetMinutes`).
    static func offset(minutes value: JSONScalar) -> Int? {
        guard let minutes = value.double, minutes == minutes.rounded(), abs(minutes) <= 24 * 60 else { return nil }
        let seconds = Int(minutes) * 60
        return Fix.Limits.utcOffset.contains(seconds) ? seconds : nil
    }

    package mutating func setStartOffset(minutes value: JSONScalar) { startOffset = Self.offset(minutes: value) ?? startOffset }
    package mutating func setEndOffset(minutes value: JSONScalar) { endOffset = Self.offset(minutes: value) ?? endOffset }

    /// The visit, or why there is none: it needs a start, a position that can be, and an end not
    /// before its start (a missing end is the start: a stay of unknown length).
    package func item() -> HistoryItem {
        guard let start else { return .skipped(.noTime) }
        var check = position
        check.time = start
        guard case .point = check.item() else {
            if case .skipped(let why) = check.item() { return .skipped(why) }
            return .skipped(.badPosition)
        }
        let end = end ?? start
        guard Fix.Limits.time.contains(Date(timeIntervalSince1970: end)) else { return .skipped(.timeOutOfRange) }
        guard end >= start else { return .skipped(.badTime) }
        return .visit(HistoryVisit(start: Date(timeIntervalSince1970: start), end: Date(timeIntervalSince1970: end),
                                   latitude: position.latitude!, longitude: position.longitude!, name: name,
                                   address: address, placeId: placeId, semanticType: semanticType, utcOffset: startOffset))
    }
}

/// An activity segment as a file gave it (`HistorySegment`), gathered field by field.
package struct ActivityFields {
    package var start: Double?
    package var end: Double?
    package var startPoint = PointFields(), endPoint = PointFields()
    package var distance: Double?
    package var mode: String?
    package var waypoints: [HistorySegment.Waypoint] = []
    /// Waypoints past `HistorySegment.waypointLimit`, counted as skipped.
    package var waypointsDropped = 0
    package var waypoint = PointFields()

    package init() {}

    package mutating func setDistance(_ value: JSONScalar) {
        distance = value.double.flatMap { HistorySegment.distanceLimit.contains($0) ? $0 : nil }
    }

    package mutating func setMode(_ value: JSONScalar) {
        // A word, not a novel: Google's longest is "IN_PASSENGER_VEHICLE".
        mode = value.text.flatMap { $0.count <= 64 ? $0 : nil }
    }

    /// The waypoint gathered in `waypoint` ends: kept if it is a position that can be.
    package mutating func endWaypoint() {
        var check = waypoint
        check.time = 0
        waypoint = PointFields()
        guard let latitude = check.latitude, let longitude = check.longitude,
              Fix.Limits.latitude.contains(latitude), Fix.Limits.longitude.contains(longitude),
              !(latitude == 0 && longitude == 0) else { return }
        guard waypoints.count < HistorySegment.waypointLimit else {
            waypointsDropped += 1
            return
        }
        waypoints.append(HistorySegment.Waypoint(latitude: latitude, longitude: longitude))
    }

    private static func place(_ fields: PointFields) -> HistorySegment.Waypoint? {
        guard let latitude = fields.latitude, let longitude = fields.longitude,
              Fix.Limits.latitude.contains(latitude), Fix.Limits.longitude.contains(longitude),
              !(latitude == 0 && longitude == 0) else { return nil }
        return HistorySegment.Waypoint(latitude: latitude, longitude: longitude)
    }

    /// The segment, when it has both times in order and within `Fix.Limits.time`; nil otherwise
    /// (its points, if any, are still read on their own).
    package func segment() -> HistorySegment? {
        guard let start, let end, end >= start else { return nil }
        let from = Date(timeIntervalSince1970: start), to = Date(timeIntervalSince1970: end)
        guard Fix.Limits.time.contains(from), Fix.Limits.time.contains(to) else { return nil }
        return HistorySegment(start: from, end: to, startPoint: Self.place(startPoint), endPoint: Self.place(endPoint),
                              distance: distance, mode: mode, waypoints: waypoints)
    }

    /// What the segment adds after its points: itself, and a skip per waypoint it could not keep.
    package func emit(into items: inout [HistoryItem]) {
        if let segment = segment() { items.append(.segment(segment)) }
        for _ in 0..<waypointsDropped { items.append(.skipped(.noTime)) }
    }
}

/// A segment of the on-device Timeline exports (Android and iOS): a visit, an activity or both,
/// over the segment's start and end times (kept in `visit`).
package struct SegmentFields {
    package var visit = VisitFields()
    package var activityStart = PointFields(), activityEnd = PointFields()
    package var sawVisit = false, sawActivity = false
    /// The activity's distance (`distanceMeters`) and mode (`topCandidate.type`).
    package var activity = ActivityFields()

    package init() {}

    /// The visit over the segment's times; the activity's start and end as points at them, and
    /// the activity as a `HistorySegment` with the source's distance and mode.
    package func emit(into items: inout [HistoryItem]) {
        if sawVisit { items.append(visit.item()) }
        guard sawActivity else { return }
        var start = activityStart, end = activityEnd
        start.time = visit.start
        end.time = visit.end
        start.utcOffset = visit.startOffset
        end.utcOffset = visit.endOffset
        items.append(start.item())
        items.append(end.item())
        var fields = activity
        fields.start = visit.start
        fields.end = visit.end
        fields.startPoint = activityStart
        fields.endPoint = activityEnd
        fields.emit(into: &items)
    }
}

/// The part of a JSON history reader that follows one file's events: subclasses keep the state of
/// the record they are in (small, reset at each record) and queue what they read; the reader hands
/// the queue on after every slice the stream parses.
package class HistoryJSONMachine: JSONEventHandler {
    package var pending: [HistoryItem] = []

    package init() {}

    package func start(_ path: JSONPath, array: Bool) throws(HistoryFileError) {}
    package func end(_ path: JSONPath, array: Bool) throws(HistoryFileError) {}
    package func scalar(_ path: JSONPath, _ value: JSONScalar) throws(HistoryFileError) {}
    /// The document ended well; a format with a rule about the whole file checks it here.
    package func documentEnded() throws(HistoryFileError) {}

    final func drain(_ emit: (HistoryItem) throws -> Void) throws {
        defer { pending.removeAll(keepingCapacity: true) }
        for item in pending { try emit(item) }
    }
}

/// A JSON history format: its machine, the keys it follows, and the format it reads.
package protocol JSONHistoryFormat: HistoryJSONMachine {
    static var format: HistoryFormat { get }
    static var keys: JSONKeyTable { get }
    init()
}

/// A `HistoryReader` built on a `JSONStream` and one format's machine: the reading is the
/// machine's, the feeding and the recognizing are the same for every JSON format.
package struct JSONHistoryReader<Machine: JSONHistoryFormat>: HistoryReader {
    package static var format: HistoryFormat { Machine.format }
    let machine: Machine
    let stream: JSONStream

    package init() {
        let machine = Machine()
        self.machine = machine
        stream = JSONStream(keys: Machine.keys, handler: machine)
    }

    package static func recognizes(prefix: ArraySlice<UInt8>) -> Bool {
        JSONHistorySniffer.format(of: prefix) == format
    }

    package mutating func feed(_ chunk: ArraySlice<UInt8>, emit: (HistoryItem) throws -> Void) throws {
        let machine = machine
        try stream.feed(chunk) { try machine.drain(emit) }
    }

    package mutating func finish(emit: (HistoryItem) throws -> Void) throws {
        let machine = machine
        try stream.finish { try machine.drain(emit) }
        try machine.documentEnded()
        try machine.drain(emit)
    }
}
