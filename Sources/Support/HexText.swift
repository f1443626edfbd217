/// Bytes as lowercase hexadecimal text (digests in cache keys, `en-media` hashes).
/// Built from a table rather than `String(format:)`, which costs about a microsecond per byte
/// through Foundation: a map's cache keys alone made that ~2 ms of `enlog log`.
package enum HexText {
    private static let digits = Array("0123456789abcdef".utf8)

    package static func lowercase(_ bytes: some Sequence<UInt8>) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
