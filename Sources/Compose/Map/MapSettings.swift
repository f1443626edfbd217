import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Capture

/// What kind of map image a note gets (`map.style`).
package enum MapStyle: String, Sendable, CaseIterable {
    /// Raster tiles from `map.tile_url`, stitched and drawn on by enlog.
    case tiles
    /// One image downloaded from the keyed `note.static_map_url` service.
    case staticImage = "static"
    /// No image.
    case none
}

/// A raster tile URL such as `https://tile.openstreetmap.org/{z}/{x}/{y}.png`.
package enum TileURLTemplate {
    /// Why `template` cannot be used, or nil when it can. Checked with the same URL policy the
    /// downloads use (https anywhere, http only to loopback), before any request.
    package static func problem(_ template: String) -> String? {
        for placeholder in ["{z}", "{x}", "{y}"] where !template.contains(placeholder) {
            return "must contain {z}, {x} and {y} (e.g. https://tile.openstreetmap.org/{z}/{x}/{y}.png), not '\(HTTPURLPolicy.describe(template))…'"
        }
        do {
            _ = try HTTPURLPolicy.check(url(template, zoom: 0, x: 0, y: 0), resolve: [])
        } catch {
            return "is not usable: \(error.reason)"
        }
        return nil
    }

    package static func url(_ template: String, zoom: Int, x: Int, y: Int) -> String {
        template.replacingOccurrences(of: "{z}", with: String(zoom))
            .replacingOccurrences(of: "{x}", with: String(x))
            .replacingOccurrences(of: "{y}", with: String(y))
    }
}

/// The keyed static-map URL (`note.static_map_url`): `{lat}`, `{lon}` and `{key}` filled in.
/// Shared by the note's `staticMapURL` value and the `static` map style, so both ask for the same image.
package enum StaticMapURL {
    package static func expand(_ template: String, latitude: String, longitude: String, key: String?) -> String {
        template.replacingOccurrences(of: "{lat}", with: latitude)
            .replacingOccurrences(of: "{lon}", with: longitude)
            .replacingOccurrences(of: "{key}", with: queryEscaped(key ?? ""))
    }

    static func queryEscaped(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? ""
    }
}

/// Everything that decides how a map is made and fetched, from `[map]` (and the static-map and
/// contact settings it shares with the note and the geocoder).
package struct MapSettings: Sendable, Equatable {
    package var style: MapStyle
    package var width: Int
    package var height: Int
    /// 0…19.
    package var zoom: Int
    package var tileURL: String
    /// `note.static_map_url` and its key (a secret: never logged, and cached only under a hash).
    package var staticMapURL: String?
    package var staticMapKey: String?
    /// Sent in the User-Agent, as the OSM tile usage policy asks (`geocoding.contact`).
    package var contact: String
    /// The SQLite tile cache, or nil for memory only.
    package var cachePath: String?
    /// Upper bound of the disk cache's tile bytes; least recently used tiles are evicted past it.
    package var cacheSizeBytes: Int
    /// The longest `render` waits by default.
    package var timeBudget: Duration
    /// PEM CAs to trust instead of the system's (`network.ca_file`).
    package var caFile: String?

    package static let defaultTileURL = Setting.tileURL.defaultValue!
    package static let attribution = "© OpenStreetMap contributors"
    package static let sizeLimit = 16...4096
    package static let zoomLimit = 0...19

    /// The defaults are the settings table's (`Setting.mapWidth`…), so settings built in code
    /// and settings read from the configuration start alike.
    package init(style: MapStyle = .tiles, width: Int = Setting.mapWidth.defaultInteger, height: Int = Setting.mapHeight.defaultInteger,
                zoom: Int = Setting.mapZoom.defaultInteger,
                tileURL: String = MapSettings.defaultTileURL, staticMapURL: String? = nil, staticMapKey: String? = nil,
                contact: String = "", cachePath: String? = nil, cacheSizeBytes: Int = Int(Setting.mapCacheSize.defaultNumber * 1_048_576),
                timeBudget: Duration = Setting.mapTimeout.defaultDuration, caFile: String? = nil) {
        self.style = style
        self.width = width
        self.height = height
        self.zoom = zoom
        self.tileURL = tileURL
        self.staticMapURL = staticMapURL
        self.staticMapKey = staticMapKey
        self.contact = contact
        self.cachePath = cachePath
        self.cacheSizeBytes = cacheSizeBytes
        self.timeBudget = timeBudget
        self.caFile = caFile
    }

    /// The effective settings (already range-checked by `Config`).
    package init(config: Config) {
        let megabytes = config.number(.mapCacheSize)
        self.init(style: config.string(.mapStyle).flatMap(MapStyle.init(rawValue:)) ?? .tiles,
                  width: config.integer(.mapWidth), height: config.integer(.mapHeight), zoom: config.integer(.mapZoom),
                  tileURL: config.string(.tileURL) ?? Self.defaultTileURL,
                  staticMapURL: config.string(.staticMapURL), staticMapKey: config.string(.staticMapKey),
                  contact: config.string(.geocodingContact) ?? "",
                  cachePath: megabytes > 0 ? config.paths.tileCache : nil,
                  cacheSizeBytes: Int(megabytes * 1_048_576),
                  timeBudget: config.duration(.mapTimeout), caFile: config.string(.caFile))
    }

    /// The first reason these settings cannot make a map, or nil. `Config` checks each value
    /// alone; this checks them together and again for settings built in code.
    package func problem() -> String? {
        if !Self.sizeLimit.contains(width) || !Self.sizeLimit.contains(height) {
            return "the size \(width)×\(height) is outside \(Self.sizeLimit.lowerBound)…\(Self.sizeLimit.upperBound) pixels (map.width, map.height)"
        }
        if !Self.zoomLimit.contains(zoom) { return "zoom \(zoom) is outside 0…19 (map.zoom)" }
        switch style {
        case .tiles:
            if let problem = TileURLTemplate.problem(tileURL) { return "map.tile_url \(problem)" }
        case .staticImage:
            guard let staticMapURL, !staticMapURL.isEmpty else {
                return "map.style = static needs note.static_map_url"
            }
            do {
                _ = try HTTPURLPolicy.check(StaticMapURL.expand(staticMapURL, latitude: "0", longitude: "0", key: staticMapKey), resolve: [])
            } catch {
                return "note.static_map_url is not usable: \(error.reason)"
            }
        case .none:
            break
        }
        return nil
    }

    /// `enlog/<version> (+<contact>)`, the same identification the geocoder sends.
    package var userAgent: String {
        NominatimConfiguration(language: "", contact: contact).userAgent
    }
}

extension MapSettings {
    /// `enlog log` waits for the map at most this long (map.timeout, capped at 3 s): storing the
    /// note matters more than its picture, which sync makes later when it cannot be made now.
    package static let logBudgetCap: Duration = .seconds(3)

    package static func logBudget(config: Config) -> Duration {
        min(config.duration(.mapTimeout), logBudgetCap)
    }
}
