import Foundation

/// The Android on-device `Timeline.json` (Settings › Location › Timeline › Export): coordinates are
/// text, `"48.85°, 2.35°"`, with the degree sign literal, escaped or missing.
/// - `semanticSegments`: a `visit` becomes a `HistoryVisit` spanning the segment's start and end
///   times; an `activity` gives its start and end as points at those times, and a
///   `HistorySegment` with its `distanceMeters` and `topCandidate.type`; each `timelinePath`
///   entry (`point`, `time`) is a point.
/// - `rawSignals`: a `position` (`LatLng` or `latLng`, accuracy, altitude, speed, timestamp) is a
///   point; a signal without one (`wifiScan`, `activityRecord`) is counted as not a point.
/// - `userLocationProfile.frequentPlaces` (HOME, WORK, …) have no times: each is counted as
///   skipped for having none, neither a visit (a visit is a stay in time) nor a point.
package typealias AndroidTimelineReader = JSONHistoryReader<AndroidTimelineMachine>

package final class AndroidTimelineMachine: HistoryJSONMachine, JSONHistoryFormat {
    package static let format = HistoryFormat.androidTimeline
    enum Key: Int32 {
        case semanticSegments, rawSignals, userLocationProfile, frequentPlaces
        case startTime, endTime, visit, activity, timelinePath, topCandidate, placeId, semanticType
        case placeLocation, latLng, LatLng, start, end, point, time, position
        case accuracyMeters, altitudeMeters, speedMetersPerSecond, timestamp, distanceMeters, type
        case startTimeTimezoneUtcOffsetMinutes, endTimeTimezoneUtcOffsetMinutes
    }
    package static let keys = JSONKeyTable(["semanticSegments", "rawSignals", "userLocationProfile", "frequentPlaces",
                                            "startTime", "endTime", "visit", "activity", "timelinePath", "topCandidate",
                                            "placeId", "semanticType", "placeLocation", "latLng", "LatLng", "start", "end",
                                            "point", "time", "position", "accuracyMeters", "altitudeMeters",
                                            "speedMetersPerSecond", "timestamp", "distanceMeters", "type",
                                            "startTimeTimezoneUtcOffsetMinutes", "endTimeTimezoneUtcOffsetMinutes"])
    private var segment = SegmentFields()
    private var pathPoint = PointFields()
    private var signal = PointFields()
    private var sawPosition = false

    private func k(_ key: Key) -> Int32 { key.rawValue }

    private func isElement(_ path: JSONPath, of list: Key) -> Bool {
        path.count == 2 && path[0] == k(list) && path[1] == JSONPath.element
    }

    private func isPathPoint(_ path: JSONPath) -> Bool {
        path.count == 4 && path[0] == k(.semanticSegments) && path[2] == k(.timelinePath) && path[3] == JSONPath.element
    }

    private func isFrequentPlace(_ path: JSONPath) -> Bool {
        path.count == 3 && path[0] == k(.userLocationProfile) && path[1] == k(.frequentPlaces) && path[2] == JSONPath.element
    }

    override package func start(_ path: JSONPath, array: Bool) throws(HistoryFileError) {
        guard !array else { return }
        if isElement(path, of: .semanticSegments) {
            segment = SegmentFields()
        } else if isElement(path, of: .rawSignals) {
            signal = PointFields()
            sawPosition = false
        } else if isPathPoint(path) {
            pathPoint = PointFields()
        } else if path.count == 3, path[0] == k(.semanticSegments) {
            if path[2] == k(.visit) { segment.sawVisit = true }
            if path[2] == k(.activity) { segment.sawActivity = true }
        } else if path.count == 3, path[0] == k(.rawSignals), path[2] == k(.position) {
            sawPosition = true
        }
    }

    override package func end(_ path: JSONPath, array: Bool) throws(HistoryFileError) {
        guard !array else { return }
        if isElement(path, of: .semanticSegments) {
            segment.emit(into: &pending)
        } else if isElement(path, of: .rawSignals) {
            pending.append(sawPosition ? signal.item() : .skipped(.notAPoint))
        } else if isPathPoint(path) {
            pending.append(pathPoint.item())
        } else if isFrequentPlace(path) {
            pending.append(.skipped(.noTime))
        }
    }

    override package func scalar(_ path: JSONPath, _ value: JSONScalar) throws(HistoryFileError) {
        guard path.count >= 3, let key = Key(rawValue: path.last) else { return }
        if path[0] == k(.semanticSegments), path[1] == JSONPath.element {
            segmentScalar(path, key, value)
        } else if path[0] == k(.rawSignals), path.count == 4, path[2] == k(.position) {
            switch key {
            case .LatLng, .latLng: signal.setPair(value)
            case .accuracyMeters: signal.accuracy = value.double
            case .altitudeMeters: signal.altitude = value.double
            case .speedMetersPerSecond: signal.speed = value.double
            case .timestamp: signal.setTime(value)
            default: break
            }
        }
    }

    private func segmentScalar(_ path: JSONPath, _ key: Key, _ value: JSONScalar) {
        switch (path.count, path[2]) {
        case (3, _):
            if key == .startTime { segment.visit.setStart(value) }
            if key == .endTime { segment.visit.setEnd(value) }
            if key == .startTimeTimezoneUtcOffsetMinutes { segment.visit.setStartOffset(minutes: value) }
            if key == .endTimeTimezoneUtcOffsetMinutes { segment.visit.setEndOffset(minutes: value) }
        case (5, k(.visit)) where path[3] == k(.topCandidate):
            switch key {
            case .placeId: segment.visit.placeId = value.text
            case .semanticType: segment.visit.semanticType = value.text
            case .placeLocation: segment.visit.position.setPair(value)
            default: break
            }
        case (6, k(.visit)) where path[3] == k(.topCandidate) && path[4] == k(.placeLocation):
            if key == .latLng || key == .LatLng { segment.visit.position.setPair(value) }
        case (4, k(.activity)) where key == .distanceMeters:
            segment.activity.setDistance(value)
        case (5, k(.activity)) where path[3] == k(.topCandidate) && key == .type:
            segment.activity.setMode(value)
        case (4, k(.activity)), (5, k(.activity)):
            let end = path[3] == k(.end)
            guard path[3] == k(.start) || end, key == .latLng || key == .LatLng || key == .start || key == .end else { return }
            if end { segment.activityEnd.setPair(value) } else { segment.activityStart.setPair(value) }
        case (5, k(.timelinePath)):
            if key == .point { pathPoint.setPair(value) }
            if key == .time { pathPoint.setTime(value) }
        default:
            break
        }
    }
}
