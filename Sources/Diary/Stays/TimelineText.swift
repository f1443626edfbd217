import Foundation

/// The timeline as lines for a person: "08:35–17:50  9 h 15 min  Office" and the moves between.
public enum TimelineText {
    /// - Parameter dated: times with their date (a span of days) after a line naming the zone,
    ///   else the time of day alone (a digest, which names its zone), with the date only for a
    ///   time on another day than the timeline's first (a stay begun the evening before).
    public static func lines(_ timeline: Timeline, dated: Bool = true) -> [String] {
        guard !timeline.stays.isEmpty else { return ["no stays between \(timeline.from) and \(timeline.to)"] }
        var lines: [String] = dated ? ["times in \(timeline.timeZone)"] : []
        let day = timeline.from.prefix(10)
        func clock(_ iso: String) -> String {
            Self.clock(iso, dated || iso.prefix(10) != day)
        }
        for (index, stay) in timeline.stays.enumerated() {
            let place = stay.name ?? String(format: "%.5f, %.5f", stay.latitude, stay.longitude)
            lines.append("\(clock(stay.arrival))–\(clock(stay.departure))  \(duration(stay.durationSeconds))  \(place)")
            if index < timeline.moves.count {
                let move = timeline.moves[index]
                let kilometres = String(format: "%.1f km", Double(move.distanceMetres) / 1000)
                lines.append("    \(duration(move.durationSeconds)), \(kilometres)\(move.mode.map { " by \($0)" } ?? "")")
            }
        }
        return lines
    }

    /// "2026-11-22T08:35:00+01:00" → "2026-11-22 08:35", or "08:35" undated.
    static func clock(_ iso: String, _ dated: Bool) -> String {
        dated ? String(iso.prefix(16)).replacingOccurrences(of: "T", with: " ") : String(iso.dropFirst(11).prefix(5))
    }

    static func duration(_ seconds: Int) -> String {
        let minutes = (seconds + 30) / 60
        return minutes >= 60 ? "\(minutes / 60) h \(String(format: "%02d", minutes % 60)) min" : "\(minutes) min"
    }
}
