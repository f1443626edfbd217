import Foundation
import Support
import Configuration
import Network

/// Values read from a record of some history format, turned into what a reader emits: a point,
/// or the reason it cannot be one. Every reader goes through here, so the same oddity is
/// counted under the same reason whatever the format.
package enum HistoryPoints {
    /// A point from its values; `nil` optional measurements are simply unknown. An optional
    /// measurement outside `Fix.Limits` (OwnTracks' `vel: -1`, a speed of 9999) is a sentinel
    /// for "unknown", not a reason to lose the position: it is dropped, the point kept.
    /// `timeGiven`: a time field was there (nil `time`: it said no date).
    package static func item(latitude: Double?, longitude: Double?, altitude: Double? = nil,
                             accuracy: Double? = nil, speed: Double? = nil, course: Double? = nil,
                             time: Date?, timeGiven: Bool = false, device: String? = nil, utcOffset: Int? = nil) -> HistoryItem {
        guard let time else { return .skipped(timeGiven ? .badTime : .noTime) }
        guard let latitude, let longitude, latitude.isFinite, longitude.isFinite else { return .skipped(.badPosition) }
        guard Fix.Limits.latitude.contains(latitude), Fix.Limits.longitude.contains(longitude) else {
            return .skipped(.badPosition)
        }
        if latitude == 0 && longitude == 0 { return .skipped(.nullIsland) }
        guard Fix.Limits.time.contains(time) else { return .skipped(.timeOutOfRange) }
        func within(_ value: Double?, _ limits: ClosedRange<Double>) -> Double? {
            value.flatMap { limits.contains($0) ? $0 : nil }
        }
        do {
            let fix = try Fix(latitude: latitude, longitude: longitude, altitude: within(altitude, Fix.Limits.altitude),
                              horizontalAccuracy: within(accuracy, Fix.Limits.horizontalAccuracy),
                              speed: within(speed, Fix.Limits.speed), course: within(course, Fix.Limits.course),
                              timestamp: time, source: .imported)
            return .point(HistoryPoint(fix: fix, device: device, utcOffset: utcOffset))
        } catch {
            return .skipped(.badValue)
        }
    }

    /// A decimal number as text files write it ("52.52", " -0.5 ", "1e-3"); nil for anything else.
    package static func number(_ text: some StringProtocol) -> Double? {
        let trimmed = trimmed(Substring(text))
        guard !trimmed.isEmpty, let value = Double(trimmed), value.isFinite else { return nil }
        return value
    }

    /// `text` without ASCII white space at either end. Foundation's `trimmingCharacters` goes
    /// through NSString, which cost more than everything else a CSV row needs.
    package static func trimmed(_ text: Substring) -> Substring {
        let utf8 = text.utf8
        guard let first = utf8.firstIndex(where: { !isSpace($0) }) else { return text[text.endIndex...] }
        let last = utf8.lastIndex(where: { !isSpace($0) })!
        return text[first...last]
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}
