import Foundation
import Support
import Configuration
import Network

/// One position reading, checked at construction: a `Fix` always has finite, in-range coordinates.
public struct Fix: Sendable, Equatable, Codable {
    public enum Source: String, Sendable, Codable, CaseIterable {
        case gpsd, manual, nmea
        /// Imported from a GPX file (`enlog import`).
        case gpx
        /// A photo's EXIF GPS tags (`enlog log --photo`).
        case photo
    }

    public let latitude: Double
    public let longitude: Double
    /// Metres above mean sea level, when the receiver had a 3D fix.
    public let altitude: Double?
    /// Radius of horizontal uncertainty in metres; `nil` when the source gave none.
    public let horizontalAccuracy: Double?
    /// Metres per second over ground.
    public let speed: Double?
    /// Degrees clockwise from true north.
    public let course: Double?
    public let timestamp: Date
    public let source: Source

    public init(
        latitude: Double,
        longitude: Double,
        altitude: Double? = nil,
        horizontalAccuracy: Double? = nil,
        speed: Double? = nil,
        course: Double? = nil,
        timestamp: Date,
        source: Source
    ) throws(LocationError) {
        guard latitude.isFinite else { throw .nonFiniteCoordinate(name: "latitude", value: latitude) }
        guard longitude.isFinite else { throw .nonFiniteCoordinate(name: "longitude", value: longitude) }
        guard (-90.0...90.0).contains(latitude) else { throw .latitudeOutOfRange(latitude) }
        guard (-180.0...180.0).contains(longitude) else { throw .longitudeOutOfRange(longitude) }
        if let altitude, !altitude.isFinite { throw .nonFiniteCoordinate(name: "altitude", value: altitude) }
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
        // Optional measurements that are not finite carry no information; keeping NaN would
        // poison comparisons later (NaN <= 10 is false, but so is NaN > 10).
        self.horizontalAccuracy = horizontalAccuracy.flatMap { $0.isFinite ? $0 : nil }
        self.speed = speed.flatMap { $0.isFinite ? $0 : nil }
        self.course = course.flatMap { $0.isFinite ? $0 : nil }
        self.timestamp = timestamp
        self.source = source
    }

    // Decoding goes through the checking initializer so a stored fix cannot bypass validation.
    private enum CodingKeys: String, CodingKey {
        case latitude, longitude, altitude, horizontalAccuracy, speed, course, timestamp, source
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        try self.init(
            latitude: c.decode(Double.self, forKey: .latitude),
            longitude: c.decode(Double.self, forKey: .longitude),
            altitude: c.decodeIfPresent(Double.self, forKey: .altitude),
            horizontalAccuracy: c.decodeIfPresent(Double.self, forKey: .horizontalAccuracy),
            speed: c.decodeIfPresent(Double.self, forKey: .speed),
            course: c.decodeIfPresent(Double.self, forKey: .course),
            timestamp: c.decode(Date.self, forKey: .timestamp),
            source: c.decode(Source.self, forKey: .source))
    }
}

/// Anything that can produce the device's current position.
///
/// Implementations throw `LocationError` (and `CancellationError` when the task is cancelled).
public protocol LocationSource: Sendable {
    func currentFix() async throws -> Fix
}
