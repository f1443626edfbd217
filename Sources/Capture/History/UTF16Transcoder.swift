import Foundation

/// UTF-16 history files (XML must be readable in UTF-16; spreadsheet programs save CSV as
/// "Unicode text") turned into the UTF-8 every reader reads, chunk by chunk as the file is fed:
/// a code unit or a surrogate pair cut by a chunk's end waits for the next. UTF-16 is told by
/// its byte order mark, or for XML by its first characters `<?` without one (XML 1.0, appendix
/// F). An XML declaration's `encoding` is rewritten to UTF-8, which the text now is (libxml2
/// refuses a document labelled UTF-16 whose bytes are UTF-8).
package struct UTF16Transcoder {
    package enum ByteOrder: Sendable { case littleEndian, bigEndian }

    let order: ByteOrder
    /// The byte order mark still to drop (2 bytes when there is one).
    private var markToSkip: Int
    private var oddByte: UInt8?
    private var highSurrogate: UInt16?
    /// Bytes of the file consumed, for errors.
    private var offset = 0
    /// The start of the output, held until it is known whether it is an XML declaration and where it ends.
    private var head: [UInt8]? = []
    private static let headLimit = 1024

    /// A transcoder for a file that starts with `prefix`, or nil when it is no UTF-16. A UTF-32
    /// byte order mark (FF FE 00 00) is no UTF-16 one.
    package init?(detecting prefix: ArraySlice<UInt8>) {
        if prefix.starts(with: [0xFF, 0xFE]) && !prefix.starts(with: [0xFF, 0xFE, 0x00, 0x00]) {
            (order, markToSkip) = (.littleEndian, 2)
        } else if prefix.starts(with: [0xFE, 0xFF]) {
            (order, markToSkip) = (.bigEndian, 2)
        } else if prefix.starts(with: [0x3C, 0x00, 0x3F, 0x00]) {
            (order, markToSkip) = (.littleEndian, 0)
        } else if prefix.starts(with: [0x00, 0x3C, 0x00, 0x3F]) {
            (order, markToSkip) = (.bigEndian, 0)
        } else {
            return nil
        }
    }

    package var encodingName: String { order == .littleEndian ? "UTF-16LE" : "UTF-16BE" }

    /// The UTF-8 of `bytes`, the next bytes of the file.
    package mutating func feed(_ bytes: ArraySlice<UInt8>) throws(HistoryFileError) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count * 3 / 2 + 4)
        var index = bytes.startIndex
        while markToSkip > 0, index < bytes.endIndex {
            markToSkip -= 1
            index += 1
            offset += 1
        }
        while index < bytes.endIndex {
            guard let first = oddByte else {
                oddByte = bytes[index]
                index += 1
                continue
            }
            oddByte = nil
            let second = bytes[index]
            index += 1
            let unit = order == .littleEndian ? UInt16(first) | UInt16(second) << 8 : UInt16(first) << 8 | UInt16(second)
            try take(unit, into: &output)
            offset += 2
        }
        return release(output, final: false)
    }

    /// What the file's end leaves: an error when it cuts a code unit or a surrogate pair.
    package mutating func finish() throws(HistoryFileError) -> [UInt8] {
        if oddByte != nil { throw HistoryFileError("\(encodingName) text ends with half a character (an odd number of bytes)", at: .byte(offset)) }
        if highSurrogate != nil { throw HistoryFileError("\(encodingName) text ends inside a surrogate pair", at: .byte(offset - 2)) }
        return release([], final: true)
    }

    private mutating func take(_ unit: UInt16, into output: inout [UInt8]) throws(HistoryFileError) {
        let scalar: UInt32
        switch unit {
        case 0xD800...0xDBFF:
            if highSurrogate != nil { throw lone(at: offset - 2) }
            highSurrogate = unit
            return
        case 0xDC00...0xDFFF:
            guard let high = highSurrogate else { throw lone(at: offset) }
            highSurrogate = nil
            scalar = 0x10000 + (UInt32(high - 0xD800) << 10 | UInt32(unit - 0xDC00))
        default:
            if highSurrogate != nil { throw lone(at: offset - 2) }
            scalar = UInt32(unit)
        }
        switch scalar {
        case 0..<0x80:
            output.append(UInt8(scalar))
        case 0x80..<0x800:
            output.append(UInt8(0xC0 | scalar >> 6))
            output.append(UInt8(0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            output.append(UInt8(0xE0 | scalar >> 12))
            output.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            output.append(UInt8(0x80 | scalar & 0x3F))
        default:
            output.append(UInt8(0xF0 | scalar >> 18))
            output.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            output.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            output.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    private func lone(at position: Int) -> HistoryFileError {
        HistoryFileError("not valid \(encodingName): a lone surrogate", at: .byte(position))
    }

    /// `output`, after the head is settled: held while it may still be an XML declaration
    /// without its end, given with its `encoding` rewritten once it is one.
    private mutating func release(_ output: [UInt8], final: Bool) -> [UInt8] {
        guard var held = head else { return output }
        held += output
        let declarationStart = Array("<?xml".utf8)
        let couldBeDeclaration = declarationStart.starts(with: held.prefix(declarationStart.count))
        if couldBeDeclaration, !final, held.count < Self.headLimit, Self.declarationEnd(in: held) == nil {
            head = held
            return []
        }
        head = nil
        guard held.starts(with: declarationStart), let end = Self.declarationEnd(in: held) else { return held }
        return Self.declaringUTF8(Array(held[..<end])) + held[end...]
    }

    private static func declarationEnd(in bytes: [UInt8]) -> Int? {
        guard bytes.count >= 2 else { return nil }
        for index in 0..<bytes.count - 1 where bytes[index] == UInt8(ascii: "?") && bytes[index + 1] == UInt8(ascii: ">") {
            return index + 2
        }
        return nil
    }

    /// `<?xml version="1.0" encoding="UTF-16"?>` with `encoding="UTF-8"`.
    private static func declaringUTF8(_ declaration: [UInt8]) -> [UInt8] {
        let text = String(decoding: declaration, as: UTF8.self)
        guard let name = text.range(of: "encoding") else { return declaration }
        var rest = text[name.upperBound...].drop { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" }
        guard rest.first == "=" else { return declaration }
        rest = rest.dropFirst().drop { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" }
        guard let quote = rest.first, quote == "\"" || quote == "'",
              let close = rest.dropFirst().firstIndex(of: quote) else { return declaration }
        return Array((String(text[..<rest.startIndex]) + "\(quote)UTF-8\(quote)" + String(text[text.index(after: close)...])).utf8)
    }
}
