import Foundation
import Support
import Capture
import Diary

/// What `enlog import` prints: a line per file (the path first when there are several), or JSON.
struct ImportSummary {
    /// A file that failed (its line went to standard error as it happened).
    struct Failure {
        var path: String
        var message: String
        var exitCode: Int32
    }

    /// The files read to their end: those that brought points or stays, and those holding none
    /// by nature (`nothingToImport`).
    let files: [HistoryImport.FileReport]
    /// Files in folders or archives that are no location history.
    let passedOver: Int
    let notes: TrackImport.Notes?
    var failures: [Failure] = []

    /// The files that brought something (points, stays, or records skipped by reason).
    var imported: [HistoryImport.FileReport] { files.filter { $0.nothingToImport == nil } }

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
        if let holds = file.nothingToImport { return "nothing to import: \(holds)" }
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
            var object: [String: Any] = [
                "path": file.path, "format": file.format?.rawValue ?? NSNull(), "read": file.read, "added": file.added,
                "alreadyThere": file.alreadyThere, "skipped": Dictionary(uniqueKeysWithValues: file.skipped.map { ($0.key.rawValue, $0.value) }),
                "visits": ["read": file.visitsRead, "added": file.visitsAdded],
                "moves": ["read": file.movesRead, "added": file.movesAdded]]
            if let holds = file.nothingToImport { object["nothingToImport"] = holds }
            return object
        }
        let imported = self.imported
        let formats = Set(imported.compactMap { $0.format?.rawValue })
        var total: [String: Any] = [
            "format": formats.count == 1 ? formats.first! : (formats.isEmpty ? NSNull() : "mixed" as Any),
            "read": imported.map(\.read).reduce(0, +), "added": imported.map(\.added).reduce(0, +),
            "alreadyThere": imported.map(\.alreadyThere).reduce(0, +),
            "skipped": imported.reduce(into: [String: Int]()) { result, file in
                for (reason, count) in file.skipped { result[reason.rawValue, default: 0] += count }
            },
            "visits": ["read": imported.map(\.visitsRead).reduce(0, +), "added": imported.map(\.visitsAdded).reduce(0, +)],
            "moves": ["read": imported.map(\.movesRead).reduce(0, +), "added": imported.map(\.movesAdded).reduce(0, +)],
            "files": files.map(object), "passedOver": passedOver,
            "nothingToImport": files.count - imported.count,
            "errors": failures.map { ["path": $0.path, "message": $0.message, "exitCode": Int($0.exitCode)] as [String: Any] },
        ]
        if let notes {
            total["notes"] = notes.written
            total["notesAlreadyThere"] = notes.alreadyThere
        }
        let data = try JSONSerialization.data(withJSONObject: total, options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }
}
