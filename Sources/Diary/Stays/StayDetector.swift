import Foundation
import Configuration

/// Where someone stayed, found in a history of fixes: Li et al.'s (2008) stay-point rule (stay
/// within a distance for at least a time), made to hold up on phone data:
///
/// - accuracy-aware: a fix counts as "here" when its distance from the stay's centre is within
///   the radius plus its own accuracy, and a fix less accurate than `maxAccuracy` (a 150 m Wi-Fi
///   or cell fix) takes no part at all, so it neither breaks a stay nor makes one;
/// - gap-aware: fixes up to `maxGap` apart at the same place are one stay through the silence;
///   across a longer gap, or one with movement across it, the stay ends before it;
/// - noise-aware: up to two fixes off the place inside a stay are taken as outliers, not a
///   departure (the centre is an accuracy-weighted mean, so one bad fix barely moves it);
/// - sparse-aware: a stay's ends lie half-way towards the fixes before and after it (bounded), and
///   a typed `--at` fix is an anchor: it fixes the centre and makes a stay however short.
///
/// A pure value: history in, stays out, one pass in time order.
public struct StayDetector: Sendable, Equatable {
    public struct Point: Sendable, Equatable {
        public var latitude: Double
        public var longitude: Double
        /// Metres; nil when the source gave none (taken as a good GPS fix).
        public var accuracy: Double?
        /// Seconds since 1970.
        public var time: Double
        /// A position the person typed or chose (`--at`): exact, and a stay by itself.
        public var anchor: Bool

        public init(latitude: Double, longitude: Double, accuracy: Double? = nil, time: Double, anchor: Bool = false) {
            self.latitude = latitude
            self.longitude = longitude
            self.accuracy = accuracy
            self.time = time
            self.anchor = anchor
        }
    }

    /// A stay another program judged (Google's visits from `enlog import`): taken for its span.
    public struct Visit: Sendable, Equatable {
        public var latitude: Double
        public var longitude: Double
        public var start: Double
        public var end: Double
        public var name: String?
        /// `name` is the import's address for the place, not a name it gave.
        public var nameIsAddress: Bool

        public init(latitude: Double, longitude: Double, start: Double, end: Double, name: String? = nil,
                    nameIsAddress: Bool = false) {
            self.latitude = latitude
            self.longitude = longitude
            self.start = start
            self.end = end
            self.name = name
            self.nameIsAddress = name != nil && nameIsAddress
        }
    }

    public struct Stay: Sendable, Equatable, Codable {
        public enum Origin: String, Sendable, Codable {
            /// Found in the fixes.
            case fixes
            /// An imported program's visit.
            case visit
        }

        public var latitude: Double
        public var longitude: Double
        /// Seconds since 1970.
        public var arrival: Double
        public var departure: Double
        /// The fixes it was found in (0 for a visit).
        public var fixes: Int
        public var origin: Origin
        /// The visit's own name, when an import gave one.
        public var name: String?
        /// `name` is the import's address for the place, not a name it gave.
        public var nameIsAddress = false

        public var duration: Double { departure - arrival }
    }

    /// Metres from a stay's centre within which a fix (plus its accuracy) is still there.
    public var radius: Double
    /// Seconds someone must stay to make a stay (an anchor aside).
    public var minDuration: Double
    /// Longest silence, seconds, a stay lasts through when the fixes on both sides are there.
    public var maxGap: Double
    /// Fixes less accurate than this, metres, are left out.
    public var maxAccuracy: Double

    /// Consecutive fixes off the place a stay survives: a GPS jump is one or two fixes, leaving is more.
    static let outliersTolerated = 2
    /// ...and only while they span less than this: two fixes off the place ten minutes apart are
    /// an errand, not noise.
    static let outlierSpan = 600.0
    /// A sparse stay's ends reach at most this far, seconds, towards the fixes before and after it.
    static let sparseReach = 300.0
    /// A fix without an accuracy is weighed as this good, metres (a phone's GPS outdoors).
    static let assumedAccuracy = 10.0

    public init(radius: Double = Setting.staysRadius.defaultNumber,
                minDuration: Double = Setting.staysMinDuration.defaultNumber,
                maxGap: Double = Setting.staysMaxGap.defaultNumber,
                maxAccuracy: Double = Setting.staysMaxAccuracy.defaultNumber) {
        self.radius = radius
        self.minDuration = minDuration
        self.maxGap = maxGap
        self.maxAccuracy = maxAccuracy
    }

    public init(config: Config) {
        self.init(radius: config.number(.staysRadius), minDuration: config.number(.staysMinDuration),
                  maxGap: config.number(.staysMaxGap), maxAccuracy: config.number(.staysMaxAccuracy))
    }

    /// The stays in `points` (any order) and `visits`: a visit replaces the stays found in the
    /// fixes during its span. Oldest first.
    public func stays(in points: [Point], visits: [Visit] = []) -> [Stay] {
        var usable = points.filter { ($0.accuracy ?? 0) <= maxAccuracy }
        if !usable.isSorted() { usable.sort { $0.time < $1.time } }
        var found = detect(usable)
        guard !visits.isEmpty else { return found }
        found.removeAll { stay in visits.contains { $0.start < stay.departure && stay.arrival < $0.end } }
        found += visits.map {
            Stay(latitude: $0.latitude, longitude: $0.longitude, arrival: $0.start, departure: $0.end, fixes: 0,
                 origin: .visit, name: $0.name, nameIsAddress: $0.nameIsAddress)
        }
        return found.sorted { $0.arrival < $1.arrival }
    }

    private func detect(_ points: [Point]) -> [Stay] {
        var stays: [Stay] = []
        var first = 0
        while first < points.count {
            var centre = Centre(points[first])
            var last = first
            var misses = 0
            var next = first + 1
            while next < points.count {
                let point = points[next]
                if point.time - points[last].time > maxGap { break }
                if centre.distance(to: point) <= radius + (point.anchor ? 0 : point.accuracy ?? 0) {
                    centre.add(point)
                    last = next
                    misses = 0
                } else {
                    misses += 1
                    if misses > Self.outliersTolerated || point.time - points[last].time > Self.outlierSpan { break }
                }
                next += 1
            }
            // Someone walking up to a place and away from it is within the radius for a while
            // before and after: the stay is timed by the fixes within half of it.
            func settled(_ point: Point) -> Bool {
                centre.distance(to: point) <= radius / 2 + (point.anchor ? 0 : point.accuracy ?? 0)
            }
            var head = first, tail = last
            while head < tail, !settled(points[head]) { head += 1 }
            while tail > head, !settled(points[tail]) { tail -= 1 }
            guard points[tail].time - points[head].time >= minDuration || centre.anchored else {
                first += 1
                continue
            }
            var arrival = points[head].time, departure = points[tail].time
            if head > 0 { arrival -= min((arrival - points[head - 1].time) / 2, Self.sparseReach) }
            if tail + 1 < points.count { departure += min((points[tail + 1].time - departure) / 2, Self.sparseReach) }
            if let previous = stays.last, previous.departure > arrival { arrival = previous.departure }
            stays.append(Stay(latitude: centre.latitude, longitude: centre.longitude, arrival: arrival,
                              departure: departure, fixes: centre.count, origin: .fixes))
            first = last + 1
        }
        return stays
    }
}

/// A stay's running centre: the mean of its fixes weighed by their accuracy (1/σ²), or the last
/// anchor once one came. Distances on a local flat projection: exact enough within a few
/// hundred metres, and far cheaper than haversine for millions of fixes.
private struct Centre {
    var latitude: Double
    var longitude: Double
    var anchored = false
    var count = 0
    private var weight = 0.0
    private var sumLatitude = 0.0
    /// Longitudes are summed as offsets from the first fix's, so a stay on the antimeridian does
    /// not average to 0°.
    private var sumEast = 0.0
    private let referenceLongitude: Double
    private static let metresPerDegree = 111_195.0

    init(_ point: StayDetector.Point) {
        latitude = point.latitude
        longitude = point.longitude
        referenceLongitude = point.longitude
        add(point)
    }

    func distance(to point: StayDetector.Point) -> Double {
        let north = (point.latitude - latitude) * Self.metresPerDegree
        let east = Self.wrapped(point.longitude - longitude) * Self.metresPerDegree * cos(latitude * .pi / 180)
        return (north * north + east * east).squareRoot()
    }

    mutating func add(_ point: StayDetector.Point) {
        count += 1
        if point.anchor {
            anchored = true
            latitude = point.latitude
            longitude = point.longitude
        }
        guard !anchored else { return }
        let accuracy = max(point.accuracy ?? StayDetector.assumedAccuracy, 1)
        let w = 1 / (accuracy * accuracy)
        weight += w
        sumLatitude += w * point.latitude
        sumEast += w * Self.wrapped(point.longitude - referenceLongitude)
        latitude = sumLatitude / weight
        longitude = Self.wrapped(referenceLongitude + sumEast / weight)
    }

    private static func wrapped(_ degrees: Double) -> Double {
        degrees > 180 ? degrees - 360 : degrees < -180 ? degrees + 360 : degrees
    }
}

private extension Array where Element == StayDetector.Point {
    func isSorted() -> Bool {
        zip(self, dropFirst()).allSatisfy { $0.time <= $1.time }
    }
}
