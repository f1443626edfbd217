import Foundation

/// How a move was made, in a few plain words: from the source's own activity type where it
/// names one (Google's `IN_PASSENGER_VEHICLE`, the iOS export's "in passenger vehicle", a GPX
/// `<type>`), else inferred from the move's speed.
package enum MoveMode {
    /// The source's word as enlog writes it; nil for a word that says nothing of how
    /// (`STILL`, `UNKNOWN_ACTIVITY_TYPE`). A word enlog does not know is kept, lower-cased.
    package static func fromSource(_ word: String) -> String? {
        let key = word.trimmingCharacters(in: .whitespaces).uppercased()
            .replacingOccurrences(of: " ", with: "_").replacingOccurrences(of: "-", with: "_")
        guard !key.isEmpty else { return nil }
        if let known = sourceWords[key] { return known.isEmpty ? nil : known }
        return word.trimmingCharacters(in: .whitespaces).lowercased()
    }

    /// Google's activity types (Semantic Location History, the on-device exports, Records.json's
    /// activity records) and the words trackers write in GPX/KML `<type>`; "" = says nothing.
    static let sourceWords: [String: String] = [
        "WALKING": "walking", "ON_FOOT": "walking", "WALK": "walking", "HIKING": "walking", "HIKE": "walking",
        "RUNNING": "running", "RUN": "running",
        "CYCLING": "cycling", "ON_BICYCLE": "cycling", "BICYCLE": "cycling", "BIKE": "cycling", "BIKING": "cycling",
        "RIDE": "cycling", "MOUNTAIN_BIKING": "cycling",
        "IN_PASSENGER_VEHICLE": "driving", "IN_VEHICLE": "driving", "IN_ROAD_VEHICLE": "driving", "IN_CAR": "driving",
        "DRIVING": "driving", "DRIVE": "driving", "CAR": "driving", "AUTOMOTIVE": "driving", "TAXI": "driving",
        "IN_TAXI": "driving", "MOTORCYCLING": "motorcycle", "MOTORCYCLE": "motorcycle",
        "IN_BUS": "bus", "BUS": "bus",
        "IN_TRAIN": "train", "TRAIN": "train", "IN_RAIL_VEHICLE": "train", "RAIL": "train",
        "IN_SUBWAY": "subway", "SUBWAY": "subway", "METRO": "subway", "IN_TRAM": "tram", "TRAM": "tram",
        "FLYING": "flight", "FLIGHT": "flight", "AIRPLANE": "flight", "PLANE": "flight", "IN_PLANE": "flight",
        "IN_FERRY": "boat", "FERRY": "boat", "SAILING": "boat", "BOAT": "boat", "BOATING": "boat", "KAYAKING": "boat",
        "SKIING": "skiing", "SKATING": "skating", "HORSEBACK_RIDING": "horse riding",
        "STILL": "", "STATIONARY": "", "TILTING": "", "UNKNOWN": "", "UNKNOWN_ACTIVITY_TYPE": "", "UNKNOWN_ACTIVITY": "",
        "EXITING_VEHICLE": "",
    ]

    /// The mode a move's pace suggests, with no word from the source: metres and seconds of
    /// actual movement (`moving`), and the move's whole span (`span`, for a move across a gap).
    /// Nil for a move too short to tell (under 200 m).
    package static func inferred(metres: Double, moving: Double, span: Double) -> String? {
        guard metres >= 200 else { return nil }
        // Over a gap: only a pace no ground transport keeps for the whole span says anything.
        let seconds = moving > 0 ? moving : span
        guard seconds > 0 else { return nil }
        let kilometresPerHour = metres / seconds * 3.6
        if moving <= 0 { return kilometresPerHour > 250 && metres > 100_000 ? "flight" : nil }
        // Hours at a walker's average are no walk: stays and moves the data did not tell apart.
        if moving > 3 * 3600, kilometresPerHour < 7.5 { return nil }
        switch kilometresPerHour {
        case ..<7.5: return "walking"
        case ..<25: return "cycling"
        case ..<140: return "driving"
        case ..<320: return "train"
        default: return "flight"
        }
    }
}
