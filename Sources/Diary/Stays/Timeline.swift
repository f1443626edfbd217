import Foundation
import Support
import Configuration
import Capture
import Compose
import Outbox

/// A span of the history told as stays and the moves between them (`enlog timeline`).
public struct Timeline: Sendable, Equatable, Codable {
    public struct Stay: Sendable, Equatable, Codable {
        public var latitude: Double
        public var longitude: Double
        /// ISO 8601 with the offset of the zone it was lived in.
        public var arrival: String
        public var departure: String
        public var durationSeconds: Int
        /// The fixes it was found in; 0 for an imported visit.
        public var fixes: Int
        /// "fixes" or "visit" (an imported program's own).
        public var origin: String
        /// The place's id in `enlog places`.
        public var place: Int64?
        /// The place's name, else an imported visit's own.
        public var name: String?
    }

    public struct Move: Sendable, Equatable, Codable {
        public var departure: String
        public var arrival: String
        public var durationSeconds: Int
        /// Along the fixes between the two stays, from one centre to the other.
        public var distanceMetres: Int
        /// How the person moved, when an import said so; nil otherwise.
        public var mode: String?
    }

    public var from: String
    public var to: String
    /// The zone the span was read in: note.time_zone, or `UTC+10:00` when the history states
    /// the offset the day was lived in (each time carries its own offset).
    public var timeZone: String
    public var stays: [Stay]
    public var moves: [Move]

    /// The timeline of `start..<end`: stays overlapping it, found in the fixes from `maxGap`
    /// before to `maxGap` after (so a night at home that began yesterday is whole), each the place
    /// `places` knows it as (making and naming new ones) unless `places` is nil.
    public static func build(outbox: OutboxStore, detector: StayDetector, places: PlaceBook? = nil,
                             from start: Date, to end: Date, timeZone: TimeZone) async throws -> Timeline {
        let (found, points) = try await stays(outbox: outbox, detector: detector, from: start, to: end)
        let lower = start.timeIntervalSince1970, upper = end.timeIntervalSince1970
        let stays = found.filter { $0.departure > lower && $0.arrival < upper }
        let placed = try await places?.places(of: stays)
        let time = Clock(zones: try await LivedZones.load(outbox: outbox, from: start, to: end, fallback: timeZone))
        var moves: [Move] = []
        var index = points.startIndex
        for (leaving, reaching) in zip(stays, stays.dropFirst()) {
            var distance = 0.0
            var last = (leaving.latitude, leaving.longitude)
            while index < points.endIndex, points[index].time <= leaving.departure { index += 1 }
            while index < points.endIndex, points[index].time < reaching.arrival {
                let point = points[index]
                if (point.accuracy ?? 0) <= detector.maxAccuracy {
                    distance += Self.metres(last, (point.latitude, point.longitude))
                    last = (point.latitude, point.longitude)
                }
                index += 1
            }
            distance += Self.metres(last, (reaching.latitude, reaching.longitude))
            moves.append(Move(departure: time.string(leaving.departure), arrival: time.string(reaching.arrival),
                              durationSeconds: Int((reaching.arrival - leaving.departure).rounded()),
                              distanceMetres: Int(distance.rounded()), mode: nil))
        }
        return Timeline(from: time.string(lower), to: time.string(upper), timeZone: LivedZones.name(timeZone),
                        stays: stays.enumerated().map { index, stay in
                            let place = placed?[index]
                            return Stay(latitude: stay.latitude, longitude: stay.longitude, arrival: time.string(stay.arrival),
                                        departure: time.string(stay.departure), durationSeconds: Int(stay.duration.rounded()),
                                        fixes: stay.fixes, origin: stay.origin.rawValue, place: place?.id,
                                        name: place?.name ?? stay.name)
                        },
                        moves: moves)
    }

    /// The stays of the history overlapping `start..<end` (some may reach beyond), with the
    /// points they were found in.
    public static func stays(outbox: OutboxStore, detector: StayDetector, from start: Date,
                             to end: Date) async throws(OutboxError) -> ([StayDetector.Stay], [StayDetector.Point]) {
        let margin = detector.maxGap + detector.minDuration
        let wideStart = start.addingTimeInterval(-margin), wideEnd = end.addingTimeInterval(margin)
        let fixes = try await outbox.stayFixes(from: wideStart, to: wideEnd)
        let visits = try await outbox.stayVisits(from: wideStart, to: wideEnd)
        let points = fixes.map {
            StayDetector.Point(latitude: $0.latitude, longitude: $0.longitude, accuracy: $0.accuracy, time: $0.time,
                               anchor: $0.typed)
        }
        let found = detector.stays(in: points, visits: visits.map {
            let named = VisitNames.name(name: $0.name, address: $0.address, semanticType: $0.semanticType)
            return StayDetector.Visit(latitude: $0.latitude, longitude: $0.longitude, start: $0.start, end: $0.end,
                                      name: named?.0, nameIsAddress: named?.1 == .address)
        })
        return (found, points)
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
