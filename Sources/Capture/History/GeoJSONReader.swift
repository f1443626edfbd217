import Foundation

/// GeoJSON history: a FeatureCollection (`features`), Overland's batches (`locations` of
/// features) or one Feature. A Point feature is a point timed by its first property of
/// `timestamp`, `time`, `datetime`, `date`, `when`, `recorded_at` (ISO or epoch); a line's
/// positions are timed by `properties.coordTimes` (togeojson; nested per part for multi-geometries),
/// one time per position in order, else each position is counted as having no time. Coordinates
/// are `[lon, lat, ele]`, numbers or quoted numbers. A feature's positions are held until it ends
/// (its times may come after them), at most `positionLimit`.
///
/// Overland (github.com/aaronpk/Overland-iOS) gives each point its motion state as
/// `properties.motion`, an array of words ("walking", "running", "cycling", "driving",
/// "stationary"; `["driving", "stationary"]` in a real batch). A point's mode is its first word that
/// is not "stationary"; a run of consecutive points with the same mode becomes a `HistorySegment`
/// over their first to last time, with that mode and no distance of its own (the points give it),
/// as a GPX track's `<type>` does.
package typealias GeoJSONReader = JSONHistoryReader<GeoJSONMachine>

package final class GeoJSONMachine: HistoryJSONMachine, JSONHistoryFormat {
    package static let format = HistoryFormat.geojson
    package static let positionLimit = 500_000
    enum Key: Int32 {
        case features, locations, geometry, coordinates, properties, coordTimes
        // time properties, most specific first
        case timestamp, time, datetime, date, when, recordedAt
        case deviceID, deviceId, device, tid, accuracy, horizontalAccuracy, acc, altitude, alt
        case speed, vel, course, heading, cog, motion
    }
    package static let keys = JSONKeyTable(["features", "locations", "geometry", "coordinates", "properties", "coordTimes",
                                            "timestamp", "time", "datetime", "date", "when", "recorded_at",
                                            "device_id", "deviceId", "device", "tid", "accuracy", "horizontal_accuracy",
                                            "acc", "altitude", "alt", "speed", "vel", "course", "heading", "cog", "motion"])

    private struct Feature {
        var depth: Int
        var properties = PointFields()
        var timeKey = Key.recordedAt.rawValue + 1
        var positions: [(latitude: Double?, longitude: Double?, elevation: Double?)] = []
        var times: [Double?] = []
        var tuple: [Double?] = []
        var badTuple = false
        /// Overland's motion word for the feature's points; nil when it names none.
        var motion: String?
    }
    private var open: [Feature] = []
    /// The points read last that share one motion word: their mode and first and last times.
    private var motionRun: (mode: String, first: Double, last: Double)?
    /// Seconds without a point after which a run of one motion ends: two runs of a morning and an
    /// evening are two trips, not one that names the mode of the day between them.
    static let motionRunGap = 900.0

    private func k(_ key: Key) -> Int32 { key.rawValue }

    private func isFeatureStart(_ path: JSONPath) -> Bool {
        path.count == 0 || (path.count == 2 && (path[0] == k(.features) || path[0] == k(.locations))
                            && path[1] == JSONPath.element)
    }

    private func inCoordinates(_ path: JSONPath, _ depth: Int) -> Bool {
        guard path.count > depth + 1, path[depth] == k(.geometry) else { return false }
        for index in (depth + 1)..<path.count where path[index] == k(.coordinates) { return true }
        return false
    }

    override package func start(_ path: JSONPath, array: Bool) throws(HistoryFileError) {
        if !array, isFeatureStart(path) { open.append(Feature(depth: path.count)) }
    }

    override package func end(_ path: JSONPath, array: Bool) throws(HistoryFileError) {
        guard let last = open.indices.last else { return }
        if array {
            try closePosition(path, &open[last])
            return
        }
        guard open[last].depth == path.count else { return }
        emit(open.removeLast())
    }

    /// The end of an array in the coordinates: when it held numbers, it was one position.
    private func closePosition(_ path: JSONPath, _ feature: inout Feature) throws(HistoryFileError) {
        guard inCoordinates(path, feature.depth) || (path.count == feature.depth + 1 && path.last == k(.coordinates)),
              !feature.tuple.isEmpty || feature.badTuple else { return }
        guard feature.positions.count < Self.positionLimit else {
            throw HistoryFileError("a GeoJSON feature with more than \(Self.positionLimit) positions: its times cannot be matched to them without holding them all")
        }
        let tuple = feature.tuple
        feature.positions.append((tuple.count > 1 ? tuple[1] : nil, tuple.first ?? nil, tuple.count > 2 ? tuple[2] : nil))
        feature.tuple.removeAll(keepingCapacity: true)
        feature.badTuple = false
    }

    private func emit(_ feature: Feature) {
        if feature.positions.isEmpty {
            if feature.depth > 0 { pending.append(.skipped(.notAPoint)) }
            return
        }
        let timed = feature.times.count == feature.positions.count
        let single = feature.positions.count == 1
        for (index, position) in feature.positions.enumerated() {
            var point = feature.properties
            point.latitude = position.latitude
            point.longitude = position.longitude
            point.positionUnreadable = position.latitude == nil || position.longitude == nil
            if point.altitude == nil { point.altitude = position.elevation }
            if timed {
                point.time = feature.times[index]
                point.timeUnreadable = feature.times[index] == nil
            } else if !single {
                point.time = nil
                point.timeUnreadable = false
            }
            let item = point.item()
            if case .point(let read) = item { follow(feature.motion, read.fix.timestamp.timeIntervalSince1970) }
            pending.append(item)
        }
    }

    /// Extends the run of points of one motion with a point at `time`, or ends it and starts another.
    private func follow(_ motion: String?, _ time: Double) {
        if let run = motionRun, run.mode == motion, abs(time - run.last) <= Self.motionRunGap {
            motionRun = (run.mode, min(run.first, time), max(run.last, time))
            return
        }
        endMotionRun()
        if let motion { motionRun = (motion, time, time) }
    }

    private func endMotionRun() {
        guard let run = motionRun else { return }
        motionRun = nil
        // One point is no stretch of movement.
        guard run.last > run.first else { return }
        pending.append(.segment(HistorySegment(start: Date(timeIntervalSince1970: run.first),
                                               end: Date(timeIntervalSince1970: run.last), mode: run.mode)))
    }

    override package func documentEnded() throws(HistoryFileError) {
        endMotionRun()
    }

    override package func scalar(_ path: JSONPath, _ value: JSONScalar) throws(HistoryFileError) {
        guard let last = open.indices.last else { return }
        read(path, value, &open[last])
    }

    private func read(_ path: JSONPath, _ value: JSONScalar, _ feature: inout Feature) {
        let depth = feature.depth
        if inCoordinates(path, depth) {
            let number = value.double
            if number == nil { feature.badTuple = true }
            if feature.tuple.count < 3 { feature.tuple.append(number) }
        } else if path.count > depth + 2, path[depth] == k(.properties), path[depth + 1] == k(.coordTimes) {
            guard feature.times.count < Self.positionLimit else { return }
            feature.times.append(value.epochSeconds)
        } else if path.count == depth + 3, path[depth] == k(.properties), path[depth + 1] == k(.motion),
                  path[depth + 2] == JSONPath.element {
            // A word, not a novel; "stationary" says nothing of how the person moved.
            if feature.motion == nil, let word = value.text, word.utf8.count <= 64,
               word.lowercased() != "stationary" { feature.motion = word }
        } else if path.count == depth + 2, path[depth] == k(.properties), let key = Key(rawValue: path.last) {
            property(key, value, &feature)
        }
    }

    private func property(_ key: Key, _ value: JSONScalar, _ feature: inout Feature) {
        switch key {
        case .timestamp, .time, .datetime, .date, .when, .recordedAt:
            guard key.rawValue < feature.timeKey else { return }
            feature.timeKey = key.rawValue
            feature.properties.time = nil
            feature.properties.timeUnreadable = false
            feature.properties.setTime(value)
        case .deviceID, .deviceId, .device, .tid:
            if feature.properties.device == nil { feature.properties.device = value.text }
        case .accuracy, .horizontalAccuracy, .acc: feature.properties.accuracy = value.double
        case .altitude, .alt: feature.properties.altitude = value.double
        case .speed: feature.properties.speed = value.double
        case .vel: feature.properties.speed = value.double.map { $0 / 3.6 }
        case .course, .heading, .cog: feature.properties.course = value.double
        case .motion:   // one word rather than Overland's array
            if feature.motion == nil, let word = value.text, word.utf8.count <= 64,
               word.lowercased() != "stationary" { feature.motion = word }
        default: break
        }
    }
}
