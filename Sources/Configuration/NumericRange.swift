import Foundation
import Support

/// The values a numeric setting or flag accepts. Every number enlog reads from a person (config
/// file, environment, command line) is checked against one of these where it is read, so a huge,
/// negative, NaN or infinite value is a clear error instead of a trap in a later conversion
/// (`Int(1e17 * 1000)` overflows a Duration's milliseconds).
package struct NumericRange: Sendable, Hashable {
    package let lowest: Double
    package let highest: Double
    /// "seconds", "metres", "notes": what the number counts, for the error message.
    package let unit: String
    package let wholeNumbers: Bool

    package init(_ lowest: Double, _ highest: Double, unit: String, wholeNumbers: Bool = false) {
        self.lowest = lowest
        self.highest = highest
        self.unit = unit
        self.wholeNumbers = wholeNumbers
    }

    /// "a number of seconds from 0.1 to 3600"
    package var accepted: String {
        "\(wholeNumbers ? "a whole number" : "a number") of \(unit) from \(Self.format(lowest)) to \(Self.format(highest))"
    }

    /// The value when `text` is a number in range; nil otherwise (NaN, inf, 1e300, -1, "ten").
    package func value(of text: String) -> Double? {
        guard let number = Double(text.trimmingCharacters(in: .whitespaces)) else { return nil }
        return contains(number) ? number : nil
    }

    package func contains(_ number: Double) -> Bool {
        number.isFinite && number >= lowest && number <= highest && (!wholeNumbers || number.rounded() == number)
    }

    static func format(_ number: Double) -> String {
        number.rounded() == number && abs(number) < 1e15 ? String(Int64(number)) : String(number)
    }
}

extension NumericRange {
    package static let timeoutSeconds = NumericRange(0.1, 3600, unit: "seconds")
    package static let fixAgeSeconds = NumericRange(0.1, 86_400, unit: "seconds")
    package static let accuracyMetres = NumericRange(0.1, 100_000, unit: "metres")
    package static let shortWaitSeconds = NumericRange(0.05, 60, unit: "seconds")
    /// Spacing between requests to one service: none at all, up to a minute.
    package static let spacingSeconds = NumericRange(0, 60, unit: "seconds")
    /// One Evernote request: long enough for a slow link, short enough that a hanging service
    /// does not hold a sync for minutes per note.
    package static let requestSeconds = NumericRange(1, 300, unit: "seconds")
    package static let budgetMilliseconds = NumericRange(50, 60_000, unit: "milliseconds", wholeNumbers: true)
    package static let noteCount = NumericRange(1, 1_000_000, unit: "notes", wholeNumbers: true)
    package static let authorizationSeconds = NumericRange(1, 86_400, unit: "seconds")
    package static let watchDistanceMetres = NumericRange(10, 100_000, unit: "metres")
    package static let watchIntervalSeconds = NumericRange(1, 86_400, unit: "seconds")
    package static let watchHeartbeatSeconds = NumericRange(60, 604_800, unit: "seconds")
    /// Track thinning: a metre keeps nearly every fix of a walk, 10 km next to nothing.
    package static let trackDistanceMetres = NumericRange(1, 10_000, unit: "metres")
}

extension NumericRange {
    /// A map image's side: big enough for a marker, small enough to stay far below Evernote's
    /// resource size limit.
    package static let mapPixels = NumericRange(16, 4096, unit: "pixels", wholeNumbers: true)
    /// The zoom levels OSM-compatible tile servers serve.
    package static let mapZoom = NumericRange(0, 19, unit: "zoom levels", wholeNumbers: true)
    /// The tile cache on disk; 0 keeps tiles in memory only.
    package static let cacheMegabytes = NumericRange(0, 100_000, unit: "megabytes")
}

extension NumericRange {
    /// A stay's radius: below 10 m GPS noise alone breaks every stay; beyond 1 km a town is one place.
    package static let stayRadiusMetres = NumericRange(10, 1000, unit: "metres")
    /// From a minute (a stop at a kiosk) to a day.
    package static let stayDurationSeconds = NumericRange(60, 86_400, unit: "seconds")
    /// Up to two days: a longer silence says nothing about where someone was.
    package static let stayGapSeconds = NumericRange(0, 172_800, unit: "seconds")
}
