import Foundation
import Support
import Configuration
import Network

/// CSV whose header names a latitude, a longitude and a time column, as trackers and converters
/// write it: separated by commas, semicolons (then a decimal comma is allowed) or tabs, headers
/// quoted or not and in any case; `latitudeE7`/`longitudeE7` integers, `52.52N`/`13.4E`
/// hemisphere suffixes, a WKT `POINT (lon lat)` column (database dumps), times in ISO 8601,
/// with a space before the zone, or seconds or milliseconds since 1970. A row whose `Type` is
/// `Visit` with an end time (Google's Timeline CSV) is a stay as well as a point.
package struct CSVHistoryReader: HistoryReader {
    package static let format = HistoryFormat.csv

    struct Columns {
        var separator: UInt8
        var latitude: Int?
        var longitude: Int?
        var point: Int?
        var time: Int
        var e7 = false
        var altitude: Int?
        var accuracy: Int?
        var speed: Int?
        var course: Int?
        var device: Int?
        var type: Int?
        var end: Int?
        var name: Int?
        var address: Int?
        var placeId: Int?
    }

    private var lines = HistoryLines(quotedFields: true)
    private var columns: Columns?

    package init() {}

    package static func recognizes(prefix: ArraySlice<UInt8>) -> Bool {
        guard let line = HistoryLines.firstLine(prefix) else { return false }
        return columns(Array(line.utf8)) != nil
    }

    static func columns(_ header: [UInt8]) -> Columns? {
        let separator = [UInt8(ascii: ","), UInt8(ascii: ";"), 0x09].max { a, b in
            header.count(where: { $0 == a }) < header.count(where: { $0 == b })
        }!
        let names = fields(header[...], separator: separator).map { String(HistoryPoints.trimmed(Substring($0.lowercased()))) }
        func index(_ candidates: [String]) -> Int? {
            for candidate in candidates { if let found = names.firstIndex(of: candidate) { return found } }
            return nil
        }
        func index(prefix: String) -> Int? { names.firstIndex { $0.hasPrefix(prefix) } }
        guard let time = index(["time", "timestamp", "datetime", "date time", "date_time", "utc", "start time", "starttime",
                                "tst", "recorded_at", "recordedat", "gps time", "created_at", "date"]) else { return nil }
        var columns = Columns(separator: separator, time: time)
        if let latitude = index(["latitudee7"]), let longitude = index(["longitudee7"]) {
            columns.latitude = latitude
            columns.longitude = longitude
            columns.e7 = true
        } else if let latitude = index(["lat", "latitude", "lat_deg"]) ?? index(prefix: "latitude"),
                  let longitude = index(["lon", "lng", "long", "longitude", "lon_deg"]) ?? index(prefix: "longitude") {
            columns.latitude = latitude
            columns.longitude = longitude
        } else if let point = index(["geom", "geometry", "wkt", "location"]) {
            columns.point = point
        } else {
            return nil
        }
        columns.altitude = index(["altitude", "elevation", "ele", "alt", "height"])
        columns.accuracy = index(["accuracy", "acc", "accuracy_meters", "hdop_m"])
        columns.speed = index(["speed", "velocity", "vel"])
        columns.course = index(["bearing", "course", "heading", "cog"])
        columns.device = index(["deviceid", "device", "device_id", "tid"])
        columns.type = index(["type"])
        columns.end = index(["end time", "endtime", "end"])
        columns.name = index(["name"])
        columns.address = index(["address"])
        columns.placeId = index(["placeid", "place_id"])
        return columns
    }

    /// One line's fields: separated by `separator`, a field in double quotes may hold it ("" is a quote).
    static func fields(_ line: ArraySlice<UInt8>, separator: UInt8) -> [String] {
        var fields: [String] = []
        var field: [UInt8] = []
        var quoted = false
        var index = line.startIndex
        while index < line.endIndex {
            let byte = line[index]
            if quoted {
                if byte == 0x22 {
                    if index + 1 < line.endIndex, line[index + 1] == 0x22 { field.append(0x22); index += 1 } else { quoted = false }
                } else {
                    field.append(byte)
                }
            } else if byte == 0x22 {
                quoted = true
            } else if byte == separator {
                fields.append(String(decoding: field, as: UTF8.self))
                field.removeAll(keepingCapacity: true)
            } else {
                field.append(byte)
            }
            index += 1
        }
        fields.append(String(decoding: field, as: UTF8.self))
        return fields
    }

    package mutating func feed(_ chunk: ArraySlice<UInt8>, emit: (HistoryItem) throws -> Void) throws {
        var columns = self.columns
        defer { self.columns = columns }
        try lines.feed(chunk) { line, number in try Self.read(line, number, &columns, emit) }
    }

    package mutating func finish(emit: (HistoryItem) throws -> Void) throws {
        var columns = self.columns
        try lines.finish { line, number in try Self.read(line, number, &columns, emit) }
        if columns == nil { throw HistoryFileError("no header line naming latitude, longitude and time columns") }
    }

    private static func read(_ line: ArraySlice<UInt8>, _ number: Int, _ columns: inout Columns?,
                             _ emit: (HistoryItem) throws -> Void) throws {
        guard line.contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != UInt8(ascii: ",") && $0 != UInt8(ascii: ";") }) else { return }
        guard let known = columns else {
            guard let found = Self.columns(Array(line)) else {
                throw HistoryFileError("the header names no latitude, longitude and time columns", at: .line(number))
            }
            columns = found
            return
        }
        for item in row(fields(line, separator: known.separator), known) { try emit(item) }
    }

    private static func row(_ fields: [String], _ columns: Columns) -> [HistoryItem] {
        func value(_ column: Int?) -> String? {
            guard let column, column < fields.count else { return nil }
            let text = String(HistoryPoints.trimmed(Substring(fields[column])))
            return text.isEmpty ? nil : text
        }
        func number(_ column: Int?) -> Double? {
            guard var text = value(column) else { return nil }
            if columns.separator == UInt8(ascii: ";") { text = text.replacingOccurrences(of: ",", with: ".") }
            return HistoryPoints.number(text)
        }
        /// "52.52N", "13.4W": the hemisphere's sign.
        func coordinate(_ column: Int?, _ negative: Character, _ positive: Character) -> Double? {
            guard var text = value(column) else { return nil }
            var sign = 1.0
            if let last = text.last?.uppercased().first, last == negative || last == positive {
                sign = last == negative ? -1 : 1
                text.removeLast()
            }
            if columns.separator == UInt8(ascii: ";") { text = text.replacingOccurrences(of: ",", with: ".") }
            return HistoryPoints.number(text).map { $0 * sign * (columns.e7 ? 1e-7 : 1) }
        }
        var latitude = coordinate(columns.latitude, "S", "N")
        var longitude = coordinate(columns.longitude, "W", "E")
        if let wkt = value(columns.point) {
            // POINT (lon lat)
            let numbers = wkt.split { $0 == "(" || $0 == ")" || $0 == " " }.dropFirst().compactMap { HistoryPoints.number($0) }
            if numbers.count >= 2 { (longitude, latitude) = (numbers[0], numbers[1]) }
        }
        let stated = value(columns.time).flatMap(HistoryTimes.parseStated)
        let time = stated?.date
        var items = [HistoryPoints.item(latitude: latitude, longitude: longitude, altitude: number(columns.altitude),
                                        accuracy: number(columns.accuracy), speed: number(columns.speed),
                                        course: number(columns.course), time: time, timeGiven: value(columns.time) != nil,
                                        device: value(columns.device), utcOffset: stated?.utcOffset)]
        if value(columns.type)?.lowercased() == "visit", let time, let end = value(columns.end).flatMap(HistoryTimes.parse),
           case .point(let point) = items[0] {
            items.append(.visit(HistoryVisit(start: time, end: end, latitude: point.fix.latitude, longitude: point.fix.longitude,
                                             name: value(columns.name), address: value(columns.address), placeId: value(columns.placeId),
                                             utcOffset: stated?.utcOffset)))
        }
        return items
    }
}
