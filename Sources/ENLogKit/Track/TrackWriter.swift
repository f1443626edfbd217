import Foundation

/// The formats `enlog history --format` writes and the digest attaches.
public enum TrackFormat: String, Sendable, CaseIterable {
    /// GPX 1.1: one track, one segment, points in time order (what GPS software reads).
    case gpx
    /// GeoJSON (RFC 7946): a FeatureCollection of Point features, one per fix.
    case geojson
    /// CSV (RFC 4180) with a header row.
    case csv

    public var mimeType: String {
        switch self {
        case .gpx: return "application/gpx+xml"
        case .geojson: return "application/geo+json"
        case .csv: return "text/csv"
        }
    }
}

/// Writes fixes as GPX, GeoJSON or CSV. Text only, deterministic (same fixes, same bytes), with
/// UTC times to the millisecond the history keeps and coordinates to 1e-9 degree, so that what
/// is read back is the fix that was written.
public enum TrackWriter {
    public static func write(_ fixes: [Fix], as format: TrackFormat, name: String = "enlog") -> String {
        switch format {
        case .gpx: return gpx(fixes, name: name)
        case .geojson: return geoJSON(fixes)
        case .csv: return csv(fixes)
        }
    }

    /// GPX 1.1. Per point: `ele`, `time`, `src` (gpsd, nmea, manual, gpx) and `hdop`, derived
    /// from the accuracy as NMEA logs are read (19 m per unit), so an import gives the accuracy back.
    /// Speed and course have no element in GPX 1.1 and are left out.
    public static func gpx(_ fixes: [Fix], name: String) -> String {
        var out = """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="enlog \(ENLogVersion.current)" xmlns="http://www.topografix.com/GPX/1/1" \
            xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" \
            xsi:schemaLocation="http://www.topografix.com/GPX/1/1 http://www.topografix.com/GPX/1/1/gpx.xsd">
            <metadata><name>\(escaped(name))</name></metadata>
            <trk><name>\(escaped(name))</name><trkseg>

            """
        for fix in fixes {
            out += "<trkpt lat=\"\(decimal(fix.latitude))\" lon=\"\(decimal(fix.longitude))\">"
            if let altitude = fix.altitude { out += "<ele>\(decimal(altitude))</ele>" }
            out += "<time>\(TrackTime.string(fix.timestamp))</time><src>\(fix.source.rawValue)</src>"
            if let accuracy = fix.horizontalAccuracy { out += "<hdop>\(decimal(accuracy / NMEALogLocation.metresPerHDOP))</hdop>" }
            out += "</trkpt>\n"
        }
        out += "</trkseg></trk>\n</gpx>\n"
        return out
    }

    private struct Feature: Encodable {
        struct Geometry: Encodable {
            let type = "Point"
            /// RFC 7946: longitude first.
            let coordinates: [Double]
        }
        struct Properties: Encodable {
            let time: String
            let accuracy: Double?
            let speed: Double?
            let course: Double?
            let source: String
        }
        let type = "Feature"
        let geometry: Geometry
        let properties: Properties
    }

    private struct Collection: Encodable {
        let type = "FeatureCollection"
        let features: [Feature]
    }

    public static func geoJSON(_ fixes: [Fix]) -> String {
        let features = fixes.map { fix in
            Feature(geometry: .init(coordinates: [fix.longitude, fix.latitude] + (fix.altitude.map { [$0] } ?? [])),
                    properties: .init(time: TrackTime.string(fix.timestamp), accuracy: fix.horizontalAccuracy,
                                      speed: fix.speed, course: fix.course, source: fix.source.rawValue))
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Every value is a finite number or a string: encoding cannot fail.
        let data = (try? encoder.encode(Collection(features: features))) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    public static let csvHeader = "time,latitude,longitude,altitude,accuracy,speed,course,source"

    /// Empty fields for unknown values; no field needs quoting (numbers, ISO times, source names).
    public static func csv(_ fixes: [Fix]) -> String {
        var out = csvHeader + "\r\n"
        for fix in fixes {
            let fields = [TrackTime.string(fix.timestamp), decimal(fix.latitude), decimal(fix.longitude),
                          fix.altitude.map(decimal) ?? "", fix.horizontalAccuracy.map(decimal) ?? "",
                          fix.speed.map(decimal) ?? "", fix.course.map(decimal) ?? "", fix.source.rawValue]
            out += fields.joined(separator: ",") + "\r\n"
        }
        return out
    }

    /// Plain decimal notation (xsd:decimal has no exponent), at most nine decimals, no trailing zeros.
    static func decimal(_ value: Double) -> String {
        var text = String(format: "%.9f", value)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text == "-0" ? "0" : text
    }

    static func escaped(_ text: String) -> String {
        var out = ""
        for character in ENMLCharacters.cleaned(text) {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(character)
            }
        }
        return out
    }
}

/// Times in track files: ISO 8601 in UTC, milliseconds when there are any (`InstantText`, the one
/// printer of instants), and read by hand (proleptic Gregorian day arithmetic) rather than
/// through a formatter per point: a day at 1 Hz is 86,400 of them, and Foundation's formatters
/// cost far more than the XML around them.
enum TrackTime {
    static func string(_ date: Date) -> String { InstantText.string(date, milliseconds: true) }

    /// ISO 8601 date and time with a zone (`Z` or ±hh:mm / ±hhmm), fractional seconds optional
    /// (any number of digits; kept to the millisecond): `2026-11-22T08:00:05.5+01:00`.
    static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8.drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D })
        var end = bytes.count
        while end > 0, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[end - 1]) { end -= 1 }
        var index = 0
        func number(_ digits: Int) -> Int64? {
            guard index + digits <= end else { return nil }
            var value: Int64 = 0
            for byte in bytes[index..<index + digits] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - 0x30)
            }
            index += digits
            return value
        }
        func expect(_ byte: UInt8) -> Bool {
            guard index < end, bytes[index] == byte else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect(0x2D), let month = number(2), expect(0x2D), let day = number(2),
              index < end, bytes[index] == 0x54 || bytes[index] == 0x74 else { return nil }
        index += 1
        guard let hour = number(2), expect(0x3A), let minute = number(2), expect(0x3A), let second = number(2),
              (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
              Fix.Limits.isTimeOfDay(hour: Double(hour), minute: Double(minute), second: Double(second)) else { return nil }
        var milliseconds: Int64 = 0
        if expect(0x2E) {
            var scale: Int64 = 100, digits = 0
            while index < end, (0x30...0x39).contains(bytes[index]) {
                milliseconds += Int64(bytes[index] - 0x30) * scale
                scale /= 10
                index += 1
                digits += 1
            }
            guard digits > 0 else { return nil }
        }
        var offset: Int64 = 0
        guard index < end else { return nil }
        switch bytes[index] {
        case 0x5A, 0x7A:   // Z
            index += 1
        case 0x2B, 0x2D:   // + -
            let sign: Int64 = bytes[index] == 0x2D ? -1 : 1
            index += 1
            guard let hours = number(2) else { return nil }
            _ = expect(0x3A)
            guard let minutes = number(2), hours < 24, minutes < 60 else { return nil }
            offset = sign * (hours * 3600 + minutes * 60)
        default:
            return nil
        }
        guard index == end else { return nil }
        let seconds = days(fromYear: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: Double(seconds) + Double(milliseconds) / 1000)
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return InstantText.isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    static func days(fromYear year: Int64, month: Int64, day: Int64) -> Int64 {
        InstantText.days(fromYear: year, month: month, day: day)
    }
}
