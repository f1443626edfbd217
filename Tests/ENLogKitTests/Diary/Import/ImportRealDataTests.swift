import Foundation
import Testing

/// Every file of `../shared/location-history-real/` (147 exports from the test data of public
/// location projects, `SOURCES.tsv` naming each one's format): `enlog import` either reads the
/// number of points and stays the file really holds, counted independently by
/// `Tests/support/history_count.py` (gpxpy, xml.etree, csv, zipfile; the JSON formats through
/// `history_counts.py`'s json.load), or refuses it with one line naming the file and what is wrong,
/// or, for a file that holds no point by nature (Settings.json, Timeline Edits of place
/// aggregates), names it "nothing to import" without failing.
@Suite("import reads every real export or names what is wrong")
struct ImportRealDataTests {
    static let folder = Fixtures.repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared/location-history-real")

    struct Entry: CustomTestStringConvertible, Sendable {
        let file: String
        let format: String
        var path: String { ImportRealDataTests.folder.appendingPathComponent(file).path }
        var testDescription: String { file }
    }

    static let entries: [Entry] = {
        guard let text = try? String(contentsOf: folder.appendingPathComponent("SOURCES.tsv"), encoding: .utf8) else { return [] }
        return text.split(separator: "\n").dropFirst().compactMap { line in
            let columns = line.split(separator: "\t", omittingEmptySubsequences: false)
            return columns.count > 2 ? Entry(file: String(columns[0]), format: String(columns[1])) : nil
        }
    }()

    /// What the independent counter says of every file, asked once.
    static let expected: Result<[String: [String: JSONValue]], any Error> = Result {
        let python = try PythonServer.interpreter(stdlibOnly: false)
        let script = Fixtures.repositoryRoot.appendingPathComponent("Tests/support/history_count.py").path
        let result = try Subprocess.run(URL(fileURLWithPath: python), [script] + entries.map { "\($0.format):\($0.path)" })
        guard result.status == 0 else { throw PythonServer.StartFailure(description: "history_count.py: \(result.standardError)") }
        return try JSONDecoder().decode([String: [String: JSONValue]].self, from: Data(result.standardOutput.utf8))
    }

    enum JSONValue: Decodable, Sendable {
        case number(Int), text(String)
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let number = try? container.decode(Int.self) { self = .number(number) } else { self = .text(try container.decode(String.self)) }
        }
        var number: Int? { if case .number(let value) = self { value } else { nil } }
        var text: String? { if case .text(let value) = self { value } else { nil } }
    }

    @Test func theFolderHoldsTheFiles() {
        #expect(Self.entries.count >= 140, "\(Self.folder.path)")
    }

    /// The counter needs gpxpy (the venv of ENLOG_PYTHON, which CI sets).
    static var counterAvailable: Bool { (try? PythonServer.interpreter(stdlibOnly: false)) != nil }

    @Test(.enabled(if: counterAvailable, "ENLOG_PYTHON is not set"), arguments: entries)
    func importsWhatTheFileHoldsOrNamesWhatIsWrong(_ entry: Entry) throws {
        let expected = try #require(try Self.expected.get()[entry.path], "no count for \(entry.file)")
        let result = try EnlogHome().run("import", entry.path, "--json")
        if let points = expected["points"]?.number, let visits = expected["visits"]?.number {
            #expect(result.status == 0, "\(entry.file): \(result.standardError)")
            let summary = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any]
            #expect(summary?["read"] as? Int == points, "\(entry.file): \(result.standardOutput)")
            #expect((summary?["visits"] as? [String: Any])?["read"] as? Int == visits, "\(entry.file): \(result.standardOutput)")
            if let moves = expected["moves"]?.number {
                #expect((summary?["moves"] as? [String: Any])?["read"] as? Int == moves, "\(entry.file): \(result.standardOutput)")
            }
        } else if let words = expected["nothing"]?.text {
            // Holds no points by nature: named so, and no failure.
            #expect(result.status == 0, "\(entry.file): \(result.standardError)")
            #expect(result.standardError.isEmpty, "\(entry.file): \(result.standardError)")
            let summary = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any]
            let files = summary?["files"] as? [[String: Any]] ?? []
            #expect(files.count == 1 && (files.first?["nothingToImport"] as? String)?.contains(words) == true,
                    "\(entry.file) must say '\(words)': \(result.standardOutput)")
            #expect(summary?["read"] as? Int == 0, "\(entry.file): \(result.standardOutput)")
        } else if let words = expected["refuse"]?.text {
            #expect(result.status == 65, "\(entry.file): \(result.standardError)")
            #expect(result.standardErrorLines.count == 1, "\(entry.file): \(result.standardError)")
            #expect(result.standardError.contains(entry.path), "\(entry.file): \(result.standardError)")
            #expect(words.split(separator: "|").contains { result.standardError.contains($0) },
                    "\(entry.file) must say '\(words)': \(result.standardError)")
        } else {
            Issue.record("\(entry.file): the counter gave neither points nor a refusal: \(expected)")
        }
    }
}
