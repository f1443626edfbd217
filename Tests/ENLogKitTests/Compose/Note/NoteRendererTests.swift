import Foundation
import GRDB
import Testing
@testable import EvernoteAPI
@testable import Capture
@testable import Compose

@Suite("note rendering")
struct NoteRendererTests {
    func fix(_ date: String, latitude: Double = 35.681236) throws -> Fix {
        try Fix(latitude: latitude, longitude: 139.767125, altitude: nil, horizontalAccuracy: 4.5, speed: nil, course: nil,
                timestamp: ISO8601DateFormatter().date(from: date)!, source: .gpsd)
    }

    /// The seed's title, `LocationHistory [time]: address or coordinates`, is the `classic` template.
    @Test(arguments: [("2013-12-29T12:00:00Z", "2013/12/29"), ("2013-12-31T23:59:59Z", "2013/12/31"), ("2014-01-01T00:00:00Z", "2014/01/01")])
    func titlesUseTheCalendarYear(_ date: String, _ expected: String) throws {
        let note = try NoteRenderer(template: try NoteTemplate.load("classic"), style: NoteStyle(timeZone: TimeZone(identifier: "UTC")!))
            .render(fix: fix(date), place: nil)
        #expect(note.title == "LocationHistory [\(expected) \(date.dropFirst(11).prefix(8))]: 35.681236,139.767125", "\(note.title)")
    }

    @Test func theConfiguredTimeZoneIsUsedAndShown() throws {
        let note = try NoteRenderer(template: .classic, style: NoteStyle(timeZone: TimeZone(identifier: "Asia/Tokyo")!))
            .render(fix: fix("2026-11-22T15:30:00Z"), place: nil)
        #expect(note.title.hasPrefix("LocationHistory [2026/11/23 00:30:00]"))
        #expect(note.content.contains("2026/11/23 00:30:00 +09:00 (Asia/Tokyo)"))
    }

    /// The default title names the place (one the user named, else the address; the
    /// coordinates only while there is neither) and carries the user's words when there are some.
    @Test func theDefaultTitleNamesThePlaceAndTheWords() throws {
        let renderer = NoteRenderer()
        let place = Place(address: "Eiffel Tower, Paris", displayName: "Tour Eiffel, 5, Avenue Anatole France, Paris")
        let at = try fix("2026-11-27T00:19:30Z", latitude: 48.8584)
        #expect(try renderer.render(fix: at, place: place).title == "Eiffel Tower, Paris")
        #expect(try renderer.render(fix: at, place: place, entry: DiaryEntry(message: "Lunch with Ana\n\nthen the river")).title
                == "Eiffel Tower, Paris — Lunch with Ana then the river")
        #expect(try renderer.render(fix: at, place: place, placeName: "Office").title == "Office")
        #expect(try renderer.render(fix: at, place: nil, entry: DiaryEntry(message: "Lunch")).title == "48.858400,139.767125 — Lunch")
        #expect(try !renderer.render(fix: at, place: nil).title.contains("LocationHistory"))
    }

    /// "Address pending" only while an address is still to come; a note that goes without one
    /// (geocoding off, the lookup failed for good) shows its coordinates alone.
    @Test func addressPendingOnlyWhileAnAddressIsToCome() throws {
        let renderer = NoteRenderer()
        let at = try fix("2026-11-27T00:19:30Z")
        let waiting = try renderer.render(fix: at, place: nil)
        #expect(waiting.addressPending)
        #expect(waiting.content.contains(">Address pending (35.681236,139.767125)</a>"), "\(waiting.content)")
        let final = try renderer.render(fix: at, place: nil, addressPending: false)
        #expect(!final.addressPending)
        #expect(!final.content.contains("Address pending"), "\(final.content)")
        #expect(final.content.contains(">35.681236,139.767125</a>"), "\(final.content)")
        #expect(ENMLValidator().validate(final.content).isValid)
        let found = try renderer.render(fix: at, place: Place(address: "Marunouchi"), addressPending: true)
        #expect(!found.addressPending && found.content.contains(">Marunouchi (35.681236,139.767125)</a>"), "\(found.content)")
    }

    @Test func addressesAreEscapedInContentAndKeptRawInTheTitle() throws {
        let place = Place(address: "Fish & Chips <Shop> \"Q\"", displayName: "Fish & Chips, Long Road, London")
        let note = try NoteRenderer().render(fix: fix("2026-01-01T00:00:00Z"), place: place)
        #expect(note.title == "Fish & Chips <Shop> \"Q\"")
        #expect(note.content.contains("Fish &amp; Chips &lt;Shop&gt;"))
        #expect(ENMLValidator().validate(note.content).isValid)
        #expect(!note.addressPending)
        #expect(note.placeName == nil, "placeName is opt-in")
    }

    @Test func longOrMultilineAddressesStillMakeAValidTitle() throws {
        let place = Place(address: "Line one\nline two\u{2028}" + String(repeating: "Very long street name ", count: 30))
        let title = try NoteRenderer().render(fix: fix("2026-01-01T00:00:00Z"), place: place).title
        #expect(title.utf16.count <= 255)
        #expect(title.hasSuffix("…"))
        #expect(!title.contains("\n") && !title.contains("\u{2028}"))
    }

    /// EDAM_NOTE_TITLE_REGEX as Limits.thrift spells it (read from ../shared when present).
    static let titleRule: NSRegularExpression? = {
        let idl = Fixtures.repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared/evernote/idl/Limits.thrift")
        guard let text = try? String(contentsOf: idl, encoding: .utf8),
              let start = text.range(of: "EDAM_NOTE_TITLE_REGEX =")?.upperBound,
              let open = text[start...].firstIndex(of: "\""),
              let close = text[text.index(after: open)...].firstIndex(of: "\"") else { return nil }
        let pattern = text[text.index(after: open)..<close].replacingOccurrences(of: "\\\\", with: "\\")
        return try? NSRegularExpression(pattern: pattern)
    }()

    static func matchesTitleRule(_ title: String) -> Bool {
        titleRule!.firstMatch(in: title, range: NSRange(title.startIndex..., in: title)) != nil
    }

    /// Format characters are part of words: ZWJ holds an emoji family together, ZWNJ spells
    /// Persian, variation selectors choose emoji presentation, bidi marks order mixed scripts.
    @Test(.enabled(if: titleRule != nil, "../shared/evernote/idl/Limits.thrift is absent"),
          arguments: ["👨\u{200D}👩\u{200D}👧", "می\u{200C}خواهم", "❤\u{FE0F}", "\u{200F}שלום\u{200E} 1", "\u{200B}zero width", "a\u{2060}b"])
    func titlesKeepJoinersAndVariationSelectors(_ address: String) throws {
        let title = try NoteRenderer().render(fix: fix("2026-01-01T00:00:00Z"), place: Place(address: address)).title
        #expect(title.hasSuffix(address), "\(title.unicodeScalars.map { String($0.value, radix: 16) })")
        #expect(Self.matchesTitleRule(title), "\(title)")
        #expect(Self.matchesTitleRule(address), "the rule itself accepts \(address)")
    }

    /// Whatever the template and the address hold, the title matches Evernote's own rule.
    @Test(.enabled(if: titleRule != nil, "../shared/evernote/idl/Limits.thrift is absent"))
    func everyTitleMatchesEvernotesRule() throws {
        let pieces = ["a", "東京", " ", "\u{A0}", "\u{3000}", "\u{2028}", "\u{2029}", "\n", "\t", "\r", "\u{85}", "\u{1}",
                      "\u{7F}", "\u{200D}", "\u{200C}", "\u{FE0F}", "👩\u{200D}💻", "e\u{301}", "\u{2003}", "…"]
        var generator = SeededGenerator(state: 9)
        for round in 0..<400 {
            let count = round < 200 ? Int.random(in: 1...12, using: &generator) : Int.random(in: 60...200, using: &generator)
            let text = (0..<count).map { _ in pieces.randomElement(using: &generator)! }.joined()
            do {
                let title = try NoteRenderer.checkedTitle(text)
                #expect(Self.matchesTitleRule(title), "\(text.unicodeScalars.map { String($0.value, radix: 16) }) → \(title.unicodeScalars.map { String($0.value, radix: 16) })")
                #expect(title.utf16.count <= 255)
            } catch {
                #expect(text.unicodeScalars.allSatisfy { [.control, .spaceSeparator, .lineSeparator, .paragraphSeparator].contains($0.properties.generalCategory) },
                        "refused a title with visible characters: \(text.debugDescription)")
            }
        }
    }

    /// An overlong title is cut to its longest run of whole characters that leaves room for the
    /// ellipsis, as cutting one character at a time from the end did (the reference below), in
    /// one pass: that took minutes for a title rendered to a few hundred kilobytes (the template
    /// fuzzer's find, Tests/Fixtures/fuzz/template/).
    @Test func overlongTitlesAreCutAsOneCharacterAtATimeWould() throws {
        func reference(_ text: String) -> String {
            var title = text
            while title.utf16.count > NoteNames.titleLength - 1 { title.removeLast() }
            return NoteNames.trimmingSeparators(title) + "…"
        }
        let pieces = ["a", "東京", "👩\u{200D}💻", "e\u{301}", "😀", "ü", " b"]
        var generator = SeededGenerator(state: 24)
        for _ in 0..<200 {
            let text = "x" + (0..<Int.random(in: 100...300, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            guard text.utf16.count > NoteNames.titleLength else { continue }
            #expect(try NoteRenderer.checkedTitle(text) == reference(text), "\(text)")
        }
    }

    @Test func staticMapsAndGoogleLinksAreConfigurable() throws {
        let style = NoteStyle(map: .google, staticMapURL: "https://maps.example.com/static?center={lat},{lon}&key={key}",
                              staticMapKey: "k&y=1", setsPlaceName: true)
        let note = try NoteRenderer(style: style).render(fix: fix("2026-01-01T00:00:00Z"), place: Place(address: "Here"))
        #expect(note.content.contains("https://www.google.com/maps/search/?api=1&amp;query=35.681236%2C139.767125"))
        #expect(note.content.contains("center=35.681236,139.767125&amp;key=k%26y%3D1"))
        #expect(note.placeName == "Here")
        #expect(ENMLValidator().validate(note.content).isValid)
    }

    @Test func badTagsAndNotebooksAreRefused() throws {
        for style in [NoteStyle(tags: ["a,b"]), NoteStyle(tags: [" padded"]), NoteStyle(notebook: String(repeating: "n", count: 101))] {
            #expect(throws: NoteError.self) { try NoteRenderer(style: style).render(fix: fix("2026-01-01T00:00:00Z"), place: nil) }
        }
    }
}
