import Foundation
import Support

/// How values are spelled in ENEX: XML text that every reader parses the same way, dates in the
/// DTD's fixed ISO 8601 profile, numbers as plain decimals.
enum ENEXText {
    /// A character XML 1.0 can carry at all, escaped or not: tab, line feed, carriage return,
    /// and everything from U+0020 but the surrogates (which a Swift string never holds) and
    /// U+FFFE/U+FFFF.
    static func isXMLCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x9, 0xA, 0xD: return true
        case 0x20...0xFFFD: return true
        case 0x10000...0x10FFFF: return true
        default: return false
        }
    }

    /// The first character XML cannot carry, spelled `U+0001`, if there is one.
    static func firstNonXMLCharacter(_ text: String) -> String? {
        text.unicodeScalars.first { !isXMLCharacter($0) }.map { String(format: "U+%04X", $0.value) }
    }

    /// Text for an element or a double-quoted attribute. `>` is escaped too, so that no `]]>`
    /// can appear in character data.
    static func escaped(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            // A carriage return would be read back as a line feed.
            case "\r": out += "&#13;"
            default: out.unicodeScalars.append(character)
            }
        }
        return out
    }

    /// `text` inside CDATA sections: a `]]>` in it ends one section after `]]` and starts the
    /// next with `>`, so a reader joins them back to the same text.
    static func cdata(_ text: String) -> String {
        "<![CDATA[" + text.replacingOccurrences(of: "]]>", with: "]]]]><![CDATA[>") + "]]>"
    }

    /// `yyyyMMdd'T'HHmmss'Z'` in UTC, the DTD's only date form, from milliseconds since 1970.
    static func date(milliseconds: Int64) -> String {
        var seconds = time_t(milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(format: "%04d%02d%02dT%02d%02d%02dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
                      Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
    }

    static func date(_ date: Date) -> String {
        self.date(milliseconds: Int64((date.timeIntervalSince1970 * 1000).rounded(.down)))
    }

    /// A plain decimal ("-33.8688", never "1e-05"), to the nanodegree or nanometre, without
    /// trailing zeros.
    static func decimal(_ value: Double) -> String {
        var text = String(format: "%.9f", value)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text == "-0" ? "0" : text
    }
}
