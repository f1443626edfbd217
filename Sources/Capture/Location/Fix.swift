import Foundation
import Support
import Configuration
import Network

/// One position reading, checked at construction: a `Fix` always has finite values within `Fix.Limits`.
package struct Fix: Sendable, Equatable, Codable {
    package enum Source: String, Sendable, Codable, CaseIterable {
        case gpsd, manual, nmea
        /// Imported from a GPX file (`enlog import`).
        case gpx
        /// A photo's EXIF GPS tags (`enlog log --photo`).
        case photo
        /// Another program's location history (`enlog import`: Google Timeline, OwnTracks, KML,
        /// GeoJSON, CSV and the other formats of `HistoryFormat`).
        case imported
        /// Sent live by a phone app to `enlog serve` (OwnTracks, Overland, GPSLogger, Traccar).
        case phone
    }

    package let latitude: Double
    package let longitude: Double
    /// Metres above mean sea level, when the receiver had a 3D fix.
    package let altitude: Double?
    /// Radius of horizontal uncertainty in metres; `nil` when the source gave none.
    package let horizontalAccuracy: Double?
    /// Metres per second over ground.
    package let speed: Double?
    /// Degrees clockwise from true north.
    package let course: Double?
    package let timestamp: Date
    package let source: Source

    package init(
        latitude: Double,
        longitude: Double,
        altitude: Double? = nil,
        horizontalAccuracy: Double? = nil,
        speed: Double? = nil,
        course: Double? = nil,
        timestamp: Date,
        source: Source
    ) throws(LocationError) {
        typealias Limits = Fix.Limits
        guard latitude.isFinite else { throw .nonFiniteCoordinate(name: "latitude", value: latitude) }
        guard longitude.isFinite else { throw .nonFiniteCoordinate(name: "longitude", value: longitude) }
        guard Limits.latitude.contains(latitude) else { throw .latitudeOutOfRange(latitude) }
        guard Limits.longitude.contains(longitude) else { throw .longitudeOutOfRange(longitude) }
        if let altitude, !altitude.isFinite { throw .nonFiniteCoordinate(name: "altitude", value: altitude) }
        // Optional measurements that are not finite carry no information; keeping NaN would
        // poison comparisons later (NaN <= 10 is false, but so is NaN > 10).
        let accuracy = horizontalAccuracy.flatMap { $0.isFinite ? $0 : nil }
        let speed = speed.flatMap { $0.isFinite ? $0 : nil }
        let course = course.flatMap { $0.isFinite ? $0 : nil }
        // One call per measurement, not a loop over an array of them: `enlog import` builds
        // millions of fixes, and the array was allocated for each.
        func check(_ name: String, _ value: Double?, _ limits: ClosedRange<Double>, _ unit: String) throws(LocationError) {
            if let value, !limits.contains(value) {
                throw .valueOutOfRange(name: name, value: value, limits: limits, unit: unit)
            }
        }
        try check("altitude", altitude, Limits.altitude, "m")
        try check("horizontal accuracy", accuracy, Limits.horizontalAccuracy, "m")
        try check("speed", speed, Limits.speed, "m/s")
        try check("course", course, Limits.course, "°")
        guard Limits.time.contains(timestamp) else { throw .timeOutOfRange(timestamp) }
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
        self.horizontalAccuracy = accuracy
        self.speed = speed
        self.course = course
        self.timestamp = timestamp
        self.source = source
    }

    /// What a fix may hold, whatever its source (`--at`, gpsd, NMEA, GPX, a photo's EXIF, the
    /// outbox): every value from outside goes through these, in `init`, and nowhere else.
    package enum Limits {
        package static let latitude = -90.0...90.0
        package static let longitude = -180.0...180.0
        /// From the deepest ocean floor (−10 935 m) to the edge of space (the Kármán line): any
        /// other altitude is a typo or a receiver's garbage, and would print as such in a note.
        package static let altitude = -11_000.0...100_000.0
        /// Up to half the Earth's circumference: no position is less certain than anywhere.
        package static let horizontalAccuracy = 0.0...20_037_509.0
        /// Faster than anything a GPS receiver is carried on (receivers stop at 515 m/s).
        package static let speed = 0.0...1_000.0
        package static let course = 0.0...360.0
        /// GPS time began on 1980-01-06; 2100 is far enough for a diary. A time outside is a
        /// receiver's or a file's garbage (year 1, year 9999), and no day query could find it.
        package static let time = Date(timeIntervalSince1970: 315_964_800)...Date(timeIntervalSince1970: 4_102_444_799.999)

        /// Offsets from UTC a place's clocks have had, in seconds (−12:00 Baker Island to +14:00
        /// Kiribati, with room for the historical): a stated offset outside is a file's garbage.
        package static let utcOffset = -18 * 3600...18 * 3600

        /// A clock reading a source wrote (NMEA's hhmmss, ISO 8601, EXIF's GPSTimeStamp): 60 s is
        /// a leap second; anything more would roll into the next minute, hour or day.
        package static func isTimeOfDay(hour: Double, minute: Double, second: Double) -> Bool {
            (0..<24).contains(hour) && (0..<60).contains(minute) && (0..<61).contains(second)
        }
    }

    // Decoding goes through the checking initializer so a stored fix cannot bypass validation.
    private enum CodingKeys: String, CodingKey {
        case latitude, longitude, altitude, horizontalAccuracy, speed, course, timestamp, source
    }

    package init(from decoder: any Decoder) throws {
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
package protocol LocationSource: Sendable {
    func currentFix() async throws -> Fix
}
