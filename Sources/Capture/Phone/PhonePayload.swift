import Foundation
import Support
import Configuration
import Network

/// The phone apps whose own protocols `enlog serve` takes (Tests/ENLogKitTests/Serve/Fixtures/README.md
/// names the sources each parser follows).
package enum PhoneProtocol: String, Sendable, CaseIterable, Codable {
    /// OwnTracks in HTTP mode (and its MQTT payloads, which are the same JSON).
    case owntracks
    /// Overland (iOS): batches of GeoJSON features.
    case overland
    /// GPSLogger for Android's "custom URL": the placeholders' values by GET, form or JSON.
    case gpslogger
    /// Traccar Client and OsmAnd: the OsmAnd protocol's parameters, or the client's JSON.
    case traccar
}

/// A request as the parsers see it: the parts the apps put their values in, nothing else.
package struct PhoneMessage: Sendable, Equatable {
    /// The query string after `?` (percent-encoded as sent), empty when there is none.
    package var query: String
    /// The `Content-Type` header's media type, lowercased, without parameters; nil when absent.
    package var contentType: String?
    package var body: [UInt8]

    package init(query: String = "", contentType: String? = nil, body: [UInt8] = []) {
        self.query = query
        self.contentType = contentType.map { $0.split(separator: ";").first.map(String.init)?.trimmingCharacters(in: .whitespaces).lowercased() ?? "" }
        self.body = body
    }
}

/// What one request carried: its points, oldest first as sent, and the device name the payload
/// itself states (Traccar's `id`, Overland's `device_id`), which only ever names, never authenticates.
package struct PhonePoints: Sendable, Equatable {
    package var fixes: [Fix]
    package var statedDevice: String?

    package init(fixes: [Fix] = [], statedDevice: String? = nil) {
        self.fixes = fixes
        self.statedDevice = statedDevice
    }
}

/// A body enlog cannot take: the request is refused (400) and nothing of it is stored.
package enum PhonePayloadError: ENLogError, Equatable {
    case notJSON(PhoneProtocol, detail: String)
    case notExpectedShape(PhoneProtocol, detail: String)
    case missing(PhoneProtocol, field: String)
    case notANumber(PhoneProtocol, field: String, value: String)
    case badTime(PhoneProtocol, value: String)
    case outOfRange(PhoneProtocol, LocationError)
    case tooManyPoints(PhoneProtocol, count: Int, limit: Int)

    package var reason: String {
        let text: String
        switch self {
        case let .notJSON(app, detail): text = "\(app.rawValue): the body is not JSON (\(detail))"
        case let .notExpectedShape(app, detail): text = "\(app.rawValue): \(detail)"
        case let .missing(app, field): text = "\(app.rawValue): a point without \(field)"
        case let .notANumber(app, field, value): text = "\(app.rawValue): \(field) \"\(value.prefix(40))\" is not a number"
        case let .badTime(app, value): text = "\(app.rawValue): time \"\(value.prefix(40))\" is neither seconds, milliseconds nor ISO 8601"
        case let .outOfRange(app, error): text = "\(app.rawValue): \(error.reason)"
        case let .tooManyPoints(app, count, limit): text = "\(app.rawValue): \(count) points in one request, at most \(limit) are taken"
        }
        return TerminalText.oneLine(text)
    }

    package var category: ErrorCategory { .badLocation }
}

/// The apps' payloads → fixes: pure functions, no I/O, every value checked by `Fix`'s initializer
/// (`Fix.Limits`), the one place enlog checks a position from outside.
package enum PhonePayload {
    /// More points than any app sends in one request (Overland's largest batch is 1000).
    package static let pointLimit = 10_000

    package static func parse(_ app: PhoneProtocol, _ message: PhoneMessage) throws(PhonePayloadError) -> PhonePoints {
        let points: PhonePoints
        switch app {
        case .owntracks: points = try ownTracks(message)
        case .overland: points = try overland(message)
        case .gpslogger: points = try gpsLogger(message)
        case .traccar: points = try traccar(message)
        }
        guard points.fixes.count <= pointLimit else { throw .tooManyPoints(app, count: points.fixes.count, limit: pointLimit) }
        return points
    }

    // MARK: OwnTracks

    /// One JSON object, or an array of them; `_type: location` gives a point (`lat`, `lon`,
    /// `tst` in seconds, `acc`, `alt`, `vel` in km/h, `cog`), every other `_type` is accepted and
    /// ignored (transitions, waypoints, status, cards, encrypted payloads, lwt).
    static func ownTracks(_ message: PhoneMessage) throws(PhonePayloadError) -> PhonePoints {
        let app = PhoneProtocol.owntracks
        let root = try PhoneJSON.decode(message.body, app)
        let objects: [[String: PhoneJSON]]
        switch root {
        case .object(let object): objects = [object]
        case .array(let items):
            objects = try items.map { item throws(PhonePayloadError) in
                guard case .object(let object) = item else { throw .notExpectedShape(app, detail: "an array of something other than objects") }
                return object
            }
        default: throw .notExpectedShape(app, detail: "the body is neither an object nor an array of objects")
        }
        var points = PhonePoints()
        for object in objects where object["_type"]?.string == "location" {
            let values = PhoneValues(app, object)
            points.fixes.append(try values.fix(latitude: "lat", longitude: "lon", time: values.time("tst"),
                                               altitude: "alt", accuracy: "acc", speed: values.number("vel").map { $0 / 3.6 },
                                               course: "cog"))
            if points.statedDevice == nil { points.statedDevice = object["tid"]?.string }
        }
        return points
    }

    // MARK: Overland

    /// `{"locations": [Feature, …]}`: each a GeoJSON Point feature, `coordinates` [lon, lat(, alt)],
    /// `properties.timestamp` ISO 8601, `horizontal_accuracy`, `altitude`, `speed` m/s, `course`;
    /// features without a Point geometry (Overland's tracking stats) are skipped; `current` and
    /// `trip` are not points of the batch and are ignored.
    static func overland(_ message: PhoneMessage) throws(PhonePayloadError) -> PhonePoints {
        let app = PhoneProtocol.overland
        guard let locations = try OverlandBatch.read(message.body).locations else {
            throw .notExpectedShape(app, detail: "the body has no \"locations\" array")
        }
        var points = PhonePoints()
        for location in locations {
            guard location.isObject else { throw .notExpectedShape(app, detail: "a location that is not an object") }
            guard location.geometryIsObject, location.geometryType?.string == "Point" else { continue }
            guard let coordinates = location.coordinates, coordinates.count >= 2 else {
                throw .missing(app, field: "geometry.coordinates [lon, lat]")
            }
            var properties = location.properties
            properties["enlog.lon"] = coordinates[0]
            properties["enlog.lat"] = coordinates[1]
            if properties["altitude"] == nil, coordinates.count > 2 { properties["altitude"] = coordinates[2] }
            let values = PhoneValues(app, properties)
            points.fixes.append(try values.fix(latitude: "enlog.lat", longitude: "enlog.lon", time: values.time("timestamp"),
                                               altitude: "altitude", accuracy: "horizontal_accuracy",
                                               speed: values.number("speed"), course: "course"))
            if points.statedDevice == nil, let device = properties["device_id"]?.string, !device.isEmpty { points.statedDevice = device }
        }
        return points
    }

    // MARK: GPSLogger

    /// The custom URL's values: in the query (GET, or POST with the values in the URL), else in
    /// the body as a form or a JSON object. `lat`/`latitude`, `lon`/`longitude`, `timestamp`
    /// (%TIMESTAMP, seconds) or `time` (%TIME, ISO 8601), `acc`, `alt`, `spd` (m/s), `dir`: the
    /// names of GPSLogger's own `%ALL` form, which enlog's suggested URL uses too.
    static func gpsLogger(_ message: PhoneMessage) throws(PhonePayloadError) -> PhonePoints {
        let app = PhoneProtocol.gpslogger
        let values = try formOrJSON(app, message)
        guard values.has("lat") || values.has("latitude") else {
            throw .missing(app, field: "lat")
        }
        let time: Date
        if values.has("timestamp") { time = try values.time("timestamp") } else { time = try values.time("time") }
        let speed = values.has("spd") ? try values.number("spd") : try values.number("speed")
        let fix = try values.fix(latitude: values.has("lat") ? "lat" : "latitude", longitude: values.has("lon") ? "lon" : "longitude",
                                 time: time, altitude: values.has("alt") ? "alt" : "altitude",
                                 accuracy: values.has("acc") ? "acc" : "accuracy",
                                 speed: speed, course: values.has("dir") ? "dir" : "bearing")
        return PhonePoints(fixes: [fix], statedDevice: values.string("aid").flatMap { $0.isEmpty ? nil : $0 })
    }

    // MARK: Traccar / OsmAnd

    /// The OsmAnd protocol: `id`, `lat`+`lon` or `location=lat,lon`, `timestamp` (seconds,
    /// milliseconds, ISO 8601 or `yyyy-MM-dd HH:mm:ss` UTC), `speed` in knots, `bearing` or
    /// `heading`, `altitude`, `accuracy` — in the query, else in a form body; or Traccar Client's
    /// JSON (`device_id`, `location.timestamp`, `location.coords.{latitude, longitude, accuracy,
    /// speed m/s, heading, altitude}`). A request without a position (the client's push token) has no point.
    static func traccar(_ message: PhoneMessage) throws(PhonePayloadError) -> PhonePoints {
        let app = PhoneProtocol.traccar
        if message.contentType == "application/json" {
            guard case .object(let root) = try PhoneJSON.decode(message.body, app) else {
                throw .notExpectedShape(app, detail: "the body is not a JSON object")
            }
            let device = root["device_id"]?.string
            guard case .object(let location)? = root["location"] else { return PhonePoints(statedDevice: device) }
            guard case .object(var coords)? = location["coords"] else { return PhonePoints(statedDevice: device) }
            coords["enlog.timestamp"] = location["timestamp"]
            let values = PhoneValues(app, coords)
            let fix = try values.fix(latitude: "latitude", longitude: "longitude", time: values.time("enlog.timestamp"),
                                     altitude: "altitude", accuracy: "accuracy", speed: values.number("speed"), course: "heading")
            return PhonePoints(fixes: [fix], statedDevice: device)
        }
        var values = try PhoneValues(app, form: message.query)
        if values.isEmpty { values = try PhoneValues(app, form: String(decoding: message.body, as: UTF8.self)) }
        let device = values.string("id") ?? values.string("deviceid")
        if let location = values.string("location") {
            let parts = location.split(separator: ",", omittingEmptySubsequences: false)
            guard parts.count == 2 else { throw .notExpectedShape(app, detail: "location is not lat,lon") }
            values.set("lat", String(parts[0]))
            values.set("lon", String(parts[1]))
        }
        guard values.has("lat") || values.has("lon") else { return PhonePoints(statedDevice: device) }
        let fix = try values.fix(latitude: "lat", longitude: "lon", time: values.time("timestamp"), altitude: "altitude",
                                 accuracy: "accuracy", speed: try values.number("speed").map { $0 * knot },
                                 course: values.has("bearing") ? "bearing" : "heading")
        return PhonePoints(fixes: [fix], statedDevice: device)
    }

    /// Metres per second in one knot (1852 m per hour).
    static let knot = 1852.0 / 3600

    /// A form in the query, else the body as a JSON object (by its content type or its first
    /// byte) or a form.
    static func formOrJSON(_ app: PhoneProtocol, _ message: PhoneMessage) throws(PhonePayloadError) -> PhoneValues {
        let query = try PhoneValues(app, form: message.query)
        if query.has("lat") || query.has("latitude") { return query }
        let first = message.body.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
        if message.contentType == "application/json" || first == UInt8(ascii: "{") {
            guard case .object(let object) = try PhoneJSON.decode(message.body, app) else {
                throw .notExpectedShape(app, detail: "the body is not a JSON object")
            }
            return PhoneValues(app, object)
        }
        return try PhoneValues(app, form: String(decoding: message.body, as: UTF8.self))
    }
}

/// One point's named values, from JSON or a form, read into a `Fix`.
struct PhoneValues {
    let app: PhoneProtocol
    private var values: [String: PhoneJSON]

    init(_ app: PhoneProtocol, _ values: [String: PhoneJSON]) {
        self.app = app
        self.values = values
    }

    /// `a=1&b=2`, percent-decoded, `+` as space; the first of a name given twice counts.
    init(_ app: PhoneProtocol, form: String) throws(PhonePayloadError) {
        self.app = app
        values = [:]
        for pair in form.split(separator: "&") where !pair.isEmpty {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = Self.decoded(parts[0]), value = parts.count > 1 ? Self.decoded(parts[1]) : ""
            guard let name, let value else { throw .notExpectedShape(app, detail: "a form value that is not percent-encoded UTF-8") }
            if values[name] == nil { values[name] = .string(value) }
        }
    }

    private static func decoded(_ text: Substring) -> String? {
        String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }

    var isEmpty: Bool { values.isEmpty }

    func has(_ name: String) -> Bool {
        guard let value = values[name] else { return false }
        if case .null = value { return false }
        return true
    }

    mutating func set(_ name: String, _ value: String) { values[name] = .string(value) }

    func string(_ name: String) -> String? {
        switch values[name] {
        case .string(let text)?: return text
        case .number(let number)?: return number.rounded() == number && abs(number) < 1e15 ? String(Int64(number)) : String(number)
        default: return nil
        }
    }

    /// A JSON number or a numeric string; nil when absent, null or empty.
    func number(_ name: String) throws(PhonePayloadError) -> Double? {
        switch values[name] {
        case nil, .null?: return nil
        case .number(let number)?: return number
        case .string(let text)?:
            let trimmed = Self.trimmed(text)
            if trimmed.isEmpty { return nil }
            guard let number = Double(trimmed) else { throw .notANumber(app, field: name, value: text) }
            return number
        case .bool?, .array?, .object?:
            throw .notANumber(app, field: name, value: values[name].map { "\($0)" } ?? "")
        }
    }

    /// Seconds or milliseconds since 1970 (a number past 2^31 is milliseconds, as Traccar reads
    /// it), ISO 8601 with a zone, or `yyyy-MM-dd HH:mm:ss` in UTC.
    func time(_ name: String) throws(PhonePayloadError) -> Date {
        guard has(name) else { throw .missing(app, field: name) }
        if case .number(let number)? = values[name] { return Self.epoch(number) }
        guard let text = string(name).map(Self.trimmed) else { throw .badTime(app, value: "\(values[name]!)") }
        if let number = Double(text), number.isFinite { return Self.epoch(number) }
        if let date = TrackTime.parse(text) { return date }
        if text.count == 19, let date = TrackTime.parse(text.replacingOccurrences(of: " ", with: "T") + "Z") { return date }
        throw .badTime(app, value: text)
    }

    /// Without the spaces around it (`CharacterSet.whitespaces`). Most values have none: one that
    /// starts and ends with a visible ASCII byte is returned as it is, since Foundation's trimming
    /// was a twentieth of an Overland batch's CPU.
    static func trimmed(_ text: String) -> String {
        if let first = text.utf8.first, let last = text.utf8.last, (0x21...0x7E).contains(first), (0x21...0x7E).contains(last) {
            return text
        }
        return text.trimmingCharacters(in: .whitespaces)
    }

    private static func epoch(_ number: Double) -> Date {
        Date(timeIntervalSince1970: number >= Double(Int32.max) ? number / 1000 : number)
    }

    /// The fix of the named values; `Fix` checks each against `Fix.Limits`. The apps' "unknown"
    /// (CoreLocation's and Android's −1 for accuracy, speed and course) is no value.
    func fix(latitude: String, longitude: String, time: Date, altitude: String, accuracy: String,
             speed: Double?, course: String) throws(PhonePayloadError) -> Fix {
        guard let lat = try number(latitude) else { throw .missing(app, field: latitude) }
        guard let lon = try number(longitude) else { throw .missing(app, field: longitude) }
        func known(_ value: Double?) -> Double? { value.flatMap { $0 < 0 ? nil : $0 } }
        let altitude = try number(altitude), accuracy = known(try number(accuracy)), course = known(try number(course))
        do {
            return try Fix(latitude: lat, longitude: lon, altitude: altitude, horizontalAccuracy: accuracy,
                           speed: known(speed), course: course, timestamp: time, source: .phone)
        } catch {
            throw .outOfRange(app, error)
        }
    }
}

/// A JSON document as values: what the payloads hold.
indirect enum PhoneJSON: Equatable, CustomStringConvertible {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([PhoneJSON])
    case object([String: PhoneJSON])

    /// Foundation's JSONSerialization, then values: several times faster than a `Decodable`
    /// walk, which tries each type in turn at every value (an Overland batch of 1000 points).
    /// The values are told apart by their exact type first: a dynamic cast (`as String`,
    /// `as [String: Any]`) of an `Any` looks for bridged Foundation types too, and cost five
    /// times the parse itself (12 ms of CPU for an Overland batch of 200, against 0.7).
    static func decode(_ bytes: [UInt8], _ app: PhoneProtocol) throws(PhonePayloadError) -> PhoneJSON {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
        } catch {
            throw .notJSON(app, detail: (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "\(error)")
        }
        return value(object)
    }

    private static func value(_ object: Any) -> PhoneJSON {
        let type = Swift.type(of: object)
        if type == String.self { return .string(object as! String) }
        if type == [String: Any].self { return .object((object as! [String: Any]).mapValues(value)) }
        if type == [Any].self { return .array((object as! [Any]).map(value)) }
        if type == NSNumber.self { return number(object as! NSNumber) }
        if type == NSNull.self { return .null }
        // Whatever else a Foundation might hand back (bridged NSString, NSDictionary, NSArray).
        switch object {
        case let text as String: return .string(text)
        case let number as NSNumber: return Self.number(number)
        case let array as [Any]: return .array(array.map(value))
        case let dictionary as [String: Any]: return .object(dictionary.mapValues(value))
        default: return .null
        }
    }

    /// JSON's true and false arrive as NSNumbers of type char ("c"), numbers never do.
    private static func number(_ number: NSNumber) -> PhoneJSON {
        let objCType = number.objCType
        if objCType[0] == CChar(UInt8(ascii: "c")), objCType[1] == 0 { return .bool(number.boolValue) }
        return .number(number.doubleValue)
    }

    var string: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    var description: String {
        switch self {
        case .null: return "null"
        case .bool(let value): return String(value)
        case .number(let value): return String(value)
        case .string(let value): return value
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}
