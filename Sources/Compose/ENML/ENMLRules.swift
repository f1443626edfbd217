import Support
import EvernoteAPI
import Configuration
import Network
import Capture
/// The ENML rules the DTD cannot express (PROTOCOL.md §7–8.3), applied to one attribute at a time
/// on the UTF-8 bytes libxml2 holds. They run for every start tag of every note, so they decide on
/// bytes alone; a String is made only to word a diagnostic.
enum ENMLRules {
    /// EDAM_MIME_LEN_MIN / _MAX.
    static let mimeLength = 3...255

    struct Problem {
        var code: ENMLDiagnostic.Code
        var message: String
    }

    /// The elements some rule concerns; every other element is passed over by its name alone.
    enum Element {
        case a, area, img, enMedia

        init?(name: UnsafeBufferPointer<UInt8>) {
            if name.is("a") {
                self = .a
            } else if name.is("img") {
                self = .img
            } else if name.is("en-media") {
                self = .enMedia
            } else if name.is("area") {
                self = .area
            } else {
                return nil
            }
        }

        var name: String {
            switch self {
            case .a: "a"
            case .area: "area"
            case .img: "img"
            case .enMedia: "en-media"
            }
        }

        /// What an attribute of this element is held to, if anything.
        func rule(for attribute: UnsafeBufferPointer<UInt8>) -> AttributeRule? {
            switch self {
            case .a, .area:
                if attribute.is("href") { return .url(.link, attribute: "href") }
                if attribute.is("accesskey") { return .prohibited("accesskey") }
                if attribute.is("tabindex") { return .prohibited("tabindex") }
            case .img:
                if attribute.is("src") { return .url(.image, attribute: "src") }
            case .enMedia:
                if attribute.is("hash") { return .mediaHash }
                if attribute.is("type") { return .mediaType }
            }
            return nil
        }
    }

    enum AttributeRule {
        /// The DTD declares these on links through %focus; but the service forbids them.
        case prohibited(String)
        case url(URLRule.Use, attribute: String)
        case mediaHash
        case mediaType
    }

    /// What is wrong with `value` as the attribute `rule` governs on `element`, worded as before
    /// the rules ran on bytes; nil when nothing is.
    static func problem(_ rule: AttributeRule, on element: Element, value: UnsafeBufferPointer<UInt8>) -> Problem? {
        switch rule {
        case .prohibited(let name):
            return Problem(code: .prohibitedAttribute, message: "attribute '\(name)' is not allowed in ENML (on <\(element.name)>)")
        case .url(let use, let name):
            return URLRule.problem(with: value, in: use).map { Problem(code: $0.code, message: "\(element.name) \(name) \($0.message)") }
        case .mediaHash:
            guard !isMD5Hex(value) else { return nil }
            return Problem(code: .mediaHash, message: "en-media hash '\(String(decoding: value, as: UTF8.self).prefix(64))' must be exactly 32 hexadecimal digits (the MD5 of the resource)")
        case .mediaType:
            guard !isMIMEType(value) else { return nil }
            return Problem(code: .mediaType, message: "en-media type '\(String(decoding: value, as: UTF8.self).prefix(64))' is not a MIME type matching EDAM_MIME_REGEX (e.g. image/png)")
        }
    }

    static func isMD5Hex(_ value: UnsafeBufferPointer<UInt8>) -> Bool {
        value.count == 32 && value.allSatisfy(\.isHexDigit)
    }

    /// EDAM_MIME_REGEX `^[A-Za-z]+/[A-Za-z0-9._+-]+$` and its length bounds.
    static func isMIMEType<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool {
        guard mimeLength.contains(bytes.count), let slash = bytes.firstIndex(of: UInt8(ascii: "/")) else { return false }
        let type = bytes[..<slash], subtype = bytes[bytes.index(after: slash)...]
        return !type.isEmpty && type.allSatisfy(\.isASCIILetter)
            && !subtype.isEmpty && subtype.allSatisfy { $0.isASCIILetter || $0.isASCIIDigit || $0.isOne(of: "._+-") }
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
    /// ASCII letters in lower case; every other byte as it is.
    var asciiLowercased: UInt8 { (0x41...0x5A).contains(self) ? self | 0x20 : self }

    func isOne(of set: StaticString) -> Bool {
        UnsafeBufferPointer(start: set.utf8Start, count: set.utf8CodeUnitCount).contains(self)
    }
}

extension Collection<UInt8> {
    /// Equal to an ASCII literal, byte for byte.
    func `is`(_ literal: StaticString) -> Bool {
        count == literal.utf8CodeUnitCount && elementsEqual(UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    /// Equal to a lowercase ASCII literal once ASCII letters are lowercased.
    func isIgnoringASCIICase(_ literal: StaticString) -> Bool {
        lazy.map(\.asciiLowercased).elementsEqual(UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    func hasPrefix(_ literal: StaticString, ignoringASCIICase: Bool = false) -> Bool {
        let prefix = UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
        guard count >= prefix.count else { return false }
        return ignoringASCIICase ? self.prefix(prefix.count).isIgnoringASCIICase(literal) : self.prefix(prefix.count).elementsEqual(prefix)
    }
}
