import Foundation

/// Google Takeout's Semantic Location History monthly files: `{"timelineObjects": [...]}` of
/// `placeVisit` and `activitySegment`. A visit becomes a `HistoryVisit` (Google's judgment of a
/// stay, kept with its name, address and place id) and not a point: its position is the place's,
/// not a measured fix. An activity segment gives its start and end locations as points at its
/// start and end times, and the timed points of `simplifiedRawPath` (in visits too); and it
/// becomes a `HistorySegment` with Google's `distance`, its `activityType` (else the most likely
/// of `activities`) and the untimed `waypointPath` waypoints in order between its ends.
/// `childVisits` (secondary visits inside a visit) are not read: the visit they are part of is
/// the stay.
package typealias GoogleSemanticReader = JSONHistoryReader<GoogleSemanticMachine>

package final class GoogleSemanticMachine: HistoryJSONMachine, JSONHistoryFormat {
    package static let format = HistoryFormat.googleSemantic
    enum Key: Int32 {
        case timelineObjects, placeVisit, activitySegment, location, centerLatE7, centerLngE7
        case latitudeE7, longitudeE7, latE7, lngE7, name, address, placeId, semanticType
        case duration, startTimestamp, startTimestampMs, endTimestamp, endTimestampMs
        case startLocation, endLocation, waypointPath, waypoints, simplifiedRawPath, points
        case timestampMs, timestamp, accuracyMeters, distance, activityType, activities
    }
    package static let keys = JSONKeyTable(["timelineObjects", "placeVisit", "activitySegment", "location",
                                            "centerLatE7", "centerLngE7", "latitudeE7", "longitudeE7", "latE7", "lngE7",
                                            "name", "address", "placeId", "semanticType", "duration", "startTimestamp",
                                            "startTimestampMs", "endTimestamp", "endTimestampMs", "startLocation",
                                            "endLocation", "waypointPath", "waypoints", "simplifiedRawPath", "points",
                                            "timestampMs", "timestamp", "accuracyMeters", "distance", "activityType",
                                            "activities"])
    private var visit = VisitFields()
    private var center = PointFields()
    private var segmentStart = PointFields(), segmentEnd = PointFields()
    private var sawStart = false, sawEnd = false
    private var rawPoint = PointFields()
    private var activity = ActivityFields()
    /// The first of `activities` (Google lists them most likely first), for a segment without `activityType`.
    private var likeliestActivity: String?

    private func k(_ key: Key) -> Int32 { key.rawValue }

    /// `[timelineObjects, element, placeVisit|activitySegment, …]`: the object's kind, if the path is in one.
    private func kind(_ path: JSONPath) -> Key? {
        guard path.count >= 3, path[0] == k(.timelineObjects), path[1] == JSONPath.element else { return nil }
        return Key(rawValue: path[2]).flatMap { $0 == .placeVisit || $0 == .activitySegment ? $0 : nil }
    }

    /// A point of `simplifiedRawPath.points` or `waypointPath.waypoints`: `[…, kind, path, list, element]`.
    private func isPathPoint(_ path: JSONPath, _ list: Key, in container: Key) -> Bool {
        path.count == 6 && path[3] == k(container) && path[4] == k(list) && path[5] == JSONPath.element
    }

    override package func start(_ path: JSONPath, array: Bool) throws(HistoryFileError) {
        guard !array, let kind = kind(path) else { return }
        if path.count == 3 {
            visit = VisitFields()
            center = PointFields()
            segmentStart = PointFields()
            segmentEnd = PointFields()
            sawStart = false
            sawEnd = false
            activity = ActivityFields()
            likeliestActivity = nil
        } else if path.count == 4, kind == .activitySegment {
            if path[3] == k(.startLocation) { sawStart = true }
            if path[3] == k(.endLocation) { sawEnd = true }
        } else if isPathPoint(path, .points, in: .simplifiedRawPath) {
            rawPoint = PointFields()
        }
    }

    override package func end(_ path: JSONPath, array: Bool) throws(HistoryFileError) {
        guard !array, let kind = kind(path) else { return }
        if path.count == 3, kind == .placeVisit {
            if visit.position.latitude == nil && visit.position.longitude == nil { visit.position = center }
            pending.append(visit.item())
        } else if path.count == 3 {
            segmentStart.time = visit.start
            segmentEnd.time = visit.end
            segmentStart.utcOffset = visit.startOffset
            segmentEnd.utcOffset = visit.endOffset
            if sawStart { pending.append(segmentStart.item()) }
            if sawEnd { pending.append(segmentEnd.item()) }
            activity.start = visit.start
            activity.end = visit.end
            activity.startPoint = segmentStart
            activity.endPoint = segmentEnd
            if activity.mode == nil { activity.mode = likeliestActivity }
            activity.emit(into: &pending)
        } else if isPathPoint(path, .points, in: .simplifiedRawPath) {
            pending.append(rawPoint.item())
        } else if isPathPoint(path, .waypoints, in: .waypointPath) {
            activity.endWaypoint()
        }
    }

    override package func scalar(_ path: JSONPath, _ value: JSONScalar) throws(HistoryFileError) {
        guard let kind = kind(path), let key = Key(rawValue: path.last) else { return }
        switch path.count {
        case 4:
            if key == .centerLatE7 { center.setE7(value, latitude: true) }
            if key == .centerLngE7 { center.setE7(value, latitude: false) }
            if kind == .activitySegment, key == .distance { activity.setDistance(value) }
            if kind == .activitySegment, key == .activityType { activity.setMode(value) }
        case 6 where kind == .activitySegment && path[3] == k(.activities) && key == .activityType:
            if likeliestActivity == nil { likeliestActivity = value.text.flatMap { $0.count <= 64 ? $0 : nil } }
        case 7 where kind == .activitySegment && path[3] == k(.waypointPath) && path[4] == k(.waypoints):
            switch key {
            case .latE7, .latitudeE7: activity.waypoint.setE7(value, latitude: true)
            case .lngE7, .longitudeE7: activity.waypoint.setE7(value, latitude: false)
            default: break
            }
        case 5 where path[3] == k(.duration):
            switch key {
            case .startTimestamp, .startTimestampMs: visit.setStart(value)
            case .endTimestamp, .endTimestampMs: visit.setEnd(value)
            default: break
            }
        case 5 where path[3] == k(.location) && kind == .placeVisit:
            switch key {
            case .latitudeE7: visit.position.setE7(value, latitude: true)
            case .longitudeE7: visit.position.setE7(value, latitude: false)
            case .name: visit.name = value.text
            case .address: visit.address = value.text
            case .placeId: visit.placeId = value.text
            case .semanticType: visit.semanticType = value.text
            default: break
            }
        case 5 where path[3] == k(.startLocation) || path[3] == k(.endLocation):
            let isLatitude = key == .latitudeE7
            guard isLatitude || key == .longitudeE7 else { return }
            if path[3] == k(.startLocation) { segmentStart.setE7(value, latitude: isLatitude) } else { segmentEnd.setE7(value, latitude: isLatitude) }
        case 7 where path[3] == k(.simplifiedRawPath) && path[4] == k(.points):
            switch key {
            case .latE7, .latitudeE7: rawPoint.setE7(value, latitude: true)
            case .lngE7, .longitudeE7: rawPoint.setE7(value, latitude: false)
            case .timestampMs, .timestamp: rawPoint.setTime(value)
            case .accuracyMeters: rawPoint.accuracy = value.double
            default: break
            }
        default:
            break
        }
    }
}
