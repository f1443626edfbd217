import Foundation
import Support
import Configuration
import Network

/// KML, streamed: Google Earth's `gx:Track` and KML 2.3's `Track` (a list of `when` and a list of
/// `coord`, paired in order; an empty `coord` is a pause and is skipped), and Placemarks whose
/// Points carry a `TimeStamp` (with `ExtendedData` speed and accuracy when given). A Placemark
/// with a `TimeSpan` is a stay (a visit from begin to end); a LineString has no times of its own,
/// so its coordinates are counted as skipped, not invented. Google Maps' day export writes each
/// trip as a Placemark with a `TimeSpan`, a LineString and `ExtendedData` `Category` ("Driving",
/// "Walking") and `Distance` (metres): that becomes a `HistorySegment` with that mode and distance,
/// the line its path (its positions still have no times of their own).
package struct KMLHistoryReader: XMLHistoryReader {
    package static let format = HistoryFormat.kml
    package static let rootElement = "kml"

    package let stream = XMLStream()
    private var machine = XMLPointReaderStateMachine(.init(
        root: rootElement, formatName: "KML", records: ["Placemark": 0, "Track": 1],
        destination: { name, parent in
            switch (name, parent?.name) {
            case ("when", "TimeStamp"): return .value(record: "Placemark", key: "time")
            case ("begin", "TimeSpan"), ("end", "TimeSpan"), ("name", "Placemark"): return .value(record: "Placemark", key: name)
            case ("value", "Data"): return parent?.attributes["name"].map { .value(record: "Placemark", key: "data " + $0) }
            case ("coordinates", "Point"): return .value(record: "Placemark", key: "points")
            case ("when", "Track"), ("coord", "Track"): return .value(record: "Track", key: name)
            // LineString, LinearRing: positions without times of their own.
            case ("coordinates", _): return .reader
            default: return nil
            }
        }))

    package init() {}

    package mutating func handle(_ event: XMLStream.Event, _ emit: (HistoryItem) throws -> Void) throws {
        switch machine.handle(event) {
        case .none: break
        case .fail(let error): throw error
        case let .text(_, parent, text):
            for position in text.split(whereSeparator: \.isWhitespace) {
                try emit(.skipped(.noTime))
                if parent == "LineString" {
                    machine.append(String(position), key: "path", toRecord: "Placemark", limit: HistorySegment.waypointLimit)
                }
            }
        case .closed(let record) where record.element.name == "Track":
            try emitTrack(times: record.all("when"), coordinates: record.all("coord"), emit)
        case .closed(let record):
            try emitPlacemark(Placemark(record), emit)
        }
    }

    /// What a Placemark's record holds, by name.
    private struct Placemark {
        var time: String?
        var begin: String?
        var end: String?
        var name: String?
        var points: [String]
        /// The LineString's positions, kept up to `HistorySegment.waypointLimit` for a trip's path.
        var path: [String]
        var data: [String: String] = [:]

        init(_ record: XMLPointReaderStateMachine.Record) {
            time = record.last("time")
            begin = record.last("begin")
            end = record.last("end")
            name = record.last("name")
            points = record.all("points")
            path = record.all("path")
            for (key, values) in record.values where key.hasPrefix("data ") { data[String(key.dropFirst(5))] = values.last }
        }
    }

    /// A Placemark that is a trip as Google Maps' day export writes it: a `TimeSpan`, a LineString
    /// and a `Category` naming how (an empty one is a visit's). nil for anything else.
    private static func trip(_ placemark: Placemark) -> HistorySegment? {
        guard placemark.time == nil, !placemark.path.isEmpty,
              let word = placemark.data["Category"].map({ $0.trimmingCharacters(in: .whitespacesAndNewlines) }),
              !word.isEmpty, word.utf8.count <= 64,
              let begin = placemark.begin.flatMap(HistoryTimes.parse), let end = placemark.end.flatMap(HistoryTimes.parse),
              end >= begin, Fix.Limits.time.contains(begin), Fix.Limits.time.contains(end) else { return nil }
        let path = placemark.path.compactMap(position).filter {
            Fix.Limits.latitude.contains($0.latitude) && Fix.Limits.longitude.contains($0.longitude)
        }.map { HistorySegment.Waypoint(latitude: $0.latitude, longitude: $0.longitude) }
        let distance = placemark.data["Distance"].flatMap(HistoryPoints.number).flatMap {
            HistorySegment.distanceLimit.contains($0) ? $0 : nil
        }
        return HistorySegment(start: begin, end: end, startPoint: path.first, endPoint: path.count > 1 ? path.last : nil,
                              distance: distance, mode: word, waypoints: path.count > 2 ? Array(path.dropFirst().dropLast()) : [])
    }

    /// "lon lat alt" (Track) or "lon,lat,alt" (coordinates).
    private static func position(_ text: String) -> (latitude: Double, longitude: Double, altitude: Double?)? {
        let parts = text.split { $0 == "," || $0 == " " || $0.isWhitespace }
        guard parts.count >= 2, let longitude = HistoryPoints.number(parts[0]), let latitude = HistoryPoints.number(parts[1]) else { return nil }
        return (latitude, longitude, parts.count > 2 ? HistoryPoints.number(parts[2]) : nil)
    }

    private func emitTrack(times: [String], coordinates: [String], _ emit: (HistoryItem) throws -> Void) throws {
        for (index, timeText) in times.enumerated() {
            guard index < coordinates.count, let position = Self.position(coordinates[index]) else {
                try emit(.skipped(.badPosition))
                continue
            }
            let time = HistoryTimes.parseStated(timeText)
            try emit(HistoryPoints.item(latitude: position.latitude, longitude: position.longitude, altitude: position.altitude,
                                        time: time?.date, timeGiven: true, utcOffset: time?.utcOffset))
        }
        // Positions beyond the last time have none.
        for _ in times.count..<max(times.count, coordinates.count) { try emit(.skipped(.noTime)) }
    }

    private func emitPlacemark(_ placemark: Placemark, _ emit: (HistoryItem) throws -> Void) throws {
        if let segment = Self.trip(placemark) { try emit(.segment(segment)) }
        if placemark.time == nil, let begin = placemark.begin.flatMap(HistoryTimes.parseStated),
           let end = placemark.end.flatMap(HistoryTimes.parse) ?? Optional(begin.date),
           placemark.points.count == 1, let position = Self.position(placemark.points[0]),
           Fix.Limits.latitude.contains(position.latitude), Fix.Limits.longitude.contains(position.longitude) {
            try emit(.visit(HistoryVisit(start: begin.date, end: end, latitude: position.latitude, longitude: position.longitude,
                                         name: placemark.name, utcOffset: begin.utcOffset)))
            return
        }
        let time = placemark.time.flatMap(HistoryTimes.parseStated)
        for point in placemark.points {
            guard let position = Self.position(point) else {
                try emit(.skipped(.badPosition))
                continue
            }
            try emit(HistoryPoints.item(latitude: position.latitude, longitude: position.longitude, altitude: position.altitude,
                                        accuracy: placemark.data["accuracy"].flatMap(HistoryPoints.number),
                                        speed: placemark.data["speed"].flatMap(HistoryPoints.number),
                                        time: time?.date, timeGiven: placemark.time != nil, utcOffset: time?.utcOffset))
        }
    }
}
