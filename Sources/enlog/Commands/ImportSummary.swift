import Foundation
import Support
import Capture
import Diary

/// What `enlog import` prints: a line per file (the path first when there are several), or JSON.
struct ImportSummary {
    let files: [HistoryImport.FileReport]
    /// Files in folders or archives that are no location history.
    let passedOver: Int
    let notes: TrackImport.Notes?

    var lines: [String] {
        var lines = files.map { file in (files.count > 1 ? file.path + ": " : "") + Self.line(file) }
        if passedOver > 0 { lines.append("\(counted(passedOver, "file")) passed over: no location history enlog reads") }
        if let notes {
            let had = notes.alreadyThere == 0 ? "" : notes.alreadyThere == 1 ? " (1 place had its note)" : " (\(notes.alreadyThere) places had theirs)"
            if lines.isEmpty { lines.append("\(counted(notes.written, "note")) written\(had)") } else { lines[lines.count - 1] += "; \(counted(notes.written, "note")) written\(had)" }
        }
        return lines
    }

    /// "read 120 points from GPX: 118 added, 2 already in the history; 3 skipped (3 no time)"
    static func line(_ file: HistoryImport.FileReport) -> String {
        var text = "read \(counted(file.read, "point")) from \(file.format?.title ?? "?"): \(file.added) added, \(file.alreadyThere) already in the history"
        let skipped = file.skipped.values.reduce(0, +)
        if skipped > 0 {
            let reasons = file.skipped.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.value) \($0.key.rawValue)" }
            text += "; \(skipped) skipped (\(reasons.joined(separator: ", ")))"
        }
        if file.visitsRead > 0 { text += "; \(counted(file.visitsRead, "stay")), \(file.visitsAdded) added" }
        if file.movesRead > 0 { text += "; \(counted(file.movesRead, "move")), \(file.movesAdded) added" }
        return text
    }

    func json() throws -> String {
        func object(_ file: HistoryImport.FileReport) -> [String: Any] {
            ["path": file.path, "format": file.format?.rawValue ?? NSNull(), "read": file.read, "added": file.added,
             "alreadyThere": file.alreadyThere, "skipped": Dictionary(uniqueKeysWithValues: file.skipped.map { ($0.key.rawValue, $0.value) }),
             "visits": ["read": file.visitsRead, "added": file.visitsAdded],
             "moves": ["read": file.movesRead, "added": file.movesAdded]]
        }
        let formats = Set(files.compactMap { $0.format?.rawValue })
        var total: [String: Any] = [
            "format": formats.count == 1 ? formats.first! : (formats.isEmpty ? NSNull() : "mixed" as Any),
            "read": files.map(\.read).reduce(0, +), "added": files.map(\.added).reduce(0, +),
            "alreadyThere": files.map(\.alreadyThere).reduce(0, +),
            "skipped": files.reduce(into: [String: Int]()) { result, file in
                for (reason, count) in file.skipped { result[reason.rawValue, default: 0] += count }
            },
            "visits": ["read": files.map(\.visitsRead).reduce(0, +), "added": files.map(\.visitsAdded).reduce(0, +)],
            "moves": ["read": files.map(\.movesRead).reduce(0, +), "added": files.map(\.movesAdded).reduce(0, +)],
            "files": files.map(object), "passedOver": passedOver,
        ]
        if let notes {
            total["notes"] = notes.written
            total["notesAlreadyThere"] = notes.alreadyThere
        }
        let data = try JSONSerialization.data(withJSONObject: total, options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }
}
