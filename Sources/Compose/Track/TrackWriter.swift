import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Capture

/// The formats `enlog history --format` writes and the digest attaches.
package enum TrackFormat: String, Sendable, CaseIterable {
    /// GPX 1.1: one track, one segment, points in time order (what GPS software reads).
    case gpx
    /// GeoJSON (RFC 7946): a FeatureCollection of Point features, one per fix.
    case geojson
    /// CSV (RFC 4180) with a header row.
    case csv

    package var mimeType: String {
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
package enum TrackWriter {
    package static func write(_ fixes: [Fix], as format: TrackFormat, name: String = "enlog") -> String {
        switch format {
        case .gpx: return gpx(fixes, name: name)
        case .geojson: return geoJSON(fixes)
        case .csv: return csv(fixes)
        }
    }

    /// GPX 1.1. Per point: `ele`, `time`, `src` (gpsd, nmea, manual, gpx) and `hdop`, derived
    /// from the accuracy as NMEA logs are read (19 m per unit), so an import gives the accuracy back.
    /// Speed and course have no element in GPX 1.1 and are left out.
    package static func gpx(_ fixes: [Fix], name: String) -> String {
        var out = """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="enlog \(ENLogVersion.current)" xmlns="http://www.topografix.com/GPX/1/1" \
            xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" \
            xsi:schemaLocation="http://www.topografix.com/GPX/1/1 http://www.topografix.com/GPX/1/1/gpx.xsd">
            <metadata><name>\(ENMLCharacters.escaped(name))</name></metadata>
            <trk><name>\(ENMLCharacters.escaped(name))</name><trkseg>

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

    package static func geoJSON(_ fixes: [Fix]) -> String {
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

    package static let csvHeader = "time,latitude,longitude,altitude,accuracy,speed,course,source"

    /// Empty fields for unknown values; no field needs quoting (numbers, ISO times, source names).
    package static func csv(_ fixes: [Fix]) -> String {
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

}
