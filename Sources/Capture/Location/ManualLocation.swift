import Foundation
import Support
import Configuration
import Network

/// A position typed by the user as `LAT,LON[,ALT]` in decimal degrees (altitude in metres).
package struct ManualLocation: LocationSource {
    package let latitude: Double
    package let longitude: Double
    package let altitude: Double?
    package let horizontalAccuracy: Double?

    /// Parses eagerly so that a typo is reported before any other work is done.
    package init(_ text: String, horizontalAccuracy: Double? = nil) throws(LocationError) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }
        func fail(_ problem: String) -> LocationError {
            .malformedManualLocation(input: text, problem: problem)
        }
        guard !text.trimmingCharacters(in: .whitespaces).isEmpty else { throw fail("it is empty") }
        guard parts.count == 2 || parts.count == 3 else {
            throw fail("expected 2 or 3 comma-separated numbers, found \(counted(parts.count, "part"))"
                + (parts.count > 3 ? " (use '.' as the decimal point)" : ""))
        }
        let names = ["latitude", "longitude", "altitude"]
        var values: [Double] = []
        for (name, part) in zip(names, parts) {
            guard !part.isEmpty else { throw fail("\(name) is missing") }
            guard let value = Self.decimal(part) else {
                throw fail("\(name) '\(part)' is not a decimal number")
            }
            values.append(value)
        }
        if let accuracy = horizontalAccuracy, !accuracy.isFinite {
            throw fail("accuracy \(accuracy) is not a number of metres")
        }
        // The ranges are the fix's own (`Fix.Limits`), checked now so that a typo is reported
        // before any other work is done. At a time inside the limits, not the clock's: a clock
        // at 1970 is the clock's fault (`currentFix` says so), not the coordinates'.
        do {
            _ = try Fix(latitude: values[0], longitude: values[1], altitude: values.count == 3 ? values[2] : nil,
                        horizontalAccuracy: horizontalAccuracy, timestamp: Fix.Limits.time.lowerBound, source: .manual)
        } catch {
            throw fail(error.reason)
        }
        latitude = values[0]
        longitude = values[1]
        altitude = values.count == 3 ? values[2] : nil
        self.horizontalAccuracy = horizontalAccuracy
    }

    /// The position now, by the system clock; a clock outside the times a fix may have (a
    /// machine without a battery-backed clock, at 1970 before NTP) is named as the problem.
    package func currentFix() async throws -> Fix {
        let now = Date()
        guard Fix.Limits.time.contains(now) else { throw LocationError.systemClockWrong(now) }
        return try fix(at: now)
    }

    package func fix(at timestamp: Date) throws(LocationError) -> Fix {
        try Fix(latitude: latitude, longitude: longitude, altitude: altitude,
                horizontalAccuracy: horizontalAccuracy, timestamp: timestamp, source: .manual)
    }

    /// Plain decimal notation only: `Double.init` would also take "nan", "inf" and hex floats,
    /// none of which a person means as a coordinate.
    private static func decimal(_ text: String) -> Double? {
        var digits = 0, dots = 0
        for (index, ch) in text.enumerated() {
            switch ch {
            case "+" where index == 0, "-" where index == 0: continue
            case "0"..."9": digits += 1
            case ".": dots += 1
            default: return nil
            }
        }
        guard digits > 0, dots <= 1 else { return nil }
        return Double(text)
    }
}
