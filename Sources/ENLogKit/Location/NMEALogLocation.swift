import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The last valid fix in an NMEA 0183 log file (GGA, RMC, and GSA/GST/ZDA when present).
///
/// Sentences with a bad or missing checksum are skipped, never trusted. Sentences that share a
/// UTC time are merged into one fix: GGA gives position and altitude, RMC the date, speed and
/// course, GST a measured accuracy, GSA the dilution of precision and 2D/3D mode.
public struct NMEALogLocation: LocationSource {
    public let path: String

    /// Metres of horizontal error per unit of HDOP when no GST sentence gives a measured error.
    /// 19 m is what gpsd 3.22 reports as `eph` for the same sentences, so a log read here and the
    /// same log replayed through gpsd meet the quality filter alike.
    public static let metresPerHDOP = 19.0

    public init(path: String) {
        self.path = path
    }

    public func currentFix() async throws -> Fix {
        let path = self.path
        // File reading blocks; keep it off the cooperative pool.
        return try await BlockingCall.run("enlog.nmea", onCancel: .wake {}) { _ in
            try NMEALogLocation(path: path).lastFix()
        }
    }

    public func lastFix() throws(LocationError) -> Fix {
        let text = try readLog()
        let log = NMEALog(text: text)
        if log.sentences == 0 && log.badChecksums == 0 { throw .nmeaLogHasNoSentences(path: path) }
        guard let last = log.epochs.last(where: \.isValidFix) else {
            throw .nmeaLogHasNoValidFix(path: path, sentences: log.sentences, badChecksums: log.badChecksums)
        }
        return try fix(from: last)
    }

    /// Every valid fix in the log, oldest first.
    public func fixes() throws(LocationError) -> [Fix] {
        let log = NMEALog(text: try readLog())
        var result: [Fix] = []
        for epoch in log.epochs where epoch.isValidFix {
            result.append(try fix(from: epoch))
        }
        return result
    }

    private func fix(from epoch: NMEALog.Epoch) throws(LocationError) -> Fix {
        guard let latitude = epoch.latitude, let longitude = epoch.longitude else {
            throw .nmeaLogHasNoValidFix(path: path, sentences: 0, badChecksums: 0)
        }
        guard let timestamp = epoch.timestamp else { throw .nmeaLogHasNoDate(path: path) }
        let accuracy = epoch.measuredHorizontalError ?? epoch.hdop.map { $0 * Self.metresPerHDOP }
        return try Fix(latitude: latitude, longitude: longitude,
                       altitude: epoch.isTwoDimensional ? nil : epoch.altitude,
                       horizontalAccuracy: accuracy, speed: epoch.speed, course: epoch.course,
                       timestamp: timestamp, source: .nmea)
    }

    private func readLog() throws(LocationError) -> String {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw .nmeaLogUnreadable(path: path, detail: String(cString: strerror(errno))) }
        defer { close(fd) }
        var info = stat()
        if fstat(fd, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR {
            throw .nmeaLogUnreadable(path: path, detail: "it is a directory")
        }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .nmeaLogUnreadable(path: path, detail: String(cString: strerror(errno)))
            }
            if count == 0 { break }
            data.append(contentsOf: buffer[0..<count])
        }
        if data.isEmpty { throw .nmeaLogEmpty(path: path) }
        // NMEA is ASCII; a stray non-UTF-8 byte only spoils its own sentence's checksum.
        return String(decoding: data, as: UTF8.self)
    }
}

/// The sentences of a log grouped into epochs (one receiver solution each).
struct NMEALog {
    struct Epoch {
        var timeOfDay: Int?            // milliseconds since UTC midnight
        var date: DateComponents?      // from RMC or ZDA
        var latitude: Double?
        var longitude: Double?
        var altitude: Double?
        var hdop: Double?
        var measuredHorizontalError: Double?
        var speed: Double?
        var course: Double?
        var saysValid = false
        var saysInvalid = false
        var isTwoDimensional = false
        var timestamp: Date?

        var isValidFix: Bool { saysValid && !saysInvalid && latitude != nil && longitude != nil }
    }

    private(set) var epochs: [Epoch] = []
    private(set) var sentences = 0
    private(set) var badChecksums = 0

    init(text: String) {
        var current: Epoch?
        func beginEpoch(at time: Int?) {
            if let time, let existing = current, existing.timeOfDay == nil || existing.timeOfDay == time {
                current?.timeOfDay = time
                return
            }
            if let existing = current { epochs.append(existing) }
            current = Epoch(timeOfDay: time)
        }

        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            guard line.hasPrefix("$") else { continue }
            guard let fields = Self.checkedFields(line) else {
                badChecksums += 1
                continue
            }
            sentences += 1
            let address = fields[0]
            guard address.count == 5 else { continue }
            let field = { (index: Int) -> Substring in index < fields.count ? fields[index] : "" }

            switch address.suffix(3) {
            case "GGA":
                beginEpoch(at: Self.timeOfDay(field(1)))
                let quality = Int(field(6)) ?? 0
                if quality > 0 { current?.saysValid = true } else { current?.saysInvalid = true }
                if let lat = Self.angle(field(2), hemisphere: field(3), degreeDigits: 2),
                   let lon = Self.angle(field(4), hemisphere: field(5), degreeDigits: 3) {
                    current?.latitude = lat
                    current?.longitude = lon
                }
                if let hdop = Double(field(8)) { current?.hdop = hdop }
                if let altitude = Double(field(9)), field(10) == "M" { current?.altitude = altitude }
            case "RMC":
                beginEpoch(at: Self.timeOfDay(field(1)))
                switch field(2) {
                case "A": current?.saysValid = true
                default: current?.saysInvalid = true
                }
                if current?.latitude == nil,
                   let lat = Self.angle(field(3), hemisphere: field(4), degreeDigits: 2),
                   let lon = Self.angle(field(5), hemisphere: field(6), degreeDigits: 3) {
                    current?.latitude = lat
                    current?.longitude = lon
                }
                if let knots = Double(field(7)) { current?.speed = knots * 1852.0 / 3600.0 }
                if let course = Double(field(8)) { current?.course = course }
                current?.date = Self.date(ddmmyy: field(9))
            case "GSA":
                // GSA carries no time: it belongs to the epoch being read.
                if current == nil { beginEpoch(at: nil) }
                switch field(2) {
                case "1": current?.saysInvalid = true
                case "2": current?.isTwoDimensional = true
                default: break
                }
                if let hdop = Double(field(16)) { current?.hdop = hdop }
            case "GST":
                beginEpoch(at: Self.timeOfDay(field(1)))
                if let latError = Double(field(6)), let lonError = Double(field(7)) {
                    current?.measuredHorizontalError = (latError * latError + lonError * lonError).squareRoot()
                }
            case "ZDA":
                beginEpoch(at: Self.timeOfDay(field(1)))
                if let day = Int(field(2)), let month = Int(field(3)), let year = Int(field(4)) {
                    current?.date = DateComponents(year: year, month: month, day: day)
                }
            default:
                continue
            }
        }
        if let last = current { epochs.append(last) }
        assignTimestamps()
    }

    /// Only RMC and ZDA carry a date; carry it to the epochs around them, rolling over at
    /// midnight when the time of day goes backwards.
    private mutating func assignTimestamps() {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        func midnight(_ components: DateComponents) -> Date? {
            calendar.date(from: DateComponents(year: components.year, month: components.month, day: components.day))
        }
        let dayLength = 86_400_000

        var dayStart: Date? = nil
        var previousTime: Int? = nil
        var leading: [Int] = []
        for index in epochs.indices {
            guard let time = epochs[index].timeOfDay else { continue }
            if let date = epochs[index].date, let start = midnight(date) {
                dayStart = start
            } else if let start = dayStart, let previous = previousTime, time < previous - dayLength / 2 {
                dayStart = start.addingTimeInterval(86_400)
            }
            previousTime = time
            if let start = dayStart {
                epochs[index].timestamp = start.addingTimeInterval(Double(time) / 1000)
            } else {
                leading.append(index)
            }
        }
        // Epochs before the first dated sentence take the first date seen.
        if let firstDated = epochs.first(where: { $0.timestamp != nil }), let firstTime = firstDated.timeOfDay,
           let firstStamp = firstDated.timestamp {
            let start = firstStamp.addingTimeInterval(-Double(firstTime) / 1000)
            for index in leading {
                guard let time = epochs[index].timeOfDay else { continue }
                let day = time > firstTime + dayLength / 2 ? start.addingTimeInterval(-86_400) : start
                epochs[index].timestamp = day.addingTimeInterval(Double(time) / 1000)
            }
        }
    }

    /// The comma-separated fields between `$` and `*`, or `nil` when the checksum is missing or wrong.
    static func checkedFields(_ line: String) -> [Substring]? {
        let bytes = Array(line.utf8)
        guard let star = bytes.lastIndex(of: UInt8(ascii: "*")), star + 3 == bytes.count,
              let expected = UInt8(String(decoding: bytes[(star + 1)...], as: UTF8.self), radix: 16)
        else { return nil }
        let computed = bytes[1..<star].reduce(0, ^)
        guard computed == expected else { return nil }
        let body = String(decoding: bytes[1..<star], as: UTF8.self)
        return body.split(separator: ",", omittingEmptySubsequences: false)
    }

    static func timeOfDay(_ field: Substring) -> Int? {
        guard field.count >= 6, let hours = Int(field.prefix(2)), let minutes = Int(field.dropFirst(2).prefix(2)),
              let seconds = Double(field.dropFirst(4)), hours < 24, minutes < 60, seconds < 61
        else { return nil }
        return (hours * 3600 + minutes * 60) * 1000 + Int((seconds * 1000).rounded())
    }

    static func date(ddmmyy field: Substring) -> DateComponents? {
        guard field.count == 6, let day = Int(field.prefix(2)), let month = Int(field.dropFirst(2).prefix(2)),
              let year = Int(field.suffix(2)), (1...31).contains(day), (1...12).contains(month)
        else { return nil }
        // Two-digit years: GPS receivers postdate 1980, so 80...99 are the 1900s.
        return DateComponents(year: year >= 80 ? 1900 + year : 2000 + year, month: month, day: day)
    }

    /// `ddmm.mmmm` / `dddmm.mmmm` plus hemisphere to signed decimal degrees.
    static func angle(_ field: Substring, hemisphere: Substring, degreeDigits: Int) -> Double? {
        guard field.count > degreeDigits + 2, let degrees = Double(field.prefix(degreeDigits)),
              let minutes = Double(field.dropFirst(degreeDigits)), minutes >= 0, minutes < 60
        else { return nil }
        let value = degrees + minutes / 60
        switch hemisphere {
        case "N", "E": return value
        case "S", "W": return -value
        default: return nil
        }
    }
}
