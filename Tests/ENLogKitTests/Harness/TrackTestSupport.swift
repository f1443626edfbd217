import Foundation
@testable import Capture

/// A generated drive or stay, one point per second: stops and straight legs due east, each
/// point with receiver-like noise, as fixes (for the decision logic) or as NMEA (for gpsd).
struct GeneratedTrack {
    struct Point {
        var time: Date
        var latitude: Double
        var longitude: Double
        var hdop: Double
    }

    static let origin = (latitude: 48.1486, longitude: 11.5783)
    static let metresPerDegreeLatitude = 111_320.0
    static var metresPerDegreeLongitude: Double { 111_320.0 * cos(origin.latitude * .pi / 180) }

    enum Leg {
        case stop(seconds: Int)
        case drive(metres: Double, speed: Double)
    }

    private(set) var points: [Point] = []
    /// Metres east of the origin, where each leg begins (a stop's place).
    private(set) var legStarts: [(second: Int, east: Double)] = []

    /// `noise`: nil for exact positions; otherwise a seed for receiver noise: a slowly wandering
    /// offset (what multipath and changing satellites do) plus independent scatter, both scaled
    /// by the fix's accuracy (19 m × HDOP, as gpsd reports it), HDOP drifting in `hdop`.
    init(start: Date, legs: [Leg], noise seed: UInt64? = nil, hdop: ClosedRange<Double> = 0.5...0.5) {
        var generator = SeededGenerator(state: seed ?? 0)
        var east = 0.0, second = 0
        var wander = (north: 0.0, east: 0.0)
        var currentHDOP = hdop.lowerBound
        func gaussian() -> Double {
            let u1 = Double.random(in: Double.ulpOfOne..<1, using: &generator), u2 = Double.random(in: 0..<1, using: &generator)
            return (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
        }
        func emit(_ trueEast: Double) {
            var north = 0.0, offsetEast = 0.0
            if seed != nil {
                if hdop.lowerBound < hdop.upperBound {
                    currentHDOP = min(hdop.upperBound, max(hdop.lowerBound, currentHDOP + 0.05 * gaussian()))
                }
                let accuracy = currentHDOP * NMEALogLocation.metresPerHDOP
                // AR(1) wander with a stationary deviation of a quarter of the accuracy, plus
                // scatter of a fifth: together well inside the stated radius, as a receiver's is.
                let keep = 0.98, step = (1 - keep * keep).squareRoot() * accuracy / 4
                wander = (keep * wander.north + step * gaussian(), keep * wander.east + step * gaussian())
                north = wander.north + accuracy / 5 * gaussian()
                offsetEast = wander.east + accuracy / 5 * gaussian()
            }
            points.append(Point(time: start.addingTimeInterval(Double(second)),
                                latitude: Self.origin.latitude + north / Self.metresPerDegreeLatitude,
                                longitude: Self.origin.longitude + (trueEast + offsetEast) / Self.metresPerDegreeLongitude,
                                hdop: (currentHDOP * 100).rounded() / 100))
            second += 1
        }
        for leg in legs {
            legStarts.append((second, east))
            switch leg {
            case .stop(let seconds):
                for _ in 0..<seconds { emit(east) }
            case .drive(let metres, let speed):
                let seconds = Int((metres / speed).rounded())
                for step in 0..<seconds { emit(east + Double(step) * speed) }
                east += metres
            }
        }
        legStarts.append((second, east))
    }

    /// The same track without the points before `time` (what a receiver joined late saw).
    func starting(at time: Date) -> GeneratedTrack {
        var copy = self
        copy.points.removeAll { $0.time < time }
        return copy
    }

    var fixes: [Fix] {
        points.map {
            try! Fix(latitude: $0.latitude, longitude: $0.longitude, altitude: 520,
                     horizontalAccuracy: $0.hdop * NMEALogLocation.metresPerHDOP, timestamp: $0.time, source: .nmea)
        }
    }

    /// Metres east of the origin of a position.
    static func east(ofLongitude longitude: Double) -> Double {
        (longitude - origin.longitude) * metresPerDegreeLongitude
    }

    /// GGA + GSA + RMC per point, checksummed, as a receiver writes them.
    var nmea: String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        func degrees(_ value: Double, width: Int) -> String {
            let whole = Int(abs(value)), minutes = (abs(value) - Double(whole)) * 60
            return String(format: "%0\(width)d%07.4f", whole, minutes)
        }
        var text = ""
        for point in points {
            // To the hundredth NMEA carries, rounded first: 22.0 s held as 21.9999999 would
            // otherwise be written as 21.99.
            let time = Date(timeIntervalSince1970: (point.time.timeIntervalSince1970 * 100).rounded() / 100)
            let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .nanosecond], from: time)
            let hundredths = Int((Double(parts.nanosecond ?? 0) / 10_000_000).rounded()) % 100
            let hms = String(format: "%02d%02d%02d.%02d", parts.hour!, parts.minute!, parts.second!, hundredths)
            let dmy = String(format: "%02d%02d%02d", parts.day!, parts.month!, parts.year! % 100)
            let lat = degrees(point.latitude, width: 2) + (point.latitude >= 0 ? ",N" : ",S")
            let lon = degrees(point.longitude, width: 3) + (point.longitude >= 0 ? ",E" : ",W")
            let hdop = String(format: "%.2f", point.hdop)
            text += NMEA.sentence("GPGGA,\(hms),\(lat),\(lon),1,09,\(hdop),520.0,M,47.3,M,,")
            text += NMEA.sentence("GPGSA,A,3,02,05,07,13,15,18,20,24,29,,,,1.4,\(hdop),1.1")
            text += NMEA.sentence("GPRMC,\(hms),A,\(lat),\(lon),0.0,90.0,\(dmy),3.1,E,A")
        }
        return text
    }
}
