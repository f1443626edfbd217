import Support
import EvernoteAPI
import Configuration
import Network
import Capture
/// Byte-level checks libxml2 either does not make or reports poorly: UTF-8 validity, control
/// characters XML 1.0 tolerates (DEL, C1) and the service's content length limit.
struct ENMLTextScan {
    /// EDAM_NOTE_CONTENT_LEN_MAX (Limits.thrift), in Unicode characters.
    static let maximumContentLength = 5_242_880

    private(set) var diagnostics: [ENMLDiagnostic] = []
    /// False when the bytes are not UTF-8: libxml2 would stop at the same place with a vaguer message.
    private(set) var isUTF8 = true
    /// Length as the service counts it (a Java service: UTF-16 code units, the conservative count).
    private(set) var utf16Length = 0
    private(set) var hasControlCharacters = false

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        var line = 1
        var column = 1
        var index = 0
        let count = bytes.count
        while index < count {
            let lead = bytes[index]
            if lead < 0x80 {
                if lead == 0x0A {
                    line += 1
                    column = 1
                } else {
                    if ENMLCharacters.isForbiddenControl(UInt32(lead)) {
                        report(line, column, scalar: UInt32(lead))
                    }
                    column += 1
                }
                utf16Length += 1
                index += 1
                continue
            }
            guard let (scalar, length) = Self.decode(bytes, at: index) else {
                isUTF8 = false
                diagnostics.append(ENMLDiagnostic(
                    line: line, column: column, code: .invalidUTF8,
                    message: "invalid UTF-8 byte 0x\(String(lead, radix: 16, uppercase: true)) at offset \(index); ENML must be UTF-8"))
                return
            }
            if ENMLCharacters.isForbiddenControl(scalar) {
                report(line, column, scalar: scalar)
            }
            utf16Length += scalar > 0xFFFF ? 2 : 1
            column += 1
            index += length
        }
        if utf16Length > Self.maximumContentLength {
            diagnostics.append(ENMLDiagnostic(
                line: line, column: 0, code: .contentTooLong,
                message: "content is \(utf16Length) characters long; Evernote accepts at most \(Self.maximumContentLength) (EDAM_NOTE_CONTENT_LEN_MAX)"))
        }
    }

    private mutating func report(_ line: Int, _ column: Int, scalar: UInt32) {
        hasControlCharacters = true
        diagnostics.append(ENMLDiagnostic(
            line: line, column: column, code: .controlCharacter,
            message: "control character U+\(String(format04: scalar)) is not allowed; only tab, CR and LF are"))
    }

    /// Decodes one multi-byte UTF-8 sequence, rejecting overlong forms, surrogates and values past U+10FFFF.
    private static func decode(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> (UInt32, Int)? {
        let lead = bytes[index]
        let length: Int
        var scalar: UInt32
        var minimum: UInt32
        switch lead {
        case 0xC2...0xDF: length = 2; scalar = UInt32(lead & 0x1F); minimum = 0x80
        case 0xE0...0xEF: length = 3; scalar = UInt32(lead & 0x0F); minimum = 0x800
        case 0xF0...0xF4: length = 4; scalar = UInt32(lead & 0x07); minimum = 0x10000
        default: return nil
        }
        guard index + length <= bytes.count else { return nil }
        for offset in 1..<length {
            let continuation = bytes[index + offset]
            guard continuation & 0xC0 == 0x80 else { return nil }
            scalar = scalar << 6 | UInt32(continuation & 0x3F)
        }
        guard scalar >= minimum, scalar <= 0x10FFFF, !(0xD800...0xDFFF).contains(scalar) else { return nil }
        return (scalar, length)
    }
}
