import Foundation
import Support
import Configuration
import Compose
import Outbox

/// The zone each instant of the history was lived in: the offset its source stated (Google's
/// newer exports write `2017-05-02T12:12:04+10:00`), else note.time_zone. A day is read in the
/// zone it was lived in, so a night in Australia reads 21:17–06:23 there, not 11:17–04:23 in
/// Toronto.
package struct LivedZones: Sendable {
    /// note.time_zone (else TZ): the zone of every instant no source stated an offset near.
    package let fallback: TimeZone
    /// Stated offsets, oldest first.
    let stated: [OutboxStore.LivedOffset]

    /// How far from a stated offset an instant still takes it: the hours between two imported
    /// points of a night (a visit's start and the next morning's walk) were lived in their zone.
    package static let reach: TimeInterval = 12 * 3600
    /// How far a day's instants may lie from its UTC date: −12:00 to +14:00, with a margin.
    static let dayMargin: TimeInterval = 26 * 3600

    package init(fallback: TimeZone, stated: [OutboxStore.LivedOffset] = []) {
        self.fallback = fallback
        self.stated = stated
    }

    /// The offsets the history states from `reach` before `start` to `reach` after `end`.
    package static func load(outbox: OutboxStore, from start: Date, to end: Date,
                            fallback: TimeZone) async throws(OutboxError) -> LivedZones {
        let lower = start == .distantPast ? start : start.addingTimeInterval(-reach)
        let upper = end == .distantFuture ? end : end.addingTimeInterval(reach)
        return LivedZones(fallback: fallback, stated: try await outbox.livedOffsets(from: lower, to: upper))
    }

    /// The offset stated on both sides of `time` when they agree (however far apart: lived
    /// there in between), else the stated offset nearest `time` within `reach`; nil when none is.
    package func statedOffset(at time: Double) -> Int? {
        guard !stated.isEmpty else { return nil }
        var low = 0, high = stated.count
        while low < high {
            let middle = (low + high) / 2
            if stated[middle].time < time { low = middle + 1 } else { high = middle }
        }
        if low > 0, low < stated.count, stated[low - 1].offset == stated[low].offset { return stated[low].offset }
        let candidates = [low - 1, low].filter { stated.indices.contains($0) }
        guard let nearest = candidates.min(by: { abs(stated[$0].time - time) < abs(stated[$1].time - time) }),
              abs(stated[nearest].time - time) <= Self.reach else { return nil }
        return stated[nearest].offset
    }

    /// Seconds east of UTC at `time`: stated, else the fallback zone's at that instant.
    package func offset(at time: Double) -> Int {
        statedOffset(at: time) ?? fallback.secondsFromGMT(for: Date(timeIntervalSince1970: time))
    }

    /// `2017-05-02T21:17:00+10:00`: the instant on the clock it was lived by, with that offset.
    package func text(_ date: Date) -> String {
        Self.text(date, offset: offset(at: date.timeIntervalSince1970))
    }

    package static func text(_ date: Date, offset: Int) -> String {
        InstantText.localTime(date, offsetSeconds: offset, dateSeparator: "-", between: "T") + InstantText.offset(offset)
    }

    /// A fixed offset as a zone: `TimeZone(secondsFromGMT:)` (Foundation names it GMT+1000).
    package static func zone(offset: Int) -> TimeZone {
        TimeZone(secondsFromGMT: offset) ?? TimeZone(identifier: "UTC")!
    }

    /// A zone as enlog prints it: `America/Toronto`, or `UTC+10:00` for a fixed offset.
    package static func name(_ zone: TimeZone) -> String {
        guard zone.identifier.hasPrefix("GMT") else { return zone.identifier }
        return "UTC" + InstantText.offset(zone.secondsFromGMT())
    }

    /// The day named `name` (YYYY-MM-DD) in the zone it was lived in: the offset most of the
    /// stated instants whose local date is that day carry; else the day in `fallback`. Nil when
    /// `name` is no date.
    package static func day(_ name: String, outbox: OutboxStore, fallback: TimeZone) async throws(OutboxError) -> TrackDay? {
        guard let nominal = TrackDay(name, timeZone: fallback) else { return nil }
        let stated = try await outbox.livedOffsets(from: nominal.start.addingTimeInterval(-dayMargin),
                                                   to: nominal.end.addingTimeInterval(dayMargin))
        return LivedZones(fallback: fallback, stated: stated).day(nominal)
    }

    /// `nominal` (a day in `fallback`) as it was lived: see `day(_:outbox:fallback:)`.
    package func day(_ nominal: TrackDay) -> TrackDay {
        let digits = Array(nominal.name.utf8).map { Int64($0) - 0x30 }
        let dayNumber = InstantText.days(fromYear: digits[0] * 1000 + digits[1] * 100 + digits[2] * 10 + digits[3],
                                         month: digits[5] * 10 + digits[6], day: digits[8] * 10 + digits[9])
        var counts: [Int: Int] = [:]
        var order: [Int] = []
        for sample in stated {
            let local = Int64((sample.time + Double(sample.offset)).rounded(.down))
            guard InstantText.floorDivision(local, 86_400) == dayNumber else { continue }
            if counts[sample.offset] == nil { order.append(sample.offset) }
            counts[sample.offset, default: 0] += 1
        }
        guard let offset = order.max(by: { counts[$0]! < counts[$1]! }) else { return nominal }
        return TrackDay(nominal.name, timeZone: Self.zone(offset: offset)) ?? nominal
    }
}
