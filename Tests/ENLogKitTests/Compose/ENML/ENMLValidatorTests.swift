import Foundation
import Testing
@testable import Compose

/// An expectation written into an invalid fixture's prolog: `<!-- expect: CODE@LINE … -->`.
struct ExpectedDiagnostic: Equatable, CustomStringConvertible {
    var code: String
    var line: Int
    var description: String { "\(code)@\(line)" }

    static func parse(fixture: URL) throws -> [ExpectedDiagnostic] {
        let text = String(decoding: try Data(contentsOf: fixture), as: UTF8.self)
        guard let start = text.range(of: "<!-- expect: "), let end = text.range(of: " -->", range: start.upperBound..<text.endIndex) else {
            return []
        }
        return text[start.upperBound..<end.lowerBound].split(separator: " ").compactMap { item in
            let parts = item.split(separator: "@")
            guard parts.count == 2, let line = Int(parts[1]) else { return nil }
            return ExpectedDiagnostic(code: String(parts[0]), line: line)
        }
    }
}

@Suite("ENML validation")
struct ENMLValidatorTests {
    let validator = ENMLValidator()

    @Test("valid fixtures pass with no diagnostics", arguments: Fixtures.enml("valid"))
    func validFixture(_ fixture: URL) throws {
        let report = validator.validate(try Data(contentsOf: fixture))
        #expect(report.diagnostics.isEmpty, "\(fixture.lastPathComponent): \(report.diagnostics)")
        #expect(report.isValid)
    }

    @Test("invalid fixtures report their specific error on its line", arguments: Fixtures.enml("invalid"))
    func invalidFixture(_ fixture: URL) throws {
        let expected = try ExpectedDiagnostic.parse(fixture: fixture)
        try #require(!expected.isEmpty, "\(fixture.lastPathComponent) has no '<!-- expect: CODE@LINE -->' comment")
        let report = validator.validate(try Data(contentsOf: fixture))
        #expect(!report.isValid)
        let found = report.errors.map { ExpectedDiagnostic(code: $0.code.rawValue, line: $0.line) }
        for expectation in expected {
            #expect(found.contains(expectation), "\(fixture.lastPathComponent): expected \(expectation), got \(report.errors)")
        }
        // Every error names a position inside the file.
        let lineCount = String(decoding: try Data(contentsOf: fixture), as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).count
        for error in report.errors {
            #expect((1...lineCount).contains(error.line), "\(fixture.lastPathComponent): \(error)")
        }
    }

    @Test func fixtureCorpusCoversEveryRule() {
        let codes = Set(Fixtures.enml("invalid").flatMap { (try? ExpectedDiagnostic.parse(fixture: $0)) ?? [] }.map(\.code))
        let uncovered = ENMLDiagnostic.Code.allCases.map(\.rawValue).filter { !codes.contains($0) && $0 != "content-too-long" }
        #expect(uncovered.isEmpty, "no fixture exercises \(uncovered)")
    }

    /// A markup character joined by a combining mark (or a prepended sign) is one Character, yet
    /// still escaped: the note stays valid, in an element and in a quoted attribute alike.
    @Test func escapedTextStaysCharacterDataWhateverJoinsItsMarkup() {
        let text = "a <\u{301}b> &\u{308} \"\u{301}q'\u{301} \u{600}<x \u{7}"
        let escaped = ENMLCharacters.escaped(text)
        #expect(escaped == "a &lt;\u{301}b&gt; &amp;\u{308} &quot;\u{301}q&#39;\u{301} \u{600}&lt;x ")
        let report = validator.validate(note(body: "<div title=\"\(escaped)\">\(escaped)</div>"))
        #expect(report.diagnostics.isEmpty, "\(report.diagnostics)")
    }

    @Test func columnsComeFromLibxml2() throws {
        let report = validator.validate(note(body: "<p id=\"x\">x</p>"))
        let error = try #require(report.errors.first)
        #expect(error.code == .dtdValidity)
        #expect(error.line == 3)
        #expect(error.column > 0)
    }

    @Test func contentLongerThanTheServiceLimitIsRejected() {
        let filler = String(repeating: "<p>0123456789012345678901234567890123456789</p>\n", count: ENMLTextScan.maximumContentLength / 48 + 10)
        let report = validator.validate(note(body: filler))
        #expect(report.errors.map(\.code) == [.contentTooLong])
    }

    @Test func lengthIsCountedInUTF16UnitsLikeTheService() {
        // 4-byte UTF-8 characters count twice (surrogate pairs), 3-byte ones once.
        var scan = "😀".utf8.withContiguousStorageIfAvailable { ENMLTextScan($0) }
        #expect(scan?.utf16Length == 2)
        scan = "日".utf8.withContiguousStorageIfAvailable { ENMLTextScan($0) }
        #expect(scan?.utf16Length == 1)
    }

    @Test func aFiveMegabyteNoteWithinTheLimitIsValid() {
        let paragraph = "<p>Caf&eacute; 日本語 <b>bold</b> <a href=\"https://example.com/?q=1&amp;r=2\">link</a></p>\n"
        let body = String(repeating: paragraph, count: 4_900_000 / paragraph.utf8.count)
        let text = note(body: body)
        #expect(text.utf8.count > 4_800_000)
        let report = validator.validate(text)
        #expect(report.diagnostics.isEmpty, "\(report.diagnostics.prefix(3))")
    }

    @Test func overlongAndSurrogateUTF8AreRejected() {
        for bytes: [UInt8] in [[0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE6, 0x97]] {
            var data = Data(note(body: "<p>x</p>").utf8)
            data.insert(contentsOf: bytes, at: data.range(of: Data("x</p>".utf8))!.lowerBound)
            #expect(validator.validate(data).errors.map(\.code) == [.invalidUTF8], "\(bytes)")
        }
    }

    @Test func externalEntitiesOtherThanTheDTDAreNeverRead() throws {
        let directory = try TemporaryDirectory()
        let secret = try directory.file("secret.txt", contents: "TOPSECRET")
        let text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE en-note SYSTEM "http://xml.evernote.com/pub/enml2.dtd" [<!ENTITY s SYSTEM "\(secret.absoluteString)">]>
            <en-note><p>&s;</p></en-note>
            """
        let report = validator.validate(text)
        #expect(!report.isValid)
        #expect(report.diagnostics.contains { $0.message.contains("refused") })
        #expect(!report.diagnostics.contains { $0.message.contains("TOPSECRET") })
    }

    @Test func dtdOnlyModeIgnoresRulesBeyondTheDTD() throws {
        let text = note(body: "<a href=\"javascript:alert(1)\" tabindex=\"1\">x</a><en-media type=\"image/png\" hash=\"abc\"/>")
        #expect(ENMLValidator(rules: .dtdOnly).validate(text).isValid)
        #expect(validator.validate(text).errors.count == 3)
    }

    @Test func validatingConcurrentlyGivesTheSameAnswers() throws {
        let fixtures = Fixtures.enml("valid") + Fixtures.enml("invalid")
        let sequential = try fixtures.map { validator.validate(try Data(contentsOf: $0)) }
        let batch = ENMLBatchValidator().validate(Array(repeating: fixtures.map { ENMLSource.file($0.path) }, count: 8).flatMap { $0 })
        for (index, result) in batch.enumerated() {
            #expect(try result.outcome.get() == sequential[index % fixtures.count])
        }
    }

    private func note(body: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE en-note SYSTEM "http://xml.evernote.com/pub/enml2.dtd">
        <en-note>\(body)</en-note>
        """
    }
}

@Suite("URL rule")
struct URLRuleTests {
    @Test(arguments: ["https://example.com/", "http://a.b/c?d=e&f=g#h", "mailto:me@example.com", "tel:+1-555-0100",
                      "evernote:///view/1/s1/g/g/", "file:///home/me/a.txt", "ftp://ftp.example.org/x", "geo:35.6,139.7"])
    func accepted(_ url: String) {
        #expect(URLRule.problem(with: url) == nil)
    }

    /// What Evernote's own clients write: inlined images (pasted, web clips) and same-note fragments.
    @Test(arguments: [("data:image/png;base64,iVBORw0KGgo=", URLRule.Use.image), ("data:image/png;base64,iVBORw0KGgo=", .link),
                      ("data:image/svg+xml,%3csvg xmlns='http://www.w3.org/2000/svg' width='16'%3e%3c/svg%3e", .image),
                      ("DATA:IMAGE/GIF;base64,R0lGODlhAQABAAAAACw=", .image), ("#", .link), ("#section-2", .link)])
    func acceptedAsEvernoteWritesThem(_ url: String, _ use: URLRule.Use) {
        #expect(URLRule.problem(with: url, in: use) == nil)
    }

    @Test(arguments: [("javascript:x", URLRule.Use.link), ("JAVASCRIPT:x", .image), ("vbscript:x", .link), ("livescript:x", .link),
                      ("data:text/html,x", .link), ("data:text/html;base64,PHNjcmlwdD4=", .image), ("data:,x", .image),
                      ("data:application/javascript,alert(1)", .image), ("data:image/svg+xml,%3csvg%3e", .link),
                      ("x-apple-data-detectors://0", .link), ("about:blank", .link)])
    func unsafe(_ url: String, _ use: URLRule.Use) {
        #expect(URLRule.problem(with: url, in: use)?.code == .unsafeURL)
    }

    /// A fragment is a link's privilege; an image has to come from somewhere.
    @Test(arguments: [("#", URLRule.Use.image), ("#a b", .link), ("data:image/png;base64", .image), ("data:image/png;base64,\u{1}", .image)])
    func malformedInItsUse(_ url: String, _ use: URLRule.Use) {
        #expect(URLRule.problem(with: url, in: use)?.code == .malformedURL)
    }

    @Test(arguments: ["", "/path", "example.com", "1http://x", "http://", "http:///x", "https://e.com/a b",
                      "https://e.com/%g0", "https://e.com/%4", "https://e.com/<x>", "ht tp://x", ":x", "mailto:"])
    func malformed(_ url: String) {
        #expect(URLRule.problem(with: url)?.code == .malformedURL)
    }
}
