import Foundation
import CLazyLibraries

/// An Overland batch as `PhonePayload.overland` reads it: per element of `locations`, whether it
/// is an object, its geometry's type and coordinates, and the properties a point is made of. Read
/// by yajl as a stream (`JSONStream`, as `enlog import` reads GeoJSON), keeping only those values:
/// JSONSerialization and its values as `PhoneJSON` (a dictionary per object, a class per number)
/// were three quarters of the receiver's parse of a batch and a third of its CPU. yajl is loaded
/// on first use and is a Recommends of the package: where it cannot be loaded, the batch is read
/// through `PhoneJSON` into the same values, as before.
struct OverlandBatch: Equatable {
    struct Location: Equatable {
        var isObject: Bool
        var geometryIsObject = false
        var geometryType: PhoneJSON?
        /// nil: no `coordinates`, or not an array. A nested array or object is an empty one.
        var coordinates: [PhoneJSON]?
        /// The properties of `propertyNames` only; a nested array or object is an empty one.
        var properties: [String: PhoneJSON] = [:]
    }

    /// nil: the body is not an object with a `locations` array.
    var locations: [Location]?

    static let propertyNames = ["timestamp", "horizontal_accuracy", "altitude", "speed", "course", "device_id"]

    static func read(_ body: [UInt8]) throws(PhonePayloadError) -> OverlandBatch {
        guard yajlLoads else { return OverlandBatch(try PhoneJSON.decode(body, .overland)) }
        return try streamed(body)
    }

    /// Whether yajl loads (checked once, without ending the process as a first call would).
    static let yajlLoads: Bool = {
        for index in 0..<enlog_lazy_library_count() where String(cString: enlog_lazy_library_name(index)).hasPrefix("libyajl") {
            var reason = [CChar](repeating: 0, count: 256)
            return enlog_lazy_library_check(index, &reason, reason.count) == 0
        }
        return false
    }()

    /// Read by yajl.
    static func streamed(_ body: [UInt8]) throws(PhonePayloadError) -> OverlandBatch {
        let reader = OverlandBatchReader()
        let stream = JSONStream(keys: OverlandBatchReader.keys, handler: reader)
        do {
            try stream.feed(body[...]) {}
            try stream.finish {}
        } catch let error as HistoryFileError {
            let place = if case .byte(let offset) = error.place { " at byte \(offset)" } else { "" }
            throw .notJSON(.overland, detail: error.reason + place)
        } catch {
            throw .notJSON(.overland, detail: "\(error)")
        }
        return reader.batch
    }

    /// The same values from a document read whole.
    init(_ root: PhoneJSON) {
        guard case .object(let object) = root, case .array(let elements)? = object["locations"] else { return }
        locations = elements.map { element in
            guard case .object(let feature) = element else { return Location(isObject: false) }
            var location = Location(isObject: true)
            if case .object(let geometry)? = feature["geometry"] {
                location.geometryIsObject = true
                location.geometryType = geometry["type"].map(Self.shallow)
                if case .array(let coordinates)? = geometry["coordinates"] { location.coordinates = coordinates.map(Self.shallow) }
            }
            if case .object(let properties)? = feature["properties"] {
                for name in Self.propertyNames { location.properties[name] = properties[name].map(Self.shallow) }
            }
            return location
        }
    }

    init(locations: [Location]? = nil) { self.locations = locations }

    /// A container as an empty one of its kind: all a point needs to know of it.
    private static func shallow(_ value: PhoneJSON) -> PhoneJSON {
        switch value {
        case .array: return .array([])
        case .object: return .object([:])
        default: return value
        }
    }
}

/// yajl's events → `OverlandBatch`. Paths are counted from the root object: `locations` (1), an
/// element (2), its `geometry` or `properties` (3), their members (4), a coordinate (5).
final class OverlandBatchReader: JSONEventHandler {
    enum Key: Int32 {
        case locations, geometry, properties, type, coordinates
        case timestamp, horizontalAccuracy, altitude, speed, course, deviceID
    }
    static let keys = JSONKeyTable(["locations", "geometry", "properties", "type", "coordinates"] + OverlandBatch.propertyNames)

    private(set) var batch = OverlandBatch()
    private var rootIsObject = false

    private func k(_ key: Key) -> Int32 { key.rawValue }

    /// Where a value at `path` goes, with the value itself (a scalar's, or an empty container).
    private func place(_ path: JSONPath, _ value: @autoclosure () -> PhoneJSON, container: Bool) {
        if path.count == 0 {
            rootIsObject = container && value() == .object([:])
            return
        }
        guard rootIsObject, path[0] == k(.locations) else { return }
        switch path.count {
        case 1:
            batch.locations = value() == .array([]) ? [] : nil
        case 2:
            guard batch.locations != nil else { return }
            batch.locations!.append(OverlandBatch.Location(isObject: value() == .object([:])))
        default:
            guard batch.locations?.isEmpty == false else { return }
            update(&batch.locations![batch.locations!.count - 1], path, value)
        }
    }

    private func update(_ location: inout OverlandBatch.Location, _ path: JSONPath, _ value: () -> PhoneJSON) {
        guard location.isObject else { return }
        let member = path[2]
        switch path.count {
        case 3 where member == k(.geometry):
            location.geometryIsObject = value() == .object([:])
            location.geometryType = nil
            location.coordinates = nil
        case 3 where member == k(.properties):
            location.properties = [:]
        case 4 where member == k(.geometry) && location.geometryIsObject:
            if path[3] == k(.type) {
                location.geometryType = value()
            } else if path[3] == k(.coordinates) {
                location.coordinates = value() == .array([]) ? [] : nil
            }
        case 4 where member == k(.properties):
            if let key = Key(rawValue: path[3]), key.rawValue >= Key.timestamp.rawValue {
                location.properties[OverlandBatch.propertyNames[Int(key.rawValue - Key.timestamp.rawValue)]] = value()
            }
        case 5 where member == k(.geometry) && path[3] == k(.coordinates) && path[4] == JSONPath.element:
            location.coordinates?.append(value())
        default:
            break
        }
    }

    func start(_ path: JSONPath, array: Bool) throws(HistoryFileError) {
        place(path, array ? .array([]) : .object([:]), container: true)
    }

    func end(_ path: JSONPath, array: Bool) throws(HistoryFileError) {}

    func scalar(_ path: JSONPath, _ value: JSONScalar) throws(HistoryFileError) {
        if value.kind == .number {
            // yajl has checked the number's grammar, not its size; Double's reading is exact, as
            // Foundation's is, and a number past Double's range is refused, as Foundation refuses it.
            guard let number = Double(value.string), number.isFinite else {
                throw HistoryFileError("the number \(value.string.prefix(40)) is out of range")
            }
            return place(path, .number(number), container: false)
        }
        place(path, Self.json(value), container: false)
    }

    private static func json(_ value: JSONScalar) -> PhoneJSON {
        switch value.kind {
        case .string: return .string(value.string)
        case .number: return Double(value.string).map(PhoneJSON.number) ?? .null
        case .bool: return .bool(value.bool)
        case .null: return .null
        }
    }
}
