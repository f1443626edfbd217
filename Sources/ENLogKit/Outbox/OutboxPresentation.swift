import Foundation

/// How outbox notes and logged fixes are shown: one line each for people, JSON for scripts.
public enum OutboxJSON {
    /// A note without its ENML body (`enlog queue show ID` prints that).
    struct NoteSummary: Encodable {
        var id: Int64?
        var uid: String
        var state: OutboxNote.State
        var title: String
        var notebook: String?
        var tags: [String]
        var latitude: Double?
        var longitude: Double?
        var addressPending: Bool
        var attempts: Int
        var guid: String?
        var lastError: String?
        var nextAttemptAt: Date?
        var createdAt: Date

        init(_ note: OutboxNote) {
            id = note.id; uid = note.uid; state = note.state; title = note.title; notebook = note.notebookName
            tags = note.tags; latitude = note.latitude; longitude = note.longitude; addressPending = note.addressPending
            attempts = note.attempts; guid = note.guid; lastError = note.lastError; nextAttemptAt = note.nextAttemptAt
            createdAt = note.createdAt
        }
    }

    public static func encode(_ notes: [OutboxNote]) throws -> String { try JSONOutput.encode(notes.map(NoteSummary.init)) }
    public static func encode(_ note: OutboxNote) throws -> String { try JSONOutput.encode(NoteSummary(note)) }
    public static func encode(_ fixes: [FixRecord]) throws -> String { try JSONOutput.encode(fixes) }


    public static func line(_ note: OutboxNote) -> String {
        var line = "\(note.id ?? 0)\t\(note.state.rawValue)\t\(timestamp(note.createdAt))\t\(note.title)"
        if note.addressPending { line += "\t(address pending)" }
        if let error = note.lastError, note.state == .failed || note.state == .parked { line += "\t\(error)" }
        return line
    }

    public static func line(_ fix: FixRecord) -> String {
        var parts = [timestamp(fix.timestamp), String(format: "%.6f,%.6f", fix.latitude, fix.longitude)]
        if let altitude = fix.altitude { parts.append(String(format: "alt %.1f m", altitude)) }
        if let accuracy = fix.horizontalAccuracy { parts.append(String(format: "±%.1f m", accuracy)) }
        parts.append(fix.source.rawValue)
        return parts.joined(separator: "\t")
    }

    private static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }

    /// `2026-11-22` (local midnight) or a full ISO 8601 date and time with its zone.
    public static func parseDate(_ text: String, timeZone: TimeZone = .current) -> Date? {
        let full = ISO8601DateFormatter()
        if let date = full.date(from: text) { return date }
        let day = DateFormatter()
        day.locale = Locale(identifier: "en_US_POSIX")
        day.calendar = Calendar(identifier: .gregorian)
        day.timeZone = timeZone
        day.dateFormat = "yyyy-MM-dd"
        day.isLenient = false
        return day.date(from: text)
    }
}
