import Foundation

/// Google Takeout's `Timeline Edits.json`: `timelineEdits[].rawSignal.signal.position` holds a
/// raw-signal point (`point.latE7`/`lngE7`, `timestamp`, `accuracyMm`), with the edit's `deviceId`.
/// Most such files hold only place aggregates and settings (all Takeout gives since 2025): a file
/// with no position at all ends with `HistoryFileError.nothingToImport`, so the importer names it
/// as holding nothing to import, without failing the run.
package typealias TimelineEditsReader = JSONHistoryReader<TimelineEditsMachine>

package final class TimelineEditsMachine: HistoryJSONMachine, JSONHistoryFormat {
    package static let format = HistoryFormat.timelineEdits
    package static let noPositionsReason = "a Timeline Edits file with no raw-signal positions (only place aggregates or settings)"
    enum Key: Int32 {
        case timelineEdits, deviceId, rawSignal, signal, position, point, latE7, lngE7
        case timestamp, accuracyMm, altitudeMeters, speedMetersPerSecond
    }
    package static let keys = JSONKeyTable(["timelineEdits", "deviceId", "rawSignal", "signal", "position", "point",
                                            "latE7", "lngE7", "timestamp", "accuracyMm", "altitudeMeters",
                                            "speedMetersPerSecond"])
    private var position = PointFields()
    private var sawPosition = false
    private var positions = 0

    private func k(_ key: Key) -> Int32 { key.rawValue }

    private func isEdit(_ path: JSONPath) -> Bool {
        path.count == 2 && path[0] == k(.timelineEdits) && path[1] == JSONPath.element
    }

    /// `[timelineEdits, element, rawSignal, signal, position, …]`
    private func inPosition(_ path: JSONPath) -> Bool {
        path.count >= 5 && path[0] == k(.timelineEdits) && path[2] == k(.rawSignal) && path[3] == k(.signal)
            && path[4] == k(.position)
    }

    override package func start(_ path: JSONPath, array: Bool) throws(HistoryFileError) {
        if !array, isEdit(path) {
            position = PointFields()
            sawPosition = false
        } else if !array, path.count == 5, inPosition(path) {
            sawPosition = true
        }
    }

    override package func end(_ path: JSONPath, array: Bool) throws(HistoryFileError) {
        guard !array, isEdit(path), sawPosition else { return }
        positions += 1
        pending.append(position.item())
    }

    override package func scalar(_ path: JSONPath, _ value: JSONScalar) throws(HistoryFileError) {
        if path.count == 3, path[0] == k(.timelineEdits), path[2] == k(.deviceId) {
            position.device = value.text
            return
        }
        guard inPosition(path), let key = Key(rawValue: path.last) else { return }
        switch (path.count, key) {
        case (7, .latE7) where path[5] == k(.point): position.setE7(value, latitude: true)
        case (7, .lngE7) where path[5] == k(.point): position.setE7(value, latitude: false)
        case (6, .timestamp): position.setTime(value)
        case (6, .accuracyMm): position.accuracy = value.double.map { $0 / 1000 }
        case (6, .altitudeMeters): position.altitude = value.double
        case (6, .speedMetersPerSecond): position.speed = value.double
        default: break
        }
    }

    override package func documentEnded() throws(HistoryFileError) {
        if positions == 0 { throw HistoryFileError.nothingToImport(Self.noPositionsReason) }
    }
}
