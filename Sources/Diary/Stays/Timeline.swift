import Foundation
import Support
import Configuration
import Capture
import Compose
import Outbox

/// A span of the history told as stays and the moves between them (`enlog timeline`).
package struct Timeline: Sendable, Equatable, Codable {
    package struct Stay: Sendable, Equatable, Codable {
        package var latitude: Double
        package var longitude: Double
        /// ISO 8601 with the offset of the zone it was lived in.
        package var arrival: String
        package var departure: String
        package var durationSeconds: Int
        /// The fixes it was found in; 0 for an imported visit.
        package var fixes: Int
        /// "fixes" or "visit" (an imported program's own).
        package var origin: String
        /// The place's id in `enlog places`.
        package var place: Int64?
        /// The place's name, else an imported visit's own.
        package var name: String?
    }

    package struct Move: Sendable, Equatable, Codable {
        package var departure: String
        package var arrival: String
        package var durationSeconds: Int
        /// Metres from the stay (or the track's end) it leaves to the one it reaches: the source's
        /// own figure for each of its activity segments (Google's `distance`), else along their
        /// waypoints, else along the fixes; a stretch without data is bridged in a straight line.
        package var distanceMetres: Int
        /// The seconds of it spent moving: the source's segments and the fixes' steps, not the
        /// gaps without data.
        package var movingSeconds: Int
        /// How the person moved: the source's own activity where it names one, else inferred
        /// from the pace; nil when neither tells.
        package var mode: String?
        /// "source" or "inferred" (nil without a mode).
        package var modeSource: String?
        /// The part of `distanceMetres` bridged in a straight line over gaps without data, and how many.
        package var bridgedMetres: Int
        package var gaps: Int
    }

    package var from: String
    package var to: String
    /// The zone the span was read in: note.time_zone, or `UTC+10:00` when the history states
    /// the offset the day was lived in (each time carries its own offset).
    package var timeZone: String
    package var stays: [Stay]
    /// Every move overlapping the span, the first and the last included (from a stay before the
    /// span or the track's first fix, to a stay after it or the track's last), in time order.
    package var moves: [Move]
    /// The span's own share of its moves (a move across midnight counts on each side for its
    /// part): what the digest's title and body say.
    package var distanceMetres: Int
    package var movingSeconds: Int
    package var bridgedMetres: Int
    package var gaps: Int

    /// Fixes or data further apart than this during a move leave a gap: the way between is bridged.
    package static let gapSeconds = TrackStatistics.longestGap

    /// The timeline of `start..<end`: stays overlapping it, found in the fixes from `maxGap`
    /// before to `maxGap` after (so a night at home that began yesterday is whole), each the place
    /// `places` knows it as (making and naming new ones) unless `places` is nil; and the moves
    /// between them, with their distance and mode from the imported activity segments.
    package static func build(outbox: OutboxStore, detector: StayDetector, places: PlaceBook? = nil,
                             from start: Date, to end: Date, timeZone: TimeZone) async throws -> Timeline {
        let (found, points) = try await stays(outbox: outbox, detector: detector, from: start, to: end)
        let margin = detector.maxGap + detector.minDuration
        let segments = try await outbox.staySegments(from: start.addingTimeInterval(-margin), to: end.addingTimeInterval(margin))
        let lower = start.timeIntervalSince1970, upper = end.timeIntervalSince1970
        let stays = found.filter { $0.departure > lower && $0.arrival < upper }
        let placed = try await places?.places(of: stays)
        let time = Clock(zones: try await LivedZones.load(outbox: outbox, from: start, to: end, fallback: timeZone))
        // The data just outside the window, however far: a day's first move comes from it, its
        // last goes to it, when the window holds none before its first stay or after its last.
        let (before, after) = try await outbox.neighbourFixes(before: start.addingTimeInterval(-margin), after: end.addingTimeInterval(margin))
        func place(_ fix: OutboxStore.StayFix?) -> MovePlanner.End? {
            fix.map { MovePlanner.End(time: $0.time, latitude: $0.latitude, longitude: $0.longitude) }
        }
        let usable = points.filter { ($0.accuracy ?? 0) <= detector.maxAccuracy }
        let planned = MovePlanner(stays: found, points: usable, segments: segments, before: place(before), after: place(after)).moves()
            .filter { $0.departure.time < upper && $0.arrival.time > lower }
        var totals = (distance: 0.0, moving: 0.0, bridged: 0.0, gaps: 0)
        var moves: [Move] = []
        for move in planned {
            for leg in move.legs {
                let share = leg.share(of: lower..<upper)
                totals.distance += leg.metres * share.fraction
                if leg.kind == .gap {
                    totals.bridged += leg.metres * share.fraction
                    if share.fraction > 0 { totals.gaps += 1 }
                } else {
                    totals.moving += share.seconds
                }
            }
            let (mode, modeSource) = move.mode()
            moves.append(Move(departure: time.string(move.departure.time), arrival: time.string(move.arrival.time),
                              durationSeconds: Int((move.arrival.time - move.departure.time).rounded()),
                              distanceMetres: Int(move.metres.rounded()), movingSeconds: Int(move.movingSeconds.rounded()),
                              mode: mode, modeSource: modeSource, bridgedMetres: Int(move.bridgedMetres.rounded()),
                              gaps: move.legs.count { $0.kind == .gap }))
        }
        return Timeline(from: time.string(lower), to: time.string(upper), timeZone: LivedZones.name(timeZone),
                        stays: stays.enumerated().map { index, stay in
                            let place = placed?[index]
                            return Stay(latitude: stay.latitude, longitude: stay.longitude, arrival: time.string(stay.arrival),
                                        departure: time.string(stay.departure), durationSeconds: Int(stay.duration.rounded()),
                                        fixes: stay.fixes, origin: stay.origin.rawValue, place: place?.id,
                                        name: place?.name ?? stay.name)
                        },
                        moves: moves, distanceMetres: Int(totals.distance.rounded()), movingSeconds: Int(totals.moving.rounded()),
                        bridgedMetres: Int(totals.bridged.rounded()), gaps: totals.gaps)
    }

    /// The stays of the history overlapping `start..<end` (some may reach beyond), with the
    /// points they were found in. An imported visit inside another (Google's secondary and
    /// child visits) is part of it, not a stay of its own; no two stays share a moment.
    package static func stays(outbox: OutboxStore, detector: StayDetector, from start: Date,
                             to end: Date) async throws(OutboxError) -> ([StayDetector.Stay], [StayDetector.Point]) {
        let margin = detector.maxGap + detector.minDuration
        let wideStart = start.addingTimeInterval(-margin), wideEnd = end.addingTimeInterval(margin)
        let fixes = try await outbox.stayFixes(from: wideStart, to: wideEnd)
        let visits = try await outbox.stayVisits(from: wideStart, to: wideEnd)
        let points = fixes.map {
            StayDetector.Point(latitude: $0.latitude, longitude: $0.longitude, accuracy: $0.accuracy, time: $0.time,
                               anchor: $0.typed)
        }
        let found = detector.stays(in: points, visits: folded(visits.map {
            let named = VisitNames.name(name: $0.name, address: $0.address, semanticType: $0.semanticType)
            return StayDetector.Visit(latitude: $0.latitude, longitude: $0.longitude, start: $0.start, end: $0.end,
                                      name: named?.0, nameIsAddress: named?.1 == .address)
        }))
        return (apart(found), points)
    }

    /// Visits as stays: one inside another (a secondary visit, a child visit) folds into it; one
    /// that begins before another ends begins when that one ends.
    static func folded(_ visits: [StayDetector.Visit]) -> [StayDetector.Visit] {
        apart(visits, start: \.start, end: \.end)
    }

    /// Stays in time order with no moment in two: a stay within the one before is part of it,
    /// one overlapping its end begins there.
    static func apart(_ stays: [StayDetector.Stay]) -> [StayDetector.Stay] {
        apart(stays, start: \.arrival, end: \.departure)
    }

    /// Spans in time order (the longer first of two that begin together, else in their given
    /// order) with no moment in two: a span within the one kept before it is dropped, one that
    /// overlaps its end begins there.
    private static func apart<Span>(_ spans: [Span], start: WritableKeyPath<Span, Double>,
                                    end: KeyPath<Span, Double>) -> [Span] {
        let ordered = spans.enumerated().sorted {
            ($0.element[keyPath: start], -$0.element[keyPath: end], $0.offset)
                < ($1.element[keyPath: start], -$1.element[keyPath: end], $1.offset)
        }.map(\.element)
        var kept: [Span] = []
        for span in ordered {
            guard let last = kept.last, span[keyPath: start] < last[keyPath: end] else {
                kept.append(span)
                continue
            }
            guard span[keyPath: end] > last[keyPath: end] else { continue }
            var rest = span
            rest[keyPath: start] = last[keyPath: end]
            kept.append(rest)
        }
        return kept
    }

    static func metres(_ a: (Double, Double), _ b: (Double, Double)) -> Double {
        Fix.metres(a.0, a.1, b.0, b.1)
    }

    /// Times as ISO 8601 with the offset of the zone each instant was lived in (`LivedZones`).
    package struct Clock {
        let zones: LivedZones

        package init(zones: LivedZones) {
            self.zones = zones
        }

        package init(timeZone: TimeZone) {
            zones = LivedZones(fallback: timeZone)
        }

        package func string(_ seconds: Double) -> String {
            zones.text(Date(timeIntervalSince1970: seconds.rounded()))
        }
    }
}
