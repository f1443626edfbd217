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

/// The records enlog stores write their `Date`s as `StorageTime` text, GRDB's own format: GRDB
/// writes it through ICU's `DateFormatter`, whose set-up and use were 3 % of a `log`'s CPU.
protocol StoredDates: EncodableRecord {}

extension StoredDates {
    package static func databaseDateEncodingStrategy(for column: String) -> DatabaseDateEncodingStrategy {
        .custom { StorageTime.text($0) }
    }
}
