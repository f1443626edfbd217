import Foundation

/// Text from the outside world made fit for a one-line error.
package enum HTTPText {
    package static func oneLine(_ text: String, limit: Int = 200) -> String {
        var out = String.UnicodeScalarView()
        var lastWasSpace = false
        for scalar in text.unicodeScalars {
            let category = scalar.properties.generalCategory
            let isSpace = category == .control || category == .lineSeparator
                || category == .paragraphSeparator || category == .format || scalar.properties.isWhitespace
            if isSpace {
                if !lastWasSpace { out.append(" ") }
                lastWasSpace = true
            } else {
                out.append(scalar)
                lastWasSpace = false
            }
        }
        var line = String(out)
        while line.first == " " { line.removeFirst() }
        while line.last == " " { line.removeLast() }
        if line.count > limit { line = String(line.prefix(limit)) + "…" }
        return line
    }

    /// `bytes` without leading and trailing spaces, tabs, CR and LF (a header line's padding).
    package static func trimmed(_ bytes: Slice<UnsafeRawBufferPointer>) -> Slice<UnsafeRawBufferPointer> {
        func isPadding(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0d || byte == 0x0a }
        var start = bytes.startIndex, end = bytes.endIndex
        while start < end, isPadding(bytes[start]) { start += 1 }
        while end > start, isPadding(bytes[end - 1]) { end -= 1 }
        return bytes[start..<end]
    }

    /// A-Z to a-z, every other byte as it is (header names are ASCII tokens).
    package static func asciiLowercased(_ byte: UInt8) -> UInt8 {
        (0x41...0x5a).contains(byte) ? byte | 0x20 : byte
    }
}

/// An error as the one line a message shows: its reason when it is one of enlog's.
package func oneLine(_ error: Error) -> String {
    if let e = error as? any ENLogError { return e.reason }
    return "\(error)"
}
