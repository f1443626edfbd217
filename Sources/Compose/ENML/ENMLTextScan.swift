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

    /// One pass over the bytes, eight at a time while they are printable ASCII (most of a note's
    /// markup): nothing there to decode or report. Lines and columns are counted only up to what
    /// is reported.
    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        var cursor = Cursor()
        var index = 0
        let count = bytes.count
        while index < count {
            if index + 8 <= count, Self.isPrintableASCII(UnsafeRawPointer(bytes.baseAddress!).loadUnaligned(fromByteOffset: index, as: UInt64.self)) {
                utf16Length += 8
                index += 8
                continue
            }
            let lead = bytes[index]
            if lead < 0x80 {
                if ENMLCharacters.isForbiddenControl(UInt32(lead)) {
                    report(cursor.advanced(to: index, in: bytes), scalar: UInt32(lead))
                }
                utf16Length += 1
                index += 1
                continue
            }
            guard let (scalar, length) = Self.decode(bytes, at: index) else {
                isUTF8 = false
                let (line, column) = cursor.advanced(to: index, in: bytes)
                diagnostics.append(ENMLDiagnostic(
                    line: line, column: column, code: .invalidUTF8,
                    message: "invalid UTF-8 byte 0x\(String(lead, radix: 16, uppercase: true)) at offset \(index); ENML must be UTF-8"))
                return
            }
            if ENMLCharacters.isForbiddenControl(scalar) {
                report(cursor.advanced(to: index, in: bytes), scalar: scalar)
            }
            utf16Length += scalar > 0xFFFF ? 2 : 1
            index += length
        }
        if utf16Length > Self.maximumContentLength {
            diagnostics.append(ENMLDiagnostic(
                line: cursor.advanced(to: count, in: bytes).line, column: 0, code: .contentTooLong,
                message: "content is \(utf16Length) characters long; Evernote accepts at most \(Self.maximumContentLength) (EDAM_NOTE_CONTENT_LEN_MAX)"))
        }
    }

    /// No byte of `word` is a control (tab, LF and CR included), DEL or beyond ASCII. Bitwise,
    /// all eight at once: a byte below 0x20 borrows into its top bit when 0x20 is taken from it.
    private static func isPrintableASCII(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, tops: UInt64 = 0x8080_8080_8080_8080
        guard word & tops == 0 else { return false }
        let belowSpace = (word &- ones &* 0x20) & ~word & tops
        let notDEL = word ^ (ones &* 0x7F)
        let isDEL = (notDEL &- ones) & ~notDEL & tops
        return belowSpace | isDEL == 0
    }

    /// Line and column (in characters) of a byte offset, counted onward from the last one asked.
    private struct Cursor {
        private var offset = 0
        private var line = 1
        private var column = 1

        mutating func advanced(to target: Int, in bytes: UnsafeBufferPointer<UInt8>) -> (line: Int, column: Int) {
            while offset < target {
                let byte = bytes[offset]
                if byte == 0x0A {
                    line += 1
                    column = 1
                } else if byte & 0xC0 != 0x80 {
                    column += 1
                }
                offset += 1
            }
            return (line, column)
        }
    }

    private mutating func report(_ position: (line: Int, column: Int), scalar: UInt32) {
        hasControlCharacters = true
        diagnostics.append(ENMLDiagnostic(
            line: position.line, column: position.column, code: .controlCharacter,
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
