import Foundation

/// The iOS Google Maps export `location-history.json`: a top-level array of segments, positions as
/// `"geo:lat,lon"`, every number quoted. A `visit` becomes a `HistoryVisit` over the segment's
/// start and end; an `activity` gives its `start` and `end` as points at those times, and a
/// `HistorySegment` with its `distanceMeters` and `topCandidate.type`; each
/// `timelinePath` point is timed by `durationMinutesOffsetFromStartTime` from the segment's start.
/// A segment's path points wait for its `startTime` only if the file writes it after them.
package typealias IOSTimelineReader = JSONHistoryReader<IOSTimelineMachine>

package final class IOSTimelineMachine: HistoryJSONMachine, JSONHistoryFormat {
    package static let format = HistoryFormat.iosTimeline
    enum Key: Int32 {
        case startTime, endTime, visit, activity, timelinePath, topCandidate, placeID, placeId, semanticType
        case placeLocation, start, end, point, durationMinutesOffsetFromStartTime, distanceMeters, type
    }
    package static let keys = JSONKeyTable(["startTime", "endTime", "visit", "activity", "timelinePath", "topCandidate",
                                            "placeID", "placeId", "semanticType", "placeLocation", "start", "end", "point",
                                            "durationMinutesOffsetFromStartTime", "distanceMeters", "type"])
    /// Path points held while the segment's start time is unknown; past this many, more are
    /// counted as having no time rather than held.
    static let heldPointLimit = 100_000
    private var segment = SegmentFields()
    private var pathPoint = PointFields()
    private var offsetMinutes: Double?
    private var held: [(point: PointFields, offset: Double?)] = []

    private func k(_ key: Key) -> Int32 { key.rawValue }

    private func isPathPoint(_ path: JSONPath) -> Bool {
        path.count == 3 && path[0] == JSONPath.element && path[1] == k(.timelinePath) && path[2] == JSONPath.element
    }

    override package func start(_ path: JSONPath, array: Bool) throws(HistoryFileError) {
        guard !array else { return }
        if path.count == 1, path[0] == JSONPath.element {
            segment = SegmentFields()
            held.removeAll(keepingCapacity: true)
        } else if isPathPoint(path) {
            pathPoint = PointFields()
            offsetMinutes = nil
        } else if path.count == 2, path[0] == JSONPath.element {
            if path[1] == k(.visit) { segment.sawVisit = true }
            if path[1] == k(.activity) { segment.sawActivity = true }
        }
    }

    private func timed(_ point: PointFields, offset: Double?) -> HistoryItem {
        var point = point
        if let start = segment.visit.start, let offset { point.time = start + offset * 60 }
        point.utcOffset = segment.visit.startOffset
        if offset == nil { point.time = nil }
        return point.item()
    }

    override package func end(_ path: JSONPath, array: Bool) throws(HistoryFileError) {
        guard !array else { return }
        if path.count == 1, path[0] == JSONPath.element {
            for entry in held { pending.append(timed(entry.point, offset: entry.offset)) }
            held.removeAll(keepingCapacity: true)
            segment.emit(into: &pending)
        } else if isPathPoint(path) {
            if segment.visit.start != nil {
                pending.append(timed(pathPoint, offset: offsetMinutes))
            } else if held.count < Self.heldPointLimit {
                held.append((pathPoint, offsetMinutes))
            } else {
                pending.append(.skipped(.noTime))
            }
        }
    }

    override package func scalar(_ path: JSONPath, _ value: JSONScalar) throws(HistoryFileError) {
        guard path.count >= 2, path[0] == JSONPath.element, let key = Key(rawValue: path.last) else { return }
        switch (path.count, path[1]) {
        case (2, _):
            if key == .startTime { segment.visit.setStart(value) }
            if key == .endTime { segment.visit.setEnd(value) }
        case (4, k(.visit)) where path[2] == k(.topCandidate):
            switch key {
            case .placeID, .placeId: segment.visit.placeId = value.text
            case .semanticType: segment.visit.semanticType = value.text
            case .placeLocation: segment.visit.position.setPair(value)
            default: break
            }
        case (3, k(.activity)):
            if key == .start { segment.activityStart.setPair(value) }
            if key == .end { segment.activityEnd.setPair(value) }
            if key == .distanceMeters { segment.activity.setDistance(value) }
        case (4, k(.activity)) where path[2] == k(.topCandidate) && key == .type:
            segment.activity.setMode(value)
        case (4, k(.timelinePath)):
            if key == .point { pathPoint.setPair(value) }
            if key == .durationMinutesOffsetFromStartTime { offsetMinutes = value.double }
        default:
            break
        }
    }
}
