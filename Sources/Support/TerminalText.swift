/// Text from outside (file names above all) made safe to print on a terminal: an ESC in a name
/// could recolour or clear the screen, a newline could forge a line of output another program
/// parses. Control characters become `\xNN` (C0, DEL, C1, and the line and paragraph separators
/// as `\u{2028}`), and so do bytes that are not UTF-8. Everything else prints as it is.
package enum TerminalText {
    package static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            out += needsEscape(scalar) ? escape(scalar.value) : String(scalar)
        }
        return out
    }

    /// Bytes as a file system gave them: valid UTF-8 runs print as text, other bytes as `\xNN`.
    package static func escaped(_ bytes: [UInt8]) -> String {
        var out = ""
        var index = 0
        while index < bytes.count {
            let length = sequenceLength(bytes, at: index)
            if length > 0, let text = String(validating: bytes[index..<(index + length)], as: UTF8.self) {
                out += escaped(text)
                index += length
            } else {
                out += "\\x" + hex(UInt32(bytes[index]), digits: 2)
                index += 1
            }
        }
        return out
    }

    /// A message for the terminal as one line: what `escaped` does, tabs kept (they separate
    /// columns and cannot start a line). Every line enlog writes to stderr goes through this,
    /// so a path or a server's words inside a message can never forge another line.
    package static func oneLine(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { needsEscape($0) && $0 != "\t" }) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            out += needsEscape(scalar) && scalar != "\t" ? escape(scalar.value) : String(scalar)
        }
        return out
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
    }

    private static func escape(_ value: UInt32) -> String {
        value <= 0xFF ? "\\x" + hex(value, digits: 2) : "\\u{" + hex(value, digits: 4) + "}"
    }

    private static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }

    /// The length a UTF-8 lead byte announces, if the continuation bytes are there; 0 otherwise.
    private static func sequenceLength(_ bytes: [UInt8], at index: Int) -> Int {
        let lead = bytes[index]
        let length = lead < 0x80 ? 1 : lead >= 0xC2 && lead <= 0xDF ? 2 : lead >= 0xE0 && lead <= 0xEF ? 3 : lead >= 0xF0 && lead <= 0xF4 ? 4 : 0
        guard length > 0, index + length <= bytes.count else { return 0 }
        return length
    }
}
