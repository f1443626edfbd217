import Support
import EvernoteAPI
import Configuration
import Network
import Capture
/// Which characters a note can carry: XML 1.0's `Char` production (what libxml2 accepts), less
/// what the validator refuses beyond it (DEL and the C1 controls, PROTOCOL.md §8.3), less the
/// Unicode noncharacters (U+FFFE, U+FFFF, U+FDD0–U+FDEF, U+xFFFE/xFFFF), which are for a
/// program's internal use and never part of interchanged text.
///
/// The validator's byte scan and the cleaning of text from outside (geocoder answers, settings)
/// share this one rule, so what the renderer lets through is what the validator accepts.
package enum ENMLCharacters {
    /// C0 controls but tab, LF and CR; DEL; C1 controls.
    static func isForbiddenControl(_ value: UInt32) -> Bool {
        (value < 0x20 && value != 0x09 && value != 0x0A && value != 0x0D) || (0x7F...0x9F).contains(value)
    }

    package static func canCarry(_ scalar: Unicode.Scalar) -> Bool {
        // Swift scalars are never surrogates, so XML's surrogate gap needs no test here; text
        // decoded from bytes with an unpaired surrogate already holds U+FFFD in its place.
        !isForbiddenControl(scalar.value) && !scalar.properties.isNoncharacterCodePoint
    }

    /// `text` without the characters a note cannot carry. Forbidden line controls (VT, FF, NEL)
    /// become a space, so that words on either side stay apart; the rest are dropped.
    package static func cleaned(_ text: String) -> String {
        guard !text.unicodeScalars.allSatisfy(canCarry) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if canCarry(scalar) {
                out.append(scalar)
            } else if [0x0B, 0x0C, 0x85].contains(scalar.value) {
                out.append(" ")
            }
        }
        return String(out)
    }

    /// `text` cleaned and made XML character data, fit for an element or a quoted attribute.
    /// Scalar by scalar: a `<` that a combining mark follows is one `Character` with it, so an
    /// escaping that compares Characters (as swift-mustache's does) lets it through unescaped.
    /// Built as a String: `UnicodeScalarView.append(contentsOf:)` copies the whole view each
    /// time (the standard library makes a new String of it), which made a 6.5 MB message with an
    /// `&` every 13 characters take 200 s of CPU.
    package static func escaped(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in cleaned(text).unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
