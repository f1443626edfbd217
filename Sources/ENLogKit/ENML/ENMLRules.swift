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
                if let problem = URLRule.problem(with: value) {
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

/// What a link or image URL in ENML may be: absolute, well-formed, and of no scripting scheme.
enum URLRule {
    struct Problem {
        var code: ENMLDiagnostic.Code
        var message: String
    }

    /// Schemes that execute code or smuggle content; Evernote's own ENMLWriter drops every scheme
    /// containing "script" and Apple's data detectors.
    static func isForbidden(scheme: String) -> Bool {
        scheme.contains("script") || ["data", "x-apple-data-detectors", "about", "blob", "view-source"].contains(scheme)
    }

    static func problem(with url: String) -> Problem? {
        let shown = url.count > 80 ? url.prefix(77) + "..." : Substring(url)
        guard !url.isEmpty else { return Problem(code: .malformedURL, message: "is empty") }
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
        // RFC 3986 allows no spaces, controls, quotes or angle brackets anywhere in a URL.
        if let bad = url.unicodeScalars.first(where: { $0.value <= 0x20 || $0.value == 0x7F || "\"<>\\^`{|}".unicodeScalars.contains($0) }) {
            return Problem(code: .malformedURL, message: "'\(shown)' contains the character \(describe(bad)), which a URL cannot hold unescaped")
        }
        if !percentEscapesAreValid(url) {
            return Problem(code: .malformedURL, message: "'\(shown)' has a malformed percent-escape")
        }
        let rest = url[url.index(after: colon)...]
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
        scalar.value <= 0x20 || scalar.value == 0x7F
            ? "U+" + String(format04: scalar.value)
            : "'\(Character(scalar))'"
    }
}

extension String {
    /// Four or more uppercase hex digits, as in U+00A0.
    init(format04 value: UInt32) {
        let hex = String(value, radix: 16, uppercase: true)
        self = String(repeating: "0", count: Swift.max(0, 4 - hex.count)) + hex
    }
}

extension UInt8 {
    var isASCIILetter: Bool { (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self) }
    var isASCIIDigit: Bool { (0x30...0x39).contains(self) }
    var isHexDigit: Bool { isASCIIDigit || (0x41...0x46).contains(self) || (0x61...0x66).contains(self) }
}
