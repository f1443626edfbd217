import Foundation

/// Google Takeout's `Records.json` in every era: `{"locations": [record, …]}` with E7 coordinates,
/// `timestampMs` (a string) or an ISO `timestamp`, else `deviceTimestamp`/`serverTimestamp`, the
/// optional measurements and `deviceTag`. A record's nested `activity` blocks carry their own
/// `timestampMs`, which is not the point's: only fields directly in the record are read.
package typealias GoogleRecordsReader = JSONHistoryReader<GoogleRecordsMachine>

package final class GoogleRecordsMachine: HistoryJSONMachine, JSONHistoryFormat {
    package static let format = HistoryFormat.googleRecords
    enum Key: Int32 {
        case locations, latitudeE7, longitudeE7, timestampMs, timestamp, deviceTimestamp, serverTimestamp
        case accuracy, altitude, velocity, heading, deviceTag
    }
    package static let keys = JSONKeyTable(["locations", "latitudeE7", "longitudeE7", "timestampMs", "timestamp",
                                            "deviceTimestamp", "serverTimestamp", "accuracy", "altitude", "velocity",
                                            "heading", "deviceTag"])
    private var record = PointFields()
    /// `deviceTimestamp`, else `serverTimestamp`: used only when the record has no timestamp.
    private var fallbackTime = PointFields()

    private static func isRecord(_ path: JSONPath) -> Bool {
        path.count == 2 && path[0] == Key.locations.rawValue && path[1] == JSONPath.element
    }

    override package func start(_ path: JSONPath, array: Bool) throws(HistoryFileError) {
        if !array, Self.isRecord(path) {
            record = PointFields()
            fallbackTime = PointFields()
        }
    }

    override package func end(_ path: JSONPath, array: Bool) throws(HistoryFileError) {
        guard !array, Self.isRecord(path) else { return }
        if record.time == nil, fallbackTime.time != nil || fallbackTime.timeUnreadable {
            record.time = fallbackTime.time
            record.timeUnreadable = record.timeUnreadable || fallbackTime.timeUnreadable
        }
        pending.append(record.item())
    }

    override package func scalar(_ path: JSONPath, _ value: JSONScalar) throws(HistoryFileError) {
        guard path.count == 3, path[0] == Key.locations.rawValue, path[1] == JSONPath.element,
              let key = Key(rawValue: path[2]) else { return }
        switch key {
        case .latitudeE7: record.setE7(value, latitude: true)
        case .longitudeE7: record.setE7(value, latitude: false)
        case .timestampMs, .timestamp: record.setTime(value)
        case .deviceTimestamp:
            fallbackTime.setTime(value)
        case .serverTimestamp:
            if fallbackTime.time == nil { fallbackTime.setTime(value) }
        case .accuracy: record.accuracy = value.double
        case .altitude: record.altitude = value.double
        case .velocity: record.speed = value.double
        case .heading: record.course = value.double
        case .deviceTag: record.device = value.text
        case .locations: break
        }
    }
}
