import Support
import EvernoteAPI
import Configuration
import Network
import Capture
/// The ENML rules the DTD cannot express (PROTOCOL.md §7–8.3), applied to one start tag.
enum ENMLRules {
    /// EDAM_MIME_LEN_MIN / _MAX.
    static let mimeLength = 3...255

    /// Checks one element's attributes, reporting at the position libxml2 reached (the end of the tag).
    static func check(element: String, attributes: [(name: String, value: String)],
                      line: Int, column: Int, into diagnostics: inout [ENMLDiagnostic]) {
        func report(_ code: ENMLDiagnostic.Code, _ message: String) {
            diagnostics.append(ENMLDiagnostic(line: line, column: column, code: code, message: message))
        }
        for (name, value) in attributes {
            switch (element, name) {
            case ("a", "accesskey"), ("a", "tabindex"), ("area", "accesskey"), ("area", "tabindex"):
                // The DTD declares these through %focus; but the service forbids them.
                report(.prohibitedAttribute, "attribute '\(name)' is not allowed in ENML (on <\(element)>)")
            case ("a", "href"), ("area", "href"), ("img", "src"):
                if let problem = URLRule.problem(with: value, in: element == "img" ? .image : .link) {
                    report(problem.code, "\(element) \(name) \(problem.message)")
                }
            case ("en-media", "hash"):
                if !isMD5Hex(value) {
                    report(.mediaHash, "en-media hash '\(value.prefix(64))' must be exactly 32 hexadecimal digits (the MD5 of the resource)")
                }
            case ("en-media", "type"):
                if !isMIMEType(value) {
                    report(.mediaType, "en-media type '\(value.prefix(64))' is not a MIME type matching EDAM_MIME_REGEX (e.g. image/png)")
                }
            default:
                break
            }
        }
    }

    static func isMD5Hex(_ value: String) -> Bool {
        value.utf8.count == 32 && value.utf8.allSatisfy(\.isHexDigit)
    }

    /// EDAM_MIME_REGEX `^[A-Za-z]+/[A-Za-z0-9._+-]+$` and its length bounds.
    static func isMIMEType(_ value: String) -> Bool {
        let bytes = Array(value.utf8)
        guard mimeLength.contains(bytes.count), let slash = bytes.firstIndex(of: UInt8(ascii: "/")) else { return false }
        let type = bytes[..<slash], subtype = bytes[(slash + 1)...]
        return !type.isEmpty && type.allSatisfy(\.isASCIILetter)
            && !subtype.isEmpty && subtype.allSatisfy { $0.isASCIILetter || $0.isASCIIDigit || "._+-".utf8.contains($0) }
    }
}

/// What a link or image URL in ENML may be: absolute, well-formed, and of no scripting scheme;
/// plus the two forms Evernote's own clients write and the service stores: an image inlined as a
/// `data:image/…` URL (pasted images, web clips) and a link to a fragment of the note (`#`).
enum URLRule {
    struct Problem {
        var code: ENMLDiagnostic.Code
        var message: String
    }

    /// Where a URL sits: a link is followed when clicked, an image source is only displayed.
    enum Use {
        case link, image
    }

    /// Schemes that execute code or smuggle content; Evernote's own ENMLWriter drops every scheme
    /// containing "script" and Apple's data detectors. `data:` is judged by its media type instead.
    static func isForbidden(scheme: String) -> Bool {
        scheme.contains("script") || ["x-apple-data-detectors", "about", "blob", "view-source"].contains(scheme)
    }

    static func problem(with url: String, in use: Use = .link) -> Problem? {
        let shown = url.count > 80 ? url.prefix(77) + "..." : Substring(url)
        guard !url.isEmpty else { return Problem(code: .malformedURL, message: "is empty") }
        if use == .link, url.hasPrefix("#") {
            // A same-note fragment: nothing to fetch, nothing to run. Evernote 10's web clips keep `href="#"`.
            return characterProblem(url, shown: shown)
        }
        guard let colon = url.firstIndex(of: ":") else {
            return Problem(code: .malformedURL, message: "'\(shown)' is not an absolute URL (no scheme)")
        }
        let scheme = url[..<colon].lowercased()
        guard let first = scheme.utf8.first, first.isASCIILetter,
              scheme.utf8.allSatisfy({ $0.isASCIILetter || $0.isASCIIDigit || "+.-".utf8.contains($0) }) else {
            return Problem(code: .malformedURL, message: "'\(shown)' does not start with a valid URL scheme")
        }
        if isForbidden(scheme: scheme) {
            return Problem(code: .unsafeURL, message: "uses the forbidden scheme '\(scheme):'")
        }
        let rest = url[url.index(after: colon)...]
        if scheme == "data" {
            return dataURLProblem(rest, use: use, shown: shown)
        }
        if let problem = characterProblem(url, shown: shown) { return problem }
        if ["http", "https", "ftp"].contains(scheme) {
            guard rest.hasPrefix("//"), let host = rest.dropFirst(2).split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).first,
                  !host.isEmpty, !host.hasPrefix(":"), !host.hasPrefix("@") else {
                return Problem(code: .malformedURL, message: "'\(shown)' has no host")
            }
        } else if rest.isEmpty {
            return Problem(code: .malformedURL, message: "'\(shown)' has nothing after its scheme")
        }
        return nil
    }

    /// RFC 3986 allows no spaces, controls, quotes or angle brackets anywhere in a URL, and a `%`
    /// only before two hex digits.
    private static func characterProblem(_ url: String, shown: Substring) -> Problem? {
        if let bad = url.unicodeScalars.first(where: { $0.value <= 0x20 || $0.value == 0x7F || "\"<>\\^`{|}".unicodeScalars.contains($0) }) {
            return Problem(code: .malformedURL, message: "'\(shown)' contains the character \(describe(bad)), which a URL cannot hold unescaped")
        }
        if !percentEscapesAreValid(url) {
            return Problem(code: .malformedURL, message: "'\(shown)' has a malformed percent-escape")
        }
        return nil
    }

    /// `data:` carries an inlined image and nothing else: an HTML or script document in a data URL
    /// runs in whatever opens it. In a link, not even SVG, which runs its scripts when opened as a
    /// document (an `<img>` shows SVG without running them). Evernote writes SVG data URLs with
    /// raw spaces and quotes, as browsers accept them, so only controls are refused in the payload.
    private static func dataURLProblem(_ rest: Substring, use: Use, shown: Substring) -> Problem? {
        guard let comma = rest.firstIndex(of: ",") else {
            return Problem(code: .malformedURL, message: "'\(shown)' is a data URL without the ',' before its data")
        }
        let mediaType = rest[..<comma].split(separator: ";", omittingEmptySubsequences: false).first.map { $0.lowercased() } ?? ""
        guard mediaType.hasPrefix("image/"), ENMLRules.isMIMEType(mediaType) else {
            let named = mediaType.isEmpty ? "no media type" : "media type '\(mediaType.prefix(40))'"
            return Problem(code: .unsafeURL, message: "is a data URL of \(named); only images may be inlined (data:image/…)")
        }
        if use == .link, mediaType == "image/svg+xml" {
            return Problem(code: .unsafeURL, message: "links to an SVG data URL, which can run script when opened")
        }
        if let bad = rest.unicodeScalars.first(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) {
            return Problem(code: .malformedURL, message: "'\(shown)' contains the character \(describe(bad)), which a URL cannot hold unescaped")
        }
        return nil
    }

    private static func percentEscapesAreValid(_ url: String) -> Bool {
        let bytes = Array(url.utf8)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, bytes[index + 1].isHexDigit, bytes[index + 2].isHexDigit else { return false }
                index += 3
            } else {
                index += 1
            }
        }
        return true
    }

    private static func describe(_ scalar: Unicode.Scalar) -> String {
        scalar.value <= 0x20 || (0x7F...0x9F).contains(scalar.value)
            ? "U+" + String(format04: scalar.value)
            : "'\(Character(scalar))'"
    }
}

extension String {
    /// Four or more uppercase hex digits, as in U+00A0.
    package init(format04 value: UInt32) {
        let hex = String(value, radix: 16, uppercase: true)
        self = String(repeating: "0", count: Swift.max(0, 4 - hex.count)) + hex
    }
}

extension UInt8 {
    var isASCIILetter: Bool { (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self) }
    var isASCIIDigit: Bool { (0x30...0x39).contains(self) }
    var isHexDigit: Bool { isASCIIDigit || (0x41...0x46).contains(self) || (0x61...0x66).contains(self) }
}
