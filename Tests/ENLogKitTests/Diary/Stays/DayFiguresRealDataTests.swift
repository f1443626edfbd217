import Foundation
import Testing
@testable import Capture

/// Every real Google Timeline export of `../shared/location-history-real/` that states its own
/// figures (Semantic Location History, the Android and iOS on-device exports), imported and told
/// by the built `enlog timeline` as a user would, held to what the file says, computed without
/// enlog's readers by `Tests/support/day_figures.py` (Python's json):
/// - each day of 5 km or more (the source's own segment distances, shared among the days a
///   segment spans by its time): enlog's distance within 10 %, less what enlog bridged in a
///   straight line across the gaps in the source's own data (which the source counts as nothing,
///   and enlog counts and says so);
/// - one stay per top-level visit (child and secondary visits fold into theirs), no two stays
///   over the same moment, no move that ends before it starts;
/// - every segment's mode where the source names one: the mode of the move it lies in.
@Suite("the day told as the real exports state it")
struct DayFiguresRealDataTests {
    static let folder = ImportRealDataTests.folder

    /// The issue's reference case is read in its person's zone; the others in the offset their times carry.
    static let zones = ["semantic-history--hossain-khan-kgeo-timeline--semantic-2021-august.json": "America/Toronto"]

    struct Figures: Decodable, Sendable {
        var zone: String
        var days: [String: Double]
        var visits: [[Double]]
        var segments: [[Figure]]
        var span: [Double]
    }

    enum Figure: Decodable, Sendable {
        case number(Double), word(String), none
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() { self = .none } else if let value = try? container.decode(Double.self) { self = .number(value) } else {
                self = .word(try container.decode(String.self))
            }
        }
        var number: Double? { if case .number(let value) = self { value } else { nil } }
        var word: String? { if case .word(let value) = self { value } else { nil } }
    }

    struct Export: CustomTestStringConvertible, Sendable {
        let file: String
        var path: String { DayFiguresRealDataTests.folder.appendingPathComponent(file).path }
        var testDescription: String { file }
    }

    static let exports: [Export] = ImportRealDataTests.entries
        .filter { ["semantic-history", "android-timeline", "ios-location-history"].contains($0.format) }
        .map { Export(file: $0.file) }

    static let figures: Result<[String: Figures], any Error> = Result {
        let python = try PythonServer.interpreter(stdlibOnly: true)
        let script = Fixtures.repositoryRoot.appendingPathComponent("Tests/support/day_figures.py").path
        let arguments = exports.map { export in Self.zones[export.file].map { "\(export.path)@\($0)" } ?? export.path }
        let result = try Subprocess.run(URL(fileURLWithPath: python), [script] + arguments)
        guard result.status == 0 else { throw PythonServer.StartFailure(description: "day_figures.py: \(result.standardError)") }
        return try JSONDecoder().decode([String: Figures].self, from: Data(result.standardOutput.utf8))
    }

    static func json(_ result: ProcessResult) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any], "\(result.standardOutput)")
    }

    static func seconds(_ value: Any?) -> Double {
        guard let text = value as? String, let date = ISO8601DateFormatter().date(from: text) else { return .nan }
        return date.timeIntervalSince1970
    }

    static func day(_ seconds: Double, zone: String) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.calendar = Calendar(identifier: .gregorian)
        formatter.timeZone = TimeZone(identifier: zone)
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter.string(from: Date(timeIntervalSince1970: seconds))
    }

    @Test func theReferenceMonthIsAmongThem() throws {
        let figures = try Self.figures.get()
        let august = try #require(figures[Self.folder.appendingPathComponent(Self.zones.keys.first!).path])
        #expect(august.days.values.count { $0 >= 5000 } == 17, "the issue's 17 days of 5 km or more")
        #expect(abs((august.days["2021-08-19"] ?? 0) - 522_000) < 1000, "Google's 522 km on 2021-08-19")
    }

    @Test(arguments: exports)
    func theDayIsTheSourcesDay(_ export: Export) throws {
        guard let figures = try Self.figures.get()[export.path] else { return }   // no segment, no visit: nothing stated
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        home.extraEnvironment["ENLOG_NOTE_TIME_ZONE"] = figures.zone
        let imported = try home.run("import", export.path, "--json")
        try #require(imported.status == 0, "\(export.file): \(imported.standardError)")

        // Distance, day by day.
        for (day, metres) in figures.days.sorted(by: { $0.key < $1.key }) where metres >= 5000 {
            let timeline = try Self.json(try home.run("timeline", "--date", day, "--json"))
            // The source counts nothing across a gap in its own data; enlog bridges it in a
            // straight line and says so (`bridgedMetres`): the rest is what the source measured.
            let told = Double(timeline["distanceMetres"] as? Int ?? -1)
            let bridged = Double(timeline["bridgedMetres"] as? Int ?? 0)
            #expect(abs(told - bridged - metres) <= metres * 0.10,
                    "\(export.file) \(day): enlog \(Int(told)) m (\(Int(bridged)) m bridged), the source \(Int(metres)) m")
            if bridged > 0 {
                let text = try home.run("timeline", "--date", day).standardOutput
                #expect(text.contains("across a gap without data"), "\(export.file) \(day): a bridge said so: \(text)")
            }
        }

        // Stays and moves over the whole file.
        let since = Self.day(figures.span[0] - 86_400, zone: figures.zone)
        let until = Self.day(figures.span[1] + 2 * 86_400, zone: figures.zone)
        let whole = try Self.json(try home.run("timeline", "--since", since, "--until", until, "--json"))
        let stays = try #require(whole["stays"] as? [[String: Any]])
        let moves = try #require(whole["moves"] as? [[String: Any]])
        for (before, after) in zip(stays, stays.dropFirst()) {
            #expect(Self.seconds(after["arrival"]) >= Self.seconds(before["departure"]),
                    "\(export.file): two stays over the same time: \(before) and \(after)")
        }
        for move in moves {
            #expect(Self.seconds(move["arrival"]) >= Self.seconds(move["departure"]), "\(export.file): a move that ends before it starts: \(move)")
        }
        // Top-level visits, one inside another folded (the source's own duplicates once).
        var topLevel: [[Double]] = []
        for visit in figures.visits.sorted(by: { ($0[0], -$0[1]) < ($1[0], -$1[1]) }) {
            if let last = topLevel.last, visit[0] >= last[0], visit[1] <= last[1] { continue }
            topLevel.append(visit)
        }
        #expect(stays.count { $0["origin"] as? String == "visit" } == topLevel.count,
                "\(export.file): one stay per top-level visit")

        // Modes: each moving segment's mode is the mode of the move it lies in.
        for segment in figures.segments {
            guard let start = segment[0].number, let end = segment[1].number, end > start, let mode = segment[2].word else { continue }
            let middle = (start + end) / 2
            let move = moves.first { Self.seconds($0["departure"]) <= middle && middle <= Self.seconds($0["arrival"]) }
            let modes = Set(figures.segments.compactMap { other -> String? in
                guard let move, let from = other[0].number, let to = other[1].number,
                      from < Self.seconds(move["arrival"]), to > Self.seconds(move["departure"]) else { return nil }
                return other[2].word
            })
            #expect(move?["modeSource"] as? String == "source" && modes.contains(move?["mode"] as? String ?? ""),
                    "\(export.file): the segment \(Int(start))–\(Int(end)) by \(mode) lies in \(move.map { "\($0)" } ?? "no move")")
        }
    }
}
