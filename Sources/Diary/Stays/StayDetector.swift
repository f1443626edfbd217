import Foundation
import Configuration

/// Where someone stayed, found in a history of fixes: Li et al.'s (2008) stay-point rule (stay
/// within a distance for at least a time), made to hold up on phone data:
///
/// - accuracy-aware: a fix counts as "here" when its distance from the stay's centre is within
///   the radius plus its own accuracy (counted up to the radius), and a fix less accurate than
///   `maxAccuracy` (a 150 m Wi-Fi or cell fix) takes no part at all, so it neither breaks a stay
///   nor makes one;
/// - gap-aware: fixes up to `maxGap` apart at the same place are one stay through the silence;
///   across a longer gap, or one with movement across it, the stay ends before it;
/// - noise-aware: fixes off the place inside a stay are outliers, not a departure, while they are
///   at most two or span less than `minDuration` (the centre is an accuracy-weighted mean of the
///   stay's settled fixes, so one bad fix barely moves it);
/// - drift-aware: a visit the GPS fading indoors broke in two (a few minutes, a "move" of no
///   time, the rest) is merged back into one stay;
/// - sparse-aware: a stay's ends lie half-way towards the fixes before and after it (bounded), and
///   a typed `--at` fix is an anchor: it fixes the centre and makes a stay however short.
///
/// A pure value: history in, stays out, one pass in time order.
package struct StayDetector: Sendable, Equatable {
    package struct Point: Sendable, Equatable {
        package var latitude: Double
        package var longitude: Double
        /// Metres; nil when the source gave none (taken as a good GPS fix).
        package var accuracy: Double?
        /// Seconds since 1970.
        package var time: Double
        /// A position the person typed or chose (`--at`): exact, and a stay by itself.
        package var anchor: Bool = false
    }

    /// A stay another program judged (Google's visits from `enlog import`): taken for its span.
    package struct Visit: Sendable, Equatable {
        package var latitude: Double
        package var longitude: Double
        package var start: Double
        package var end: Double
        package var name: String?
        /// `name` is the import's address for the place, not a name it gave.
        package var nameIsAddress: Bool

        package init(latitude: Double, longitude: Double, start: Double, end: Double, name: String? = nil,
                    nameIsAddress: Bool = false) {
            self.latitude = latitude
            self.longitude = longitude
            self.start = start
            self.end = end
            self.name = name
            self.nameIsAddress = name != nil && nameIsAddress
        }
    }

    package struct Stay: Sendable, Equatable, Codable {
        package enum Origin: String, Sendable, Codable {
            /// Found in the fixes.
            case fixes
            /// An imported program's visit.
            case visit
        }

        package var latitude: Double
        package var longitude: Double
        /// Seconds since 1970.
        package var arrival: Double
        package var departure: Double
        /// The fixes it was found in (0 for a visit).
        package var fixes: Int
        package var origin: Origin
        /// The visit's own name, when an import gave one.
        package var name: String?
        /// `name` is the import's address for the place, not a name it gave.
        package var nameIsAddress = false

        package var duration: Double { departure - arrival }
    }

    /// Metres from a stay's centre within which a fix (plus its accuracy) is still there.
    package var radius: Double
    /// Seconds someone must stay to make a stay (an anchor aside).
    package var minDuration: Double
    /// Longest silence, seconds, a stay lasts through when the fixes on both sides are there.
    package var maxGap: Double
    /// Fixes less accurate than this, metres, are left out.
    package var maxAccuracy: Double

    /// Consecutive fixes off the place a stay survives however long they last (up to
    /// `outlierSpan`): a GPS jump is one or two fixes. More survive only while they span less
    /// than `minDuration`, too short to have been a stay anywhere else (a burst of stray Wi-Fi
    /// fixes at 1 Hz).
    static let outliersTolerated = 2
    /// ...and never longer than this: fixes off the place for ten minutes are an errand, not
    /// noise. Also the longest break between two stays at one place that are merged into one.
    static let outlierSpan = 600.0
    /// A sparse stay's ends reach at most this far, seconds, towards the fixes before and after it.
    static let sparseReach = 300.0
    /// A fix without an accuracy is weighed as this good, metres (a phone's GPS outdoors).
    static let assumedAccuracy = 10.0

    package init(radius: Double = Setting.staysRadius.defaultNumber,
                minDuration: Double = Setting.staysMinDuration.defaultNumber,
                maxGap: Double = Setting.staysMaxGap.defaultNumber,
                maxAccuracy: Double = Setting.staysMaxAccuracy.defaultNumber) {
        self.radius = radius
        self.minDuration = minDuration
        self.maxGap = maxGap
        self.maxAccuracy = maxAccuracy
    }

    package init(config: Config) {
        self.init(radius: config.number(.staysRadius), minDuration: config.number(.staysMinDuration),
                  maxGap: config.number(.staysMaxGap), maxAccuracy: config.number(.staysMaxAccuracy))
    }

    /// The stays in `points` (any order) and `visits`: a visit replaces the stays found in the
    /// fixes during its span. Oldest first.
    package func stays(in points: [Point], visits: [Visit] = []) -> [Stay] {
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
        var found: [Candidate] = []
        var first = 0
        while first < points.count {
            var centre = Centre(points[first])
            var last = first
            var misses = 0
            var firstMiss = 0.0
            var next = first + 1
            while next < points.count {
                let point = points[next]
                if point.time - points[last].time > maxGap { break }
                if isHere(point, centre) {
                    centre.add(point)
                    last = next
                    // A fix at the place cancels one off it, not all: indoors next door, now and
                    // then a fix reaches back here, and that must not hold the stay here.
                    misses = max(0, misses - 1)
                } else {
                    // The first fix after a silence being off is a stray (an hour indoors, then one
                    // Wi-Fi fix 400 m away) only when a fix within ten minutes after it is back
                    // here; otherwise the person left during the silence.
                    if misses == 0, point.time - points[last].time > Self.outlierSpan,
                       !returns(after: next, in: points, to: centre) { break }
                    misses += 1
                    if misses == 1 { firstMiss = point.time }
                    // Measured from the first fix off the place, not from the last one at it: the
                    // silence before a stray is not time away.
                    let away = point.time - firstMiss
                    if away > Self.outlierSpan || (misses > Self.outliersTolerated && away > minDuration) { break }
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
            // The centre again, of the fixes of the stay itself: the walk up to the door, whose
            // good fixes outweigh the ones indoors, is not where the person stayed.
            var settledCentre: Centre?
            for index in head...tail where isHere(points[index], centre) {
                if settledCentre == nil { settledCentre = Centre(points[index]) } else { settledCentre?.add(points[index]) }
            }
            found.append(Candidate(centre: settledCentre ?? centre, head: head, tail: tail))
            first = last + 1
        }
        var stays: [Stay] = []
        for candidate in merged(found, points) {
            let head = candidate.head, tail = candidate.tail, centre = candidate.centre
            var arrival = points[head].time, departure = points[tail].time
            if head > 0 { arrival -= min((arrival - points[head - 1].time) / 2, Self.sparseReach) }
            if tail + 1 < points.count { departure += min((points[tail + 1].time - departure) / 2, Self.sparseReach) }
            if let previous = stays.last, previous.departure > arrival { arrival = previous.departure }
            stays.append(Stay(latitude: centre.latitude, longitude: centre.longitude, arrival: arrival,
                              departure: departure, fixes: centre.count, origin: .fixes))
        }
        return stays
    }

    /// Whether a fix within `outlierSpan` after `points[index]` is at the place again.
    private func returns(after index: Int, in points: [Point], to centre: Centre) -> Bool {
        var later = index + 1
        while later < points.count, points[later].time - points[index].time <= Self.outlierSpan {
            if isHere(points[later], centre) { return true }
            later += 1
        }
        return false
    }

    /// A fix is at the place when within the radius plus its accuracy, an accuracy beyond the
    /// radius widening it no further: indoors a phone claims 30-80 m, and a fix claiming 80 m
    /// would otherwise reach 130 m, into the place next door.
    private func isHere(_ point: Point, _ centre: Centre) -> Bool {
        centre.distance(to: point) <= radius + (point.anchor ? 0 : min(point.accuracy ?? 0, radius))
    }

    private struct Candidate {
        var centre: Centre
        var head: Int
        var tail: Int
    }

    /// One visit broken in two is one stay: consecutive stays whose centres lie within the
    /// radius plus the accuracy their fixes typically claim (at most twice the radius, as for a
    /// fix), with at most `outlierSpan` between them (a drift indoors, a stray Wi-Fi fix, a few
    /// minutes of fixes off), are merged. Two places further apart, or a longer absence, stay two
    /// stays; an anchor stays alone.
    private func merged(_ candidates: [Candidate], _ points: [Point]) -> [Candidate] {
        var result: [Candidate] = []
        for candidate in candidates {
            if var previous = result.last, !previous.centre.anchored, !candidate.centre.anchored,
               points[candidate.head].time - points[previous.tail].time <= Self.outlierSpan,
               previous.centre.distance(to: candidate.centre)
                   <= radius + min(max(previous.centre.typicalAccuracy, candidate.centre.typicalAccuracy), radius) {
                previous.centre.absorb(candidate.centre)
                previous.tail = candidate.tail
                result[result.count - 1] = previous
            } else {
                result.append(candidate)
            }
        }
        return result
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
    /// The fixes in `weight` (an anchor's are not).
    private var weighed = 0
    private var sumLatitude = 0.0
    /// Longitudes are summed as offsets from the first fix's, so a stay on the antimeridian does
    /// not average to 0°.
    private var sumEast = 0.0
    private let referenceLongitude: Double
    private static let metresPerDegree = 111_195.0
    /// Half the default radius: finer than that, a position does not place someone within a place.
    static let finestAccuracy = 25.0

    init(_ point: StayDetector.Point) {
        latitude = point.latitude
        longitude = point.longitude
        referenceLongitude = point.longitude
        add(point)
    }

    func distance(to point: StayDetector.Point) -> Double {
        distance(to: point.latitude, point.longitude)
    }

    func distance(to other: Centre) -> Double {
        distance(to: other.latitude, other.longitude)
    }

    private func distance(to otherLatitude: Double, _ otherLongitude: Double) -> Double {
        let north = (otherLatitude - latitude) * Self.metresPerDegree
        let east = Self.wrapped(otherLongitude - longitude) * Self.metresPerDegree * cos(latitude * .pi / 180)
        return (north * north + east * east).squareRoot()
    }

    /// The accuracy its fixes typically claim (the root mean square of the weighed accuracies).
    var typicalAccuracy: Double {
        weight > 0 ? (Double(weighed) / weight).squareRoot() : 0
    }

    /// The fixes of `other` added to these.
    mutating func absorb(_ other: Centre) {
        count += other.count
        guard !anchored, !other.anchored, other.weight > 0 else { return }
        weighed += other.weighed
        weight += other.weight
        sumLatitude += other.sumLatitude
        sumEast += other.sumEast + other.weight * Self.wrapped(other.referenceLongitude - referenceLongitude)
        latitude = sumLatitude / weight
        longitude = Self.wrapped(referenceLongitude + sumEast / weight)
    }

    mutating func add(_ point: StayDetector.Point) {
        count += 1
        if point.anchor {
            anchored = true
            latitude = point.latitude
            longitude = point.longitude
        }
        guard !anchored else { return }
        // A fix is weighed by its accuracy, but none as better than `finestAccuracy`: a 5 m GPS fix
        // on the pavement outside knows where the phone is, not where in the place its owner is.
        let accuracy = max(point.accuracy ?? StayDetector.assumedAccuracy, Self.finestAccuracy)
        let w = 1 / (accuracy * accuracy)
        weighed += 1
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
