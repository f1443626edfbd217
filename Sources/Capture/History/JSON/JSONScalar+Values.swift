import Foundation
import Configuration
import Support

/// The values history files carry, read straight from a scalar's bytes: numbers whether written as
/// numbers or quoted ("every number quoted" on iOS), times as epoch seconds or milliseconds or ISO
/// 8601, coordinate pairs as `"48.85°, 2.35°"` or `"geo:48.85,2.35"`.
extension JSONScalar {
    package var isText: Bool { kind == .string || kind == .number }

    package var string: String { String(decoding: bytes, as: UTF8.self) }

    /// The string, unless it is empty or the scalar is not a string or number.
    package var text: String? { isText && !bytes.isEmpty ? string : nil }

    package func equals(_ literal: StaticString) -> Bool {
        isText && bytes.count == literal.utf8CodeUnitCount
            && memcmp(bytes.baseAddress!, literal.utf8Start, bytes.count) == 0
    }

    package var double: Double? { isText ? JSONNumberText.double(bytes[...]) : nil }

    /// Seconds since 1970 from epoch digits (milliseconds when the value is too large to be
    /// seconds: 1e11 s is the year 5138, 1e11 ms is 1973) or an ISO 8601 date and time.
    package var epochSeconds: Double? {
        guard isText, !bytes.isEmpty else { return nil }
        if let number = JSONNumberText.double(bytes[...]) {
            return abs(number) >= 1e11 ? number / 1000 : number
        }
        return ISOTimeText.epochSeconds(bytes[...])
    }

    /// Seconds since 1970 (as `epochSeconds`) and the offset from UTC the text states (as
    /// `statedUTCOffset`), from one reading of the text: a record's time is read once.
    package var timeAndStatedOffset: (seconds: Double, offset: Int?)? {
        guard isText, !bytes.isEmpty else { return nil }
        if let number = JSONNumberText.double(bytes[...]) {
            return (abs(number) >= 1e11 ? number / 1000 : number, nil)
        }
        guard let parsed = ISOTimeText.parse(bytes[...]) else { return nil }
        return (parsed.seconds, kind == .string ? parsed.offset : nil)
    }

    /// The offset from UTC, in seconds, an ISO 8601 time states (`+10:00`); nil for epoch digits,
    /// `Z` or no offset: those say the instant, not the zone it was lived in.
    package var statedUTCOffset: Int? {
        guard kind == .string, !bytes.isEmpty else { return nil }
        return ISOTimeText.parse(bytes[...])?.offset
    }

    /// A latitude and longitude written as text: `48.85°, 2.35°`, `48.85,2.35`, `geo:48.85,2.35`.
    package var coordinatePair: (latitude: Double, longitude: Double)? {
        guard kind == .string else { return nil }
        var text = bytes[...]
        if text.starts(with: "geo:".utf8) { text = text.dropFirst(4) }
        guard let comma = text.firstIndex(of: UInt8(ascii: ",")),
              let latitude = JSONNumberText.double(Self.trimmedDegrees(text[..<comma])),
              let longitude = JSONNumberText.double(Self.trimmedDegrees(text[(comma + 1)...])) else { return nil }
        return (latitude, longitude)
    }

    private static func trimmedDegrees(_ text: Slice<UnsafeRawBufferPointer>) -> Slice<UnsafeRawBufferPointer> {
        var text = text
        while let first = text.first, first == UInt8(ascii: " ") { text = text.dropFirst() }
        while let last = text.last, last == UInt8(ascii: " ") { text = text.dropLast() }
        if text.count >= 2, text[text.endIndex - 2] == 0xC2, text[text.endIndex - 1] == 0xB0 { text = text.dropLast(2) }
        return text
    }
}

/// Decimal numbers from bytes without a `String`: the fast path is exact (a mantissa of at most
/// 15 digits and a power of ten up to 22 are both exact doubles, so one multiplication or division
/// rounds correctly); anything longer goes to `strtod`.
package enum JSONNumberText {
    private static let powers: [Double] = (0...22).map { pow(10, Double($0)) }

    package static func double(_ text: Slice<UnsafeRawBufferPointer>) -> Double? {
        var index = text.startIndex
        let end = text.endIndex
        guard index < end else { return nil }
        var negative = false
        if text[index] == UInt8(ascii: "-") || text[index] == UInt8(ascii: "+") {
            negative = text[index] == UInt8(ascii: "-")
            index += 1
        }
        var mantissa: Int64 = 0, digits = 0, exponent = 0, sawDigit = false
        while index < end, case let digit = text[index] &- 48, digit < 10 {
            if digits < 18 { mantissa = mantissa * 10 + Int64(digit); if mantissa > 0 { digits += 1 } } else { exponent += 1 }
            sawDigit = true
            index += 1
        }
        if index < end, text[index] == UInt8(ascii: ".") {
            index += 1
            while index < end, case let digit = text[index] &- 48, digit < 10 {
                if digits < 18 { mantissa = mantissa * 10 + Int64(digit); exponent -= 1; if mantissa > 0 { digits += 1 } }
                sawDigit = true
                index += 1
            }
        }
        guard sawDigit else { return nil }
        if index == end, digits <= 15, exponent >= -22, exponent <= 22 {
            let value = exponent < 0 ? Double(mantissa) / powers[-exponent] : Double(mantissa) * powers[exponent]
            return negative ? -value : value
        }
        return slow(text)
    }

    private static func slow(_ text: Slice<UnsafeRawBufferPointer>) -> Double? {
        guard text.count < 64 else { return nil }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: text.count + 1) { buffer -> Double? in
            for (offset, byte) in text.enumerated() { buffer[offset] = CChar(bitPattern: byte) }
            buffer[text.count] = 0
            var stop: UnsafeMutablePointer<CChar>?
            let value = strtod(buffer.baseAddress!, &stop)
            guard stop == buffer.baseAddress! + text.count, value.isFinite else { return nil }
            return value
        }
    }
}

/// ISO 8601 date-times as history files write them: `2022-01-01T10:11:12.345Z`, an offset `+01:00`,
/// `+0100` or `+01` (after a space too), a space for the `T`, no seconds, or a date alone (midnight). A time without
/// an offset is taken as UTC, as Google's and the trackers' exports mean it.
package enum ISOTimeText {
    package static func epochSeconds(_ text: Slice<UnsafeRawBufferPointer>) -> Double? {
        parse(text)?.seconds
    }

    /// Seconds since 1970, and the offset east of UTC the text states (nil for `Z` or none;
    /// only an offset within `Fix.Limits.utcOffset`, whole minutes, is one).
    package static func parse(_ text: Slice<UnsafeRawBufferPointer>) -> (seconds: Double, offset: Int?)? {
        var index = text.startIndex
        let end = text.endIndex
        func number(_ width: Int) -> Int? {
            guard end - index >= width else { return nil }
            var value = 0
            for _ in 0..<width {
                let digit = Int(text[index]) - 48
                guard (0...9).contains(digit) else { return nil }
                value = value * 10 + digit
                index += 1
            }
            return value
        }
        func skip(_ byte: Unicode.Scalar) -> Bool {
            guard index < end, text[index] == UInt8(ascii: byte) else { return false }
            index += 1
            return true
        }
        guard let year = number(4), skip("-"), let month = number(2), skip("-"), let day = number(2),
              InstantText.isCalendarDate(year: Int64(year), month: Int64(month), day: Int64(day)) else { return nil }
        var seconds = Double(InstantText.days(fromYear: Int64(year), month: Int64(month), day: Int64(day))) * 86_400
        if index == end { return (seconds, nil) }
        guard skip("T") || skip(" "), let hour = number(2), skip(":"), let minute = number(2) else { return nil }
        var second = 0.0
        if skip(":") {
            guard let whole = number(2) else { return nil }
            second = Double(whole)
            if skip(".") || skip(",") {
                var scale = 0.1
                let fractionStart = index
                while index < end, case let digit = text[index] &- 48, digit < 10 {
                    second += Double(digit) * scale
                    scale /= 10
                    index += 1
                }
                guard index > fractionStart else { return nil }
            }
        }
        guard Fix.Limits.isTimeOfDay(hour: Double(hour), minute: Double(minute), second: second) else { return nil }
        seconds += Double(hour * 3600 + minute * 60) + second
        if index == end { return (seconds, nil) }
        // Dawarich's fixtures and Ruby's Time#to_s write "2025-03-24 20:07:24 +0100".
        if skip(" "), index == end { return nil }
        if skip("Z") { return index == end ? (seconds, nil) : nil }
        let sign: Double
        if skip("+") { sign = 1 } else if skip("-") { sign = -1 } else { return nil }
        guard let offsetHours = number(2) else { return nil }
        _ = skip(":")
        let offsetMinutes = index == end ? 0 : number(2)
        guard let offsetMinutes, index == end, offsetHours < 24, offsetMinutes < 60 else { return nil }
        let offset = (sign < 0 ? -1 : 1) * (offsetHours * 3600 + offsetMinutes * 60)
        return (seconds - Double(offset), Fix.Limits.utcOffset.contains(offset) ? offset : nil)
    }
}
