import Foundation
import GRDB
import Support

/// Times as GRDB stores a `Date` ("yyyy-MM-dd HH:mm:ss.SSS", UTC), written without a formatter:
/// one per point, millions per import. Milliseconds are rounded, as enlog compares times.
enum StorageTime {
    /// Bytes of the text: "yyyy-MM-dd HH:mm:ss.SSS".
    static let length = 23

    static func text(_ date: Date) -> String {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: length) { buffer in
            write(date, into: buffer.baseAddress!)
            return String(decoding: UnsafeBufferPointer(buffer), as: UTF8.self)
        }
    }

    /// Writes the text of `date` into `bytes` (`length` of them), allocating nothing: an import
    /// binds it straight from there.
    static func write(_ date: Date, into bytes: UnsafeMutablePointer<UInt8>) {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded())
        let days = InstantText.floorDivision(milliseconds, 86_400_000)
        let ofDay = milliseconds - days * 86_400_000
        let (year, month, day) = InstantText.civil(fromDays: days)
        let seconds = ofDay / 1000
        func put(_ value: Int64, _ width: Int, at offset: Int) {
            var value = value
            for index in stride(from: offset + width - 1, through: offset, by: -1) {
                bytes[index] = UInt8(0x30 + value % 10)
                value /= 10
            }
        }
        put(year, 4, at: 0); bytes[4] = 0x2D
        put(month, 2, at: 5); bytes[7] = 0x2D
        put(day, 2, at: 8); bytes[10] = 0x20
        put(seconds / 3600, 2, at: 11); bytes[13] = 0x3A
        put(seconds / 60 % 60, 2, at: 14); bytes[16] = 0x3A
        put(seconds % 60, 2, at: 17); bytes[19] = 0x2E
        put(ofDay % 1000, 3, at: 20)
    }
}

extension StorageTime {
    /// The time of "yyyy-MM-dd HH:mm:ss.SSS" text (milliseconds may be absent), read without a
    /// parser object: `enlog serve`'s diary reads back every point it is sent. nil for any other
    /// text (the caller asks GRDB, which knows every form it has ever written).
    static func date(_ text: UnsafeBufferPointer<UInt8>) -> Date? {
        guard text.count == length || text.count == 19 else { return nil }
        func number(_ offset: Int, _ width: Int) -> Int64? {
            var value: Int64 = 0
            for index in offset..<offset + width {
                let digit = Int64(text[index]) - 0x30
                guard (0...9).contains(digit) else { return nil }
                value = value * 10 + digit
            }
            return value
        }
        guard text[4] == 0x2D, text[7] == 0x2D, text[10] == 0x20, text[13] == 0x3A, text[16] == 0x3A,
              text.count == 19 || text[19] == 0x2E,
              let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
              let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
              let milliseconds = text.count == 19 ? 0 : number(20, 3),
              InstantText.isCalendarDate(year: year, month: month, day: day), hour < 24, minute < 60, second < 60 else { return nil }
        let days = InstantText.days(fromYear: year, month: month, day: day)
        let total = ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + milliseconds
        return Date(timeIntervalSince1970: Double(total) / 1000)
    }
}

/// The records enlog stores write their `Date`s as `StorageTime` text, GRDB's own format: GRDB
/// writes it through ICU's `DateFormatter`, whose set-up and use were 3 % of a `log`'s CPU.
protocol StoredDates: EncodableRecord {}

extension StoredDates {
    package static func databaseDateEncodingStrategy(for column: String) -> DatabaseDateEncodingStrategy {
        .custom { StorageTime.text($0) }
    }
}
