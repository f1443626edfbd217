import Support
import EvernoteAPI
import Configuration
import Network
import Capture
/// What a link or image URL in ENML may be: absolute, well-formed, and of no scripting scheme;
/// plus the two forms Evernote's own clients write and the service stores: an image inlined as a
/// `data:image/…` URL (pasted images, web clips) and a link to a fragment of the note (`#`).
///
/// Read as UTF-8 bytes, code point by code point as browsers parse URLs, not by grapheme
/// clusters: a combining mark after `#`, `:` or `/` does not hide the delimiter, and only ASCII
/// letters make a scheme (Unicode lowercasing turns the Kelvin sign into an ASCII `k`).
enum URLRule {
    typealias Problem = ENMLRules.Problem

    /// Where a URL sits: a link is followed when clicked, an image source is only displayed.
    enum Use {
        case link, image
    }

    /// Schemes that execute code or smuggle content; Evernote's own ENMLWriter drops every scheme
    /// containing "script" and Apple's data detectors. `data:` is judged by its media type instead.
    static func isForbidden(scheme: UnsafeBufferPointer<UInt8>) -> Bool {
        scheme.containsIgnoringASCIICase("script") || scheme.isIgnoringASCIICase("x-apple-data-detectors") || scheme.isIgnoringASCIICase("about")
            || scheme.isIgnoringASCIICase("blob") || scheme.isIgnoringASCIICase("view-source")
    }

    static func problem(with url: String, in use: Use = .link) -> Problem? {
        var url = url
        return url.withUTF8 { problem(with: $0, in: use) }
    }

    static func problem(with url: UnsafeBufferPointer<UInt8>, in use: Use = .link) -> Problem? {
        guard let first = url.first else { return Problem(code: .malformedURL, message: "is empty") }
        if use == .link, first == UInt8(ascii: "#") {
            // A same-note fragment: nothing to fetch, nothing to run. Evernote 10's web clips keep `href="#"`.
            return characterProblem(url)
        }
        guard let colon = url.firstIndex(of: UInt8(ascii: ":")) else {
            return Problem(code: .malformedURL, message: "'\(shown(url))' is not an absolute URL (no scheme)")
        }
        let scheme = UnsafeBufferPointer(rebasing: url[..<colon])
        guard first.isASCIILetter, scheme.allSatisfy({ $0.isASCIILetter || $0.isASCIIDigit || $0.isOne(of: "+.-") }) else {
            return Problem(code: .malformedURL, message: "'\(shown(url))' does not start with a valid URL scheme")
        }
        if isForbidden(scheme: scheme) {
            return Problem(code: .unsafeURL, message: "uses the forbidden scheme '\(String(decoding: scheme.map(\.asciiLowercased), as: UTF8.self)):'")
        }
        let rest = UnsafeBufferPointer(rebasing: url[(colon + 1)...])
        if scheme.isIgnoringASCIICase("data") {
            return dataURLProblem(rest, use: use, url: url)
        }
        if let problem = characterProblem(url) { return problem }
        if scheme.isIgnoringASCIICase("http") || scheme.isIgnoringASCIICase("https") || scheme.isIgnoringASCIICase("ftp") {
            let host = rest.dropFirst(2).prefix { $0 != UInt8(ascii: "/") }
            guard rest.hasPrefix("//"), let hostStart = host.first, hostStart != UInt8(ascii: ":"), hostStart != UInt8(ascii: "@") else {
                return Problem(code: .malformedURL, message: "'\(shown(url))' has no host")
            }
        } else if rest.isEmpty {
            return Problem(code: .malformedURL, message: "'\(shown(url))' has nothing after its scheme")
        }
        return nil
    }

    /// RFC 3986 allows no spaces, controls, quotes or angle brackets anywhere in a URL, and a `%`
    /// only before two hex digits. One pass; a character outranks an escape wherever each sits.
    private static func characterProblem(_ url: UnsafeBufferPointer<UInt8>) -> Problem? {
        var escapesAreValid = true
        var index = 0
        while index < url.count {
            let byte = url[index]
            if byte.isNeverInURL {
                return Problem(code: .malformedURL, message: "'\(shown(url))' contains the character \(describe(UInt32(byte))), which a URL cannot hold unescaped")
            }
            if byte == UInt8(ascii: "%"), escapesAreValid {
                escapesAreValid = index + 2 < url.count && url[index + 1].isHexDigit && url[index + 2].isHexDigit
            }
            index += 1
        }
        return escapesAreValid ? nil : Problem(code: .malformedURL, message: "'\(shown(url))' has a malformed percent-escape")
    }

    /// `data:` carries an inlined image and nothing else: an HTML or script document in a data URL
    /// runs in whatever opens it. In a link, not even SVG, which runs its scripts when opened as a
    /// document (an `<img>` shows SVG without running them). Evernote writes SVG data URLs with
    /// raw spaces and quotes, as browsers accept them, so only controls are refused in the payload.
    private static func dataURLProblem(_ rest: UnsafeBufferPointer<UInt8>, use: Use, url: UnsafeBufferPointer<UInt8>) -> Problem? {
        guard let comma = rest.firstIndex(of: UInt8(ascii: ",")) else {
            return Problem(code: .malformedURL, message: "'\(shown(url))' is a data URL without the ',' before its data")
        }
        let mediaType = rest[..<comma].prefix { $0 != UInt8(ascii: ";") }
        guard mediaType.hasPrefix("image/", ignoringASCIICase: true), ENMLRules.isMIMEType(mediaType) else {
            let lowered = String(decoding: mediaType, as: UTF8.self).lowercased()
            let named = lowered.isEmpty ? "no media type" : "media type '\(lowered.prefix(40))'"
            return Problem(code: .unsafeURL, message: "is a data URL of \(named); only images may be inlined (data:image/…)")
        }
        if use == .link, mediaType.isIgnoringASCIICase("image/svg+xml") {
            return Problem(code: .unsafeURL, message: "links to an SVG data URL, which can run script when opened")
        }
        var index = 0
        while index < rest.count {
            let byte = rest[index]
            // C0 controls and DEL are one byte; the C1 controls U+0080–U+009F are C2 80–C2 9F.
            let control: UInt32? = byte < 0x20 || byte == 0x7F ? UInt32(byte)
                : byte == 0xC2 && index + 1 < rest.count && (0x80...0x9F).contains(rest[index + 1]) ? UInt32(rest[index + 1]) : nil
            if let control {
                return Problem(code: .malformedURL, message: "'\(shown(url))' contains the character \(describe(control)), which a URL cannot hold unescaped")
            }
            index += 1
        }
        return nil
    }

    /// The URL as a diagnostic quotes it: at most 80 characters.
    private static func shown(_ url: UnsafeBufferPointer<UInt8>) -> Substring {
        let text = String(decoding: url, as: UTF8.self)
        return text.count > 80 ? text.prefix(77) + "..." : Substring(text)
    }

    private static func describe(_ value: UInt32) -> String {
        guard value > 0x20, !(0x7F...0x9F).contains(value), let scalar = Unicode.Scalar(value) else { return "U+" + String(format04: value) }
        return "'\(Character(scalar))'"
    }
}

extension UInt8 {
    /// What RFC 3986 allows nowhere in a URL: controls, space, DEL, and `"<>\^`{|}`.
    var isNeverInURL: Bool {
        switch self {
        case 0...0x20, 0x7F, 0x22, 0x3C, 0x3E, 0x5C, 0x5E, 0x60, 0x7B, 0x7C, 0x7D: true
        default: false
        }
    }
}

extension UnsafeBufferPointer<UInt8> {
    /// Holds a lowercase ASCII literal somewhere, ASCII letters compared without case.
    func containsIgnoringASCIICase(_ literal: StaticString) -> Bool {
        let wanted = literal.utf8CodeUnitCount
        guard count >= wanted else { return false }
        return (0...(count - wanted)).contains { self[$0..<($0 + wanted)].isIgnoringASCIICase(literal) }
    }
}
