import Foundation
import Testing
@testable import Configuration

/// docs/configuration.md's table of settings says what the settings table (`Setting.all`) says:
/// a row per setting with its type, range, default and environment variables, and no row for a
/// setting enlog does not have. The doc is written by hand; this keeps it from drifting.
@Suite("docs/configuration.md matches the settings table")
struct ConfigurationDocTests {
    static let document = Fixtures.repositoryRoot.appendingPathComponent("docs/configuration.md")
    static let header = "| name | type | range | default | environment | meaning |"

    /// One row of the table, its cells as written (backticks removed where a value is code).
    struct Row {
        var name: String
        var type: String
        var range: String
        /// nil for "none" (the setting is unset by default).
        var defaultValue: String?
        var environment: [String]
    }

    @Test func theDocumentAgreesWithEverySetting() throws {
        let text = try String(contentsOf: Self.document, encoding: .utf8)
        let problems = Self.problems(in: text)
        #expect(problems.isEmpty, "docs/configuration.md:\n\(problems.joined(separator: "\n"))")
    }

    /// The check can fail: a removed row, a changed default or variable, and a row for a setting
    /// that does not exist are each reported, naming the setting.
    @Test func aDriftedDocumentIsCaught() throws {
        let text = try String(contentsOf: Self.document, encoding: .utf8)
        let zoomRow = String(try #require(text.split(separator: "\n").first { $0.hasPrefix("| `map.zoom` |") }))
        let drifts: [(String, String)] = [
            (text.replacingOccurrences(of: zoomRow + "\n", with: ""), "map.zoom"),
            (text.replacingOccurrences(of: "| `30` | `ENLOG_LOCATION_TIMEOUT` |", with: "| `60` | `ENLOG_LOCATION_TIMEOUT` |"), "location.timeout"),
            (text.replacingOccurrences(of: "`ENLOG_DB`, `ENLOG_OUTBOX_DB`", with: "`ENLOG_DB`"), "outbox.db"),
            (text.replacingOccurrences(of: "| 0 to 19 zoom levels, whole |", with: "| 0 to 20 zoom levels, whole |"), "map.zoom"),
            (text.replacingOccurrences(of: zoomRow + "\n", with: zoomRow + "\n" + "| `map.shade` | string | — | none | `ENLOG_MAP_SHADE` | x |\n"), "map.shade"),
        ]
        for (drifted, name) in drifts {
            #expect(drifted != text, "the drift for \(name) changed nothing: the document moved on")
            let problems = Self.problems(in: drifted)
            #expect(problems.contains { $0.contains(name) }, "\(name) not reported: \(problems)")
        }
    }

    /// What is wrong with `text`'s settings table, one line each; empty when it matches.
    static func problems(in text: String) -> [String] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let start = lines.firstIndex(of: header), start + 1 < lines.count else {
            return ["no table headed \(header)"]
        }
        var problems: [String] = []
        var rows: [String: Row] = [:]
        for line in lines[(start + 2)...].prefix(while: { $0.hasPrefix("|") }) {
            guard let row = Self.row(line) else {
                problems.append("not a row of six cells (name, type, range, default, environment, meaning): \(line)")
                continue
            }
            if rows[row.name] != nil { problems.append("\(row.name) has two rows") }
            if Setting.named(row.name) == nil { problems.append("\(row.name) is no setting of enlog's") }
            rows[row.name] = row
        }
        for setting in Setting.all {
            guard let row = rows[setting.name] else {
                problems.append("\(setting.name) has no row")
                continue
            }
            if row.type != setting.kind.rawValue {
                problems.append("\(setting.name): type is \(setting.kind.rawValue), the row says \(row.type)")
            }
            if row.range != expectedRange(setting.range) {
                problems.append("\(setting.name): range is \(expectedRange(setting.range)), the row says \(row.range)")
            }
            if row.defaultValue != setting.defaultValue {
                problems.append("\(setting.name): default is \(setting.defaultValue ?? "none"), the row says \(row.defaultValue ?? "none")")
            }
            if row.environment != setting.environmentNames {
                problems.append("\(setting.name): variables are \(setting.environmentNames), the row says \(row.environment)")
            }
        }
        return problems
    }

    /// `| `name` | type | range | `default` or none | `VAR`, `VAR` | meaning |`
    static func row(_ line: String) -> Row? {
        let cells = line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast()
            .map { $0.trimmingCharacters(in: .whitespaces) }
        guard cells.count == 6, let name = code(cells[0]) else { return nil }
        let defaultValue: String?
        if cells[3] == "none" {
            defaultValue = nil
        } else {
            guard let value = code(cells[3]) else { return nil }
            defaultValue = value
        }
        let environment = cells[4].matches(of: /`([^`]+)`/).map { String($0.output.1) }
        return Row(name: name, type: cells[1], range: cells[2], defaultValue: defaultValue, environment: environment)
    }

    /// The text between the backticks of a cell that is one piece of code.
    static func code(_ cell: String) -> String? {
        guard cell.count >= 2, cell.hasPrefix("`"), cell.hasSuffix("`") else { return nil }
        let inner = cell.dropFirst().dropLast()
        return inner.contains("`") ? nil : String(inner)
    }

    /// "0.1 to 3600 seconds", "16 to 4096 pixels, whole"; "—" for a setting that is no number.
    static func expectedRange(_ range: NumericRange?) -> String {
        guard let range else { return "—" }
        let span = "\(NumericRange.format(range.lowest)) to \(NumericRange.format(range.highest)) \(range.unit)"
        return range.wholeNumbers ? span + ", whole" : span
    }
}
