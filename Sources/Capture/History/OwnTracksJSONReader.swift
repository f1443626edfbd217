import Foundation

/// OwnTracks JSON: one message, an array of messages, the recorder API's `{"data": [...]}` or an
/// export keyed by user and device. A message is an object at the top or in an array; it is a
/// location when its `_type` (or `type`) is `location`, or when it has none and carries `lat`,
/// `lon` or `tst`. Other messages (`transition`, `lwt`, `encrypted`, …) are counted as not points.
/// `tst` is epoch seconds, `vel` km/h, `cog` degrees, `tid` the device.
package typealias OwnTracksJSONReader = JSONHistoryReader<OwnTracksJSONMachine>

package final class OwnTracksJSONMachine: HistoryJSONMachine, JSONHistoryFormat {
    package static let format = HistoryFormat.ownTracksJSON
    enum Key: Int32 { case underscoreType, type, lat, lon, tst, acc, alt, vel, cog, tid }
    package static let keys = JSONKeyTable(["_type", "type", "lat", "lon", "tst", "acc", "alt", "vel", "cog", "tid"])

    private struct Message {
        var depth: Int
        var point = PointFields()
        /// nil: no `_type`; else whether it said `location`.
        var isLocation: Bool?
        var hasLocationField = false
    }
    /// Messages open around the current event: a wrapper object can hold arrays of messages.
    private var open: [Message] = []

    private static func isMessageStart(_ path: JSONPath) -> Bool {
        path.count == 0 || path.last == JSONPath.element
    }

    override package func start(_ path: JSONPath, array: Bool) throws(HistoryFileError) {
        if !array, Self.isMessageStart(path), open.count < 8 { open.append(Message(depth: path.count)) }
    }

    override package func end(_ path: JSONPath, array: Bool) throws(HistoryFileError) {
        guard !array, let message = open.last, message.depth == path.count else { return }
        open.removeLast()
        switch message.isLocation {
        case true?: pending.append(message.point.item())
        case false?: pending.append(.skipped(.notAPoint))
        case nil: if message.hasLocationField { pending.append(message.point.item()) }
        }
    }

    override package func scalar(_ path: JSONPath, _ value: JSONScalar) throws(HistoryFileError) {
        guard let depth = open.last?.depth, path.count == depth + 1, let key = Key(rawValue: path.last) else { return }
        var message = open[open.count - 1]
        switch key {
        case .underscoreType, .type:
            if message.isLocation == nil || key == .underscoreType { message.isLocation = value.equals("location") }
        case .lat: message.point.setCoordinate(value, latitude: true); message.hasLocationField = true
        case .lon: message.point.setCoordinate(value, latitude: false); message.hasLocationField = true
        case .tst: message.point.setTime(value); message.hasLocationField = true
        case .acc: message.point.accuracy = value.double
        case .alt: message.point.altitude = value.double
        case .vel: message.point.speed = value.double.map { $0 / 3.6 }
        case .cog: message.point.course = value.double
        case .tid: message.point.device = value.text
        }
        open[open.count - 1] = message
    }
}
