import Foundation

/// The timeline as lines for a person: "08:35–17:50  9 h 15 min  Office", the moves between in
/// time order ("    25 min, 12.4 km by driving"), and the span's total.
package enum TimelineText {
    /// - Parameter dated: times with their date (a span of days) after a line naming the zone,
    ///   else the time of day alone (a digest, which names its zone), with the date only for a
    ///   time on another day than the timeline's first (a stay begun the evening before).
    package static func lines(_ timeline: Timeline, dated: Bool = true) -> [String] {
        guard !timeline.stays.isEmpty || !timeline.moves.isEmpty else {
            return ["no stays between \(timeline.from) and \(timeline.to)"]
        }
        let parser = ISO8601DateFormatter()
        func instant(_ iso: String) -> Date { parser.date(from: iso) ?? .distantPast }
        let day = timeline.from.prefix(10)
        var entries: [(time: Date, stay: Bool, line: String)] = []
        for stay in timeline.stays {
            let place = stay.name ?? String(format: "%.5f, %.5f", stay.latitude, stay.longitude)
            entries.append((instant(stay.arrival), true,
                            "\(clock(stay.arrival, dated, day))–\(clock(stay.departure, dated, day))  \(duration(stay.durationSeconds))  \(place)"))
        }
        for move in timeline.moves {
            entries.append((instant(move.departure), false, "    " + line(move, dated, day)))
        }
        // A move of no time leaves at the moment the stay it reaches begins: the move first.
        let ordered = entries.enumerated().sorted {
            ($0.element.time, $0.element.stay ? 1 : 0, $0.offset) < ($1.element.time, $1.element.stay ? 1 : 0, $1.offset)
        }.map(\.element.line)
        return (dated ? ["times in \(timeline.timeZone)"] : []) + ordered + [total(timeline)]
    }

    /// "25 min, 12.4 km by driving", with its times when it leaves or reaches the span's edge,
    /// and what of it was bridged over a gap without data.
    static func line(_ move: Timeline.Move, _ dated: Bool, _ day: Substring) -> String {
        var text = "\(duration(move.durationSeconds)), \(kilometres(move.distanceMetres))"
        if let mode = move.mode { text += " \(move.modeSource == "inferred" ? "likely by" : "by") \(mode)" }
        if move.gaps > 0 {
            text += " (\(kilometres(move.bridgedMetres)) across \(move.gaps == 1 ? "a gap" : "\(move.gaps) gaps") without data, as the crow flies)"
        }
        return text + " [\(clock(move.departure, dated, day))–\(clock(move.arrival, dated, day))]"
    }

    /// "Moving: 12.4 km, 1 h 05 min" (the span's share of its moves), as the digest's title says.
    static func total(_ timeline: Timeline) -> String {
        var text = "Moving: \(distance(timeline.distanceMetres)), \(movingTime(timeline.movingSeconds))"
        if timeline.gaps > 0 { text += " (\(distance(timeline.bridgedMetres)) of it across gaps without data)" }
        return text
    }

    static func kilometres(_ metres: Int) -> String { String(format: "%.1f km", Double(metres) / 1000) }

    /// "12.3 km" or "850 m".
    package static func distance(_ metres: Int) -> String {
        metres >= 1000 ? String(format: "%.1f km", Double(metres) / 1000) : "\(metres) m"
    }

    /// "1 h 05 min", "12 min", "40 s".
    package static func movingTime(_ seconds: Int) -> String {
        if seconds < 60 { return "\(seconds) s" }
        let minutes = seconds / 60
        return minutes < 60 ? "\(minutes) min" : String(format: "%d h %02d min", minutes / 60, minutes % 60)
    }

    /// "2026-11-22T08:35:00+01:00" → "2026-11-22 08:35", or "08:35" undated.
    /// The time with its date when `dated`, or when it falls on another day than `day` (a stay
    /// begun the evening before, in a digest).
    static func clock(_ iso: String, _ dated: Bool, _ day: Substring) -> String {
        clock(iso, dated || iso.prefix(10) != day)
    }

    static func clock(_ iso: String, _ dated: Bool) -> String {
        dated ? String(iso.prefix(16)).replacingOccurrences(of: "T", with: " ") : String(iso.dropFirst(11).prefix(5))
    }

    static func duration(_ seconds: Int) -> String {
        let minutes = (seconds + 30) / 60
        return minutes >= 60 ? "\(minutes / 60) h \(String(format: "%02d", minutes % 60)) min" : "\(minutes) min"
    }
}
