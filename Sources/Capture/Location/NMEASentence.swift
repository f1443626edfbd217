import Foundation
import Support
import Configuration
import Network

/// One line of an NMEA 0183 log, classified the way gpsd's packet lexer sees it.
enum NMEALine: Equatable, Sendable {
    /// Empty, or a `#` comment (gpsd's regression logs annotate captures that way).
    case blank
    /// Text with no sentence in it: a fragment, or junk that only looked like one.
    case noise
    /// A line that starts like a sentence but whose checksum is wrong or missing.
    case badChecksum
    case sentence(NMEASentence)

    /// gpsd's lexer restarts at every `$` or `!`, so the sentence is what follows the last one
    /// (`$$GNRMC,…` is one RMC after a stray `$`). A line that begins with a sentence start and
    /// fails its checksum is a damaged sentence; one that only contains a `$` somewhere after other
    /// text is noise, as it is to gpsd.
    init(_ bytes: ArraySlice<UInt8>) {
        let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }),
              let last = bytes.lastIndex(where: { !isSpace($0) })
        else { self = .blank; return }
        let text = bytes[first...last]
        if text.first == UInt8(ascii: "#") { self = .blank; return }
        let isStart = { (byte: UInt8) in byte == UInt8(ascii: "$") || byte == UInt8(ascii: "!") }
        guard let start = text.lastIndex(where: isStart) else { self = .noise; return }
        if let sentence = NMEASentence(checking: text[start...]) {
            self = .sentence(sentence)
        } else {
            self = text[..<start].allSatisfy(isStart) ? .badChecksum : .noise
        }
    }
}

/// A sentence whose checksum matched: its address (`GPGGA`, `PERC`, `AIVDM`) and fields.
struct NMEASentence: Equatable, Sendable {
    /// The comma-separated fields between the start character and `*`; `fields[0]` is the address.
    let fields: [Substring]

    var address: Substring { fields[0] }

    /// Empty when the sentence is shorter: receivers leave trailing fields out.
    subscript(_ index: Int) -> Substring { index < fields.count ? fields[index] : "" }

    /// `GGA` for `$GNGGA`, `$ECGLL`'s `GLL`…: the type of a standard sentence of any talker.
    /// Proprietary sentences (`$P…`, e.g. Garmin's `$PGRMC`) have none.
    var standardType: Substring? {
        address.count == 5 && !address.hasPrefix("P") ? address.suffix(3) : nil
    }

    /// `text` from its `$` or `!` to the two hex digits after `*`; `nil` when the checksum is
    /// missing or wrong.
    init?(checking text: ArraySlice<UInt8>) {
        guard let fields = Self.checkedFields(text) else { return nil }
        self.fields = fields
    }

    static func checkedFields(_ line: String) -> [Substring]? {
        checkedFields(ArraySlice(line.utf8))
    }

    static func checkedFields(_ bytes: ArraySlice<UInt8>) -> [Substring]? {
        guard bytes.count >= 4, let star = bytes.lastIndex(of: UInt8(ascii: "*")), star + 3 == bytes.endIndex,
              let high = hexValue(bytes[star + 1]), let low = hexValue(bytes[star + 2])
        else { return nil }
        let body = bytes[(bytes.startIndex + 1)..<star]
        guard !body.isEmpty, body.reduce(0, ^) == high << 4 | low else { return nil }
        return String(decoding: body, as: UTF8.self).split(separator: ",", omittingEmptySubsequences: false)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        default: return nil
        }
    }
}

/// What one sentence says, decoded and range-checked.
enum NMEAReport: Equatable, Sendable {
    /// GGA, RMC, GLL or GNS: a position (or the lack of one) at a time of day.
    case position(NMEAPositionReport)
    /// GSA: the fix dimension and dilution of precision; carries no time.
    case dilution(mode: Int?, hdop: Double?)
    /// GST: the measured horizontal error at a time of day.
    case accuracy(timeOfDay: Int, metres: Double)
    /// ZDA: the date at a time of day.
    case date(timeOfDay: Int?, date: DateComponents)
    /// A sentence enlog does not read (GSV, VTG, proprietary ones, AIS…).
    case unread
    /// A sentence whose checksum matched but whose content is impossible, with the reason.
    case invalid(String)

    init(_ sentence: NMEASentence) {
        do throws(NMEAFieldError) {
            switch sentence.standardType {
            case "GGA": self = .position(try .gga(sentence))
            case "RMC": self = .position(try .rmc(sentence))
            case "GLL": self = .position(try .gll(sentence))
            case "GNS": self = .position(try .gns(sentence))
            case "GSA":
                self = .dilution(mode: Int(sentence[2]), hdop: NMEAField.positive(sentence[16]))
            case "GST":
                guard let time = try NMEAField.timeOfDay(sentence[1]),
                      let latError = NMEAField.positive(sentence[6]), let lonError = NMEAField.positive(sentence[7])
                else { self = .unread; return }
                self = .accuracy(timeOfDay: time, metres: (latError * latError + lonError * lonError).squareRoot())
            case "ZDA":
                let time = try NMEAField.timeOfDay(sentence[1])
                guard let date = NMEAField.date(day: sentence[2], month: sentence[3], year: sentence[4])
                else { self = .unread; return }
                self = .date(timeOfDay: time, date: date)
            default:
                self = .unread
            }
        } catch {
            self = .invalid(error.description)
        }
    }
}

/// A position sentence's content, with its own verdict on its cycle.
struct NMEAPositionReport: Equatable, Sendable {
    enum Verdict: Equatable, Sendable {
        case fix
        case noFix
        /// Claims a fix it cannot have (GGA quality 1 from 0 satellites): neither a fix nor a
        /// denial of the fix another sentence of the cycle reports, as in gpsd.
        case unfounded
    }

    var timeOfDay: Int?
    var latitude: Double?
    var longitude: Double?
    var verdict: Verdict
    var altitude: Double?
    var hdop: Double?
    var speed: Double?
    var course: Double?
    var date: DateComponents?

    /// GGA quality 1–6 is a fix (GPS, DGPS, PPS, RTK fixed and float, dead reckoning); 7 (manual
    /// input) and 8 (simulator) are not measured positions. A fix from 0 satellites is unfounded.
    static func gga(_ s: NMEASentence) throws(NMEAFieldError) -> Self {
        let quality = Int(s[6]) ?? 0
        var report = try Self(time: s[1], latitude: s[2], s[3], longitude: s[4], s[5],
                              hasFix: (1...6).contains(quality), satellites: s[7])
        report.hdop = NMEAField.positive(s[8])
        if s[10] == "M" { report.altitude = NMEAField.number(s[9]) }
        return report
    }

    /// RMC status `A` is a fix unless the NMEA 2.3 mode indicator says `N` (not valid). The
    /// NMEA 4.1 navigational status (field 13) is about safety margins, not the fix: gpsd ignores it.
    static func rmc(_ s: NMEASentence) throws(NMEAFieldError) -> Self {
        var report = try Self(time: s[1], latitude: s[3], s[4], longitude: s[5], s[6],
                              hasFix: s[2] == "A" && s[12] != "N")
        report.speed = NMEAField.number(s[7]).map { $0 * 1852.0 / 3600.0 }
        report.course = NMEAField.number(s[8])
        report.date = NMEAField.date(ddmmyy: s[9])
        return report
    }

    /// GLL: latitude, longitude, time, status `A`/`V`, and (NMEA 2.3) a mode indicator.
    static func gll(_ s: NMEASentence) throws(NMEAFieldError) -> Self {
        try Self(time: s[5], latitude: s[1], s[2], longitude: s[3], s[4], hasFix: s[6] == "A" && s[7] != "N")
    }

    /// GNS has one mode character per constellation (`AAN`: GPS and GLONASS autonomous, Galileo
    /// not used); any constellation with a solution makes the fix.
    static func gns(_ s: NMEASentence) throws(NMEAFieldError) -> Self {
        let solving = s[6].contains { "ADPRFE".contains($0) }
        var report = try Self(time: s[1], latitude: s[2], s[3], longitude: s[4], s[5],
                              hasFix: solving, satellites: s[7])
        report.hdop = NMEAField.positive(s[8])
        report.altitude = NMEAField.number(s[9])
        return report
    }

    private init(time: Substring, latitude: Substring, _ north: Substring, longitude: Substring, _ east: Substring,
                 hasFix: Bool, satellites: Substring = "") throws(NMEAFieldError) {
        timeOfDay = try NMEAField.timeOfDay(time)
        let lat = try NMEAField.angle(latitude, hemisphere: north, degreeDigits: 2, name: "latitude")
        let lon = try NMEAField.angle(longitude, hemisphere: east, degreeDigits: 3, name: "longitude")
        if let lat, let lon {
            self.latitude = lat
            self.longitude = lon
        }
        // A fix without a position is no fix.
        if !hasFix || lat == nil || lon == nil {
            verdict = .noFix
        } else {
            verdict = Int(satellites) == 0 ? .unfounded : .fix
        }
    }
}

/// Why a sentence with a valid checksum was not believed.
struct NMEAFieldError: Error, CustomStringConvertible {
    let description: String
}

/// Decoders for NMEA field formats. Empty fields decode to `nil`; a present field that cannot be
/// what it claims throws, so the sentence is skipped rather than half-trusted.
enum NMEAField {
    static func number(_ field: Substring) -> Double? {
        guard !field.isEmpty, let value = Double(field), value.isFinite else { return nil }
        return value
    }

    static func positive(_ field: Substring) -> Double? {
        number(field).flatMap { $0 >= 0 ? $0 : nil }
    }

    /// `hhmmss[.sss]` to milliseconds since UTC midnight.
    static func timeOfDay(_ field: Substring) throws(NMEAFieldError) -> Int? {
        if field.isEmpty { return nil }
        guard field.count >= 6, field.prefix(6).allSatisfy(\.isASCIIDigit),
              let hours = Int(field.prefix(2)), let minutes = Int(field.dropFirst(2).prefix(2)),
              let seconds = Double(field.dropFirst(4)),
              Fix.Limits.isTimeOfDay(hour: Double(hours), minute: Double(minutes), second: seconds)
        else { throw NMEAFieldError(description: "time '\(field)' is not hhmmss") }
        return (hours * 3600 + minutes * 60) * 1000 + Int((seconds * 1000).rounded())
    }

    /// `ddmmyy`; anything but six digits naming a real day (a year of `-1`, a 31 February) is no date.
    static func date(ddmmyy field: Substring) -> DateComponents? {
        guard field.count == 6, field.allSatisfy(\.isASCIIDigit), let year = Int(field.suffix(2)) else { return nil }
        // Two-digit years: GPS receivers postdate 1980, so 80...99 are the 1900s.
        return date(day: field.prefix(2), month: field.dropFirst(2).prefix(2),
                    year: "\(year >= 80 ? 1900 + year : 2000 + year)")
    }

    static func date(day: Substring, month: Substring, year: Substring) -> DateComponents? {
        guard [day, month, year].allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCIIDigit) }),
              let day = Int(day), let month = Int(month), let year = Int(year), year >= 1980, year < 10_000
        else { return nil }
        let components = DateComponents(year: year, month: month, day: day)
        guard let date = utcCalendar.date(from: components),
              utcCalendar.dateComponents([.year, .month, .day], from: date) == components
        else { return nil }
        return components
    }

    /// `ddmm.mmmm` / `dddmm.mmmm` plus hemisphere to signed decimal degrees, within ±90 / ±180.
    static func angle(_ field: Substring, hemisphere: Substring, degreeDigits: Int,
                      name: String) throws(NMEAFieldError) -> Double? {
        if field.isEmpty && hemisphere.isEmpty { return nil }
        let limit = degreeDigits == 2 ? 90.0 : 180.0
        guard field.count > degreeDigits + 2, field.prefix(degreeDigits).allSatisfy(\.isASCIIDigit),
              let degrees = Double(field.prefix(degreeDigits)),
              let minutes = Double(field.dropFirst(degreeDigits)), minutes >= 0, minutes < 60,
              degrees + minutes / 60 <= limit,
              (degreeDigits == 2 ? ["N", "S"] : ["E", "W"]).contains(hemisphere)
        else { throw NMEAFieldError(description: "\(name) '\(field),\(hemisphere)' is not a valid angle") }
        let value = degrees + minutes / 60
        return hemisphere == "S" || hemisphere == "W" ? -value : value
    }

    static let utcCalendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()
}

private extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
