import Foundation
import Testing
@testable import Compose

/// The rules beyond the DTD read attribute values as the UTF-8 bytes libxml2 holds. These pin what
/// they say, word for word, where bytes and Swift's Characters could part: non-ASCII text,
/// percent-escapes, letter case, controls before a scheme, and values written with entities.
@Suite("ENML attribute rules on bytes")
struct ENMLAttributeRuleTests {
    let validator = ENMLValidator()

    /// The messages of every error in a note whose body is `body`.
    private func messages(_ body: String) -> [String] {
        let text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE en-note SYSTEM "http://xml.evernote.com/pub/enml2.dtd">
            <en-note>\(body)</en-note>
            """
        return validator.validate(text).errors.map(\.message)
    }

    @Test(arguments: ["https://ja.wikipedia.org/wiki/東京駅", "https://例え.jp/", "https://e.com/😀", "mailto:café@example.com",
                      "https://e.com/%E6%9D%B1", "https://e.com/%e6%9d%b1?q=%2F", "HTTPS://E.COM/", "Mailto:me@example.com"])
    func acceptedWhateverTheirLettersAndCase(_ url: String) {
        #expect(URLRule.problem(with: url) == nil)
        #expect(messages("<a href=\"\(url)\">x</a>") == [])
    }

    @Test func aLongURLIsQuotedByItsFirst77Characters() {
        // 90 é written as e + combining acute: 180 scalars, 90 characters; the quote counts characters.
        let url = "https://e.com/" + String(repeating: "e\u{301}", count: 90) + " "
        let quoted = "https://e.com/" + String(repeating: "e\u{301}", count: 63) + "..."
        #expect(URLRule.problem(with: url)?.message == "'\(quoted)' contains the character U+0020, which a URL cannot hold unescaped")
    }

    @Test func percentEscapesNeedTwoHexDigitsAndAForbiddenCharacterOutranksThem() {
        for url in ["https://e.com/%g0", "https://e.com/%4", "https://e.com/%", "https://e.com/%%41"] {
            #expect(URLRule.problem(with: url)?.message == "'\(url)' has a malformed percent-escape", "\(url)")
        }
        #expect(URLRule.problem(with: "https://e.com/%zz/a|b")?.message
            == "'https://e.com/%zz/a|b' contains the character '|', which a URL cannot hold unescaped")
    }

    @Test func schemesAreComparedWithoutCaseAndNamedInLowerCase() {
        #expect(URLRule.problem(with: "JaVaScRiPt:alert(1)")?.message == "uses the forbidden scheme 'javascript:'")
        #expect(URLRule.problem(with: "MyScript+X:y")?.message == "uses the forbidden scheme 'myscript+x:'")
        #expect(URLRule.problem(with: "ABOUT:blank")?.code == .unsafeURL)
        #expect(URLRule.problem(with: "DATA:IMAGE/SVG+XML,x", in: .link)?.message == "links to an SVG data URL, which can run script when opened")
        #expect(URLRule.problem(with: "DATA:IMAGE/SVG+XML,x", in: .image) == nil)
        #expect(URLRule.problem(with: "data:TEXT/HTMLÄ,x")?.message
            == "is a data URL of media type 'text/htmlä'; only images may be inlined (data:image/…)")
    }

    /// Whitespace or a control before `javascript:` is no scheme at all: refused either way,
    /// whether written raw or as a character reference libxml2 decodes.
    @Test(arguments: [" javascript:x", "\tjavascript:x", "\u{7F}javascript:x", "\u{85}javascript:x", "java\tscript:x"])
    func aControlBeforeOrInsideASchemeIsRefused(_ url: String) {
        #expect(URLRule.problem(with: url)?.message == "'\(url)' does not start with a valid URL scheme")
    }

    @Test func characterReferencesAreDecodedBeforeTheRulesRun() {
        #expect(messages("<a href=\"&#x9;javascript:x\">x</a>") == ["a href '\tjavascript:x' does not start with a valid URL scheme"])
        #expect(messages("<a href=\"&#32;javascript:x\">x</a>") == ["a href ' javascript:x' does not start with a valid URL scheme"])
        #expect(messages("<a href=\"java&#115;cript&#58;x\">x</a>") == ["a href uses the forbidden scheme 'javascript:'"])
        #expect(messages("<img src=\"data:image/png;base64,a&#x85;b\"/>")
            == ["img src 'data:image/png;base64,a\u{85}b' contains the character U+0085, which a URL cannot hold unescaped"])
    }

    /// A value with an entity reference reaches the rules through another path in libxml2 (a node
    /// list, not one text node): the verdicts are the same as for the characters written out.
    @Test func entityReferencesInValuesAreReplacedLikeTheirText() {
        #expect(messages("<a href=\"https://e.com/caf&eacute;?a=1&amp;b=2\">x</a><a href=\"https://e.com/café?a=1&amp;b=2\">y</a>") == [])
        #expect(messages("<a href=\"https://e.com/&eacute;&lt;\">x</a>")
            == ["a href 'https://e.com/é<' contains the character '<', which a URL cannot hold unescaped"])
        // U+00A0 is not the ASCII space: like other non-ASCII text (an IRI's), the rule lets it be.
        #expect(messages("<a href=\"https://e.com/&nbsp;\">x</a>") == [])
        #expect(messages("<en-media type=\"image/png\" hash=\"0123456789abcdef0123456789abcde&#102;\"/>") == [])
        #expect(messages("<en-media type=\"image/p&eacute;ng\" hash=\"0123456789abcdef0123456789abcdef\"/>")
            == ["en-media type 'image/péng' is not a MIME type matching EDAM_MIME_REGEX (e.g. image/png)"])
    }

    @Test func emptyValuesAreJudgedToo() {
        #expect(messages("<a href=\"\" tabindex=\"\">x</a>").sorted()
            == ["a href is empty", "attribute 'tabindex' is not allowed in ENML (on <a>)"])
        #expect(messages("<en-media type=\"\" hash=\"\"/>").sorted() == [
            "en-media hash '' must be exactly 32 hexadecimal digits (the MD5 of the resource)",
            "en-media type '' is not a MIME type matching EDAM_MIME_REGEX (e.g. image/png)",
        ])
    }

    /// Code points, not grapheme clusters, as browsers read URLs: a combining mark after a
    /// delimiter leaves it a delimiter, and a scheme is ASCII letters only (the Kelvin sign K
    /// lowercases to an ASCII k, which once let `Kttp:` pass for a scheme).
    @Test func urlsAreReadByCodePoints() {
        #expect(URLRule.problem(with: "#\u{301}") == nil)
        #expect(URLRule.problem(with: "http://\u{301}/x") == nil)
        #expect(URLRule.problem(with: ":\u{301}x")?.message == "':\u{301}x' does not start with a valid URL scheme")
        #expect(URLRule.problem(with: "\u{212A}ttp://x")?.message == "'\u{212A}ttp://x' does not start with a valid URL scheme")
        #expect(URLRule.problem(with: "data:image/\u{212A},x", in: .image)?.code == .unsafeURL)
    }
}
