import Foundation
import Support

/// One setting enlog reads: its name in config.toml (`section.key`), its type and default, the
/// environment variables that override it, and whether its value is a secret.
package struct Setting: Sendable, Hashable {
    package enum Kind: String, Sendable {
        case string, integer, number, boolean, list
    }

    package let name: String
    package let kind: Kind
    package let defaultValue: String?
    package let secret: Bool
    package let help: String
    /// The environment variables that set it, the one documented first.
    package let environmentNames: [String]
    /// For `.number` and `.integer` settings: the values accepted, wherever they come from.
    package let range: NumericRange?

    /// - Parameter environment: the documented variable, when it is not `ENLOG_SECTION_KEY`
    ///   (`note.time_zone` → `ENLOG_NOTE_TIME_ZONE`), which is then accepted too.
    init(_ name: String, _ kind: Kind, default defaultValue: String?, secret: Bool = false, range: NumericRange? = nil,
         environment: [String] = [], _ help: String) {
        precondition((kind == .number || kind == .integer) == (range != nil), "numeric settings need a range")
        self.name = name
        self.kind = kind
        self.defaultValue = defaultValue
        self.secret = secret
        self.range = range
        self.help = help
        let canonical = "ENLOG_" + name.uppercased().replacingOccurrences(of: ".", with: "_")
        self.environmentNames = environment + (environment.contains(canonical) ? [] : [canonical])
    }

    /// The section (`location`) and key (`max_age`) in config.toml.
    package var section: Substring { name.split(separator: ".")[0] }
    package var key: Substring { name.split(separator: ".")[1] }
}

extension Setting {
    package static let gpsd = Setting("location.gpsd", .string, default: "127.0.0.1:2947", "gpsd address, HOST:PORT")
    package static let locationTimeout = Setting("location.timeout", .number, default: "30", range: .timeoutSeconds, "seconds to wait for a usable fix")
    package static let maxAge = Setting("location.max_age", .number, default: "15", range: .fixAgeSeconds, "oldest acceptable fix, seconds")
    package static let minAccuracy = Setting("location.min_accuracy", .number, default: "40", range: .accuracyMetres, "worst acceptable horizontal accuracy, metres")
    package static let geocodingEnabled = Setting("geocoding.enabled", .boolean, default: "true", "look up addresses")
    package static let geocodingURL = Setting("geocoding.url", .string, default: "https://nominatim.openstreetmap.org", "Nominatim-compatible base URL")
    package static let geocodingLanguage = Setting("geocoding.language", .string, default: nil, "address language (default: from LANG)")
    package static let geocodingTimeout = Setting("geocoding.timeout", .number, default: "3", range: .shortWaitSeconds, "longest wait for an address, seconds")
    package static let geocodingInterval = Setting("geocoding.min_interval", .number, default: nil, range: .spacingSeconds, "least time between two address requests, seconds, across every enlog process; unset: 1.1 (OpenStreetMap's policy), 0 for a geocoder on this machine")
    package static let geocodingContact = Setting("geocoding.contact", .string, default: nil, "contact (e-mail or URL) sent in the User-Agent, as Nominatim's policy asks")
    package static let template = Setting("note.template", .string, default: "default", "template: 'default', 'classic' or a directory holding title.mustache and content.mustache")
    package static let notebook = Setting("note.notebook", .string, default: nil, "notebook name (default: the account's default notebook)")
    package static let tags = Setting("note.tags", .list, default: "LocationHistory", "tags, comma-separated in the environment")
    package static let timeZone = Setting("note.time_zone", .string, default: nil, "time zone of note times and days (default: TZ as `date` reads it, else the system's)")
    package static let map = Setting("note.map", .string, default: "openstreetmap", "map link: openstreetmap or google")
    package static let staticMapURL = Setting("note.static_map_url", .string, default: nil, "static map image URL with {lat} {lon} {key}; unset: no image")
    package static let staticMapKey = Setting("note.static_map_key", .string, default: nil, secret: true, "API key for the static map URL")
    package static let placeName = Setting("note.place_name", .boolean, default: "false", "also set NoteAttributes.placeName to the address (Evernote asks apps to do so only with the user's consent)")
    package static let consumerKey = Setting("auth.consumer_key", .string, default: nil, environment: ["ENLOG_AUTH_CONSUMER_KEY", "ENLOG_CONSUMER_KEY"], "OAuth 1.0a consumer key (Yinxiang, custom hosts)")
    package static let consumerSecret = Setting("auth.consumer_secret", .string, default: nil, secret: true, environment: ["ENLOG_AUTH_CONSUMER_SECRET", "ENLOG_CONSUMER_SECRET"], "OAuth 1.0a consumer secret")
    package static let probes = Setting("network.probes", .list, default: nil, "IP:PORT literals the reachability check connects to (never names); unset: well-known anycast addresses")
    package static let probeBudget = Setting("network.probe_budget", .number, default: "1.5", range: .shortWaitSeconds, "longest the reachability check may take, seconds")
    package static let dnsTimeout = Setting("network.dns_timeout", .number, default: "5", range: .shortWaitSeconds, "longest wait for the Evernote host's name to resolve, seconds; past it a remembered address is used")
    package static let requestTimeout = Setting("network.request_timeout", .number, default: "20", range: .requestSeconds, "longest wait for one Evernote request, seconds; past it the note stays queued and is looked up before it is sent again")
    package static let caFile = Setting("network.ca_file", .string, default: nil, "PEM file of CAs to trust for HTTPS instead of the system's (verification stays on)")
    package static let watchMinDistance = Setting("watch.min_distance", .number, default: "200", range: .watchDistanceMetres,
                                                 "metres moved (beyond the fixes' accuracy) since the last note before watch logs another")
    package static let watchMinInterval = Setting("watch.min_interval", .number, default: "300", range: .watchIntervalSeconds,
                                                 "seconds since the last note before watch logs another")
    package static let watchMaxInterval = Setting("watch.max_interval", .number, default: nil, range: .watchHeartbeatSeconds,
                                                 "seconds after which watch logs a note even when stationary; unset: never")
    package static let watchTrack = Setting("watch.track", .boolean, default: "true",
                                           "watch keeps the route it follows in the history (fixes without notes, thinned), for digests and exports")
    package static let watchTrackDistance = Setting("watch.track_distance", .number, default: "25", range: .trackDistanceMetres,
                                                   "metres moved beyond the fixes' accuracy since the last track fix before watch keeps another")
    package static let watchTrackInterval = Setting("watch.track_interval", .number, default: "60", range: .watchIntervalSeconds,
                                                   "seconds after which half of track_distance is enough for watch to keep a track fix")
    package static let watchDigest = Setting("watch.digest", .boolean, default: "false",
                                            "after midnight (note.time_zone), watch writes the previous day's digest note, once")
    package static let mapStyle = Setting("map.style", .string, default: "tiles", "map image: tiles (stitched from map.tile_url), static (downloaded from note.static_map_url) or none")
    package static let mapWidth = Setting("map.width", .integer, default: "600", range: .mapPixels, "map image width, pixels")
    package static let mapHeight = Setting("map.height", .integer, default: "400", range: .mapPixels, "map image height, pixels")
    package static let mapZoom = Setting("map.zoom", .integer, default: "16", range: .mapZoom, "map zoom level, 0 (the world) to 19 (buildings)")
    package static let tileURL = Setting("map.tile_url", .string, default: "https://tile.openstreetmap.org/{z}/{x}/{y}.png", "raster tile URL with {z} {x} {y} (256-pixel PNG tiles, OSM-compatible)")
    package static let mapCacheSize = Setting("map.cache_size", .number, default: "100", range: .cacheMegabytes, "tile cache on disk ($XDG_CACHE_HOME/enlog/tiles.sqlite), MB; least recently used evicted; 0: memory only")
    package static let mapTimeout = Setting("map.timeout", .number, default: "10", range: .timeoutSeconds, "longest wait for a map's tiles, seconds")
    package static let staysRadius = Setting("stays.radius", .number, default: "50", range: .stayRadiusMetres,
                                            "metres from a stay's centre within which a fix (plus its accuracy) is still at that place")
    package static let staysMinDuration = Setting("stays.min_duration", .number, default: "180", range: .stayDurationSeconds,
                                                 "seconds someone must remain at a place to make a stay (a typed --at is one however short)")
    package static let staysMaxGap = Setting("stays.max_gap", .number, default: "10800", range: .stayGapSeconds,
                                            "longest silence, seconds, a stay lasts through when the fixes on both sides are at the same place")
    package static let staysMaxAccuracy = Setting("stays.max_accuracy", .number, default: "100", range: .accuracyMetres,
                                                 "fixes less accurate than this, metres, neither make nor break a stay")
    package static let database = Setting("outbox.db", .string, default: nil, environment: ["ENLOG_DB"], "outbox database (default: $XDG_DATA_HOME/enlog/enlog.sqlite)")

    /// Every setting, in the order `enlog config show` prints them.
    package static let all: [Setting] = [
        gpsd, locationTimeout, maxAge, minAccuracy,
        geocodingEnabled, geocodingURL, geocodingLanguage, geocodingTimeout, geocodingInterval, geocodingContact,
        template, notebook, tags, timeZone, map, staticMapURL, staticMapKey, placeName,
        mapStyle, mapWidth, mapHeight, mapZoom, tileURL, mapCacheSize, mapTimeout,
        consumerKey, consumerSecret, probes, probeBudget, dnsTimeout, requestTimeout, caFile,
        watchMinDistance, watchMinInterval, watchMaxInterval, watchTrack, watchTrackDistance, watchTrackInterval, watchDigest,
        staysRadius, staysMinDuration, staysMaxGap, staysMaxAccuracy, database,
    ] + serveSettings

    static func named(_ name: String) -> Setting? { all.first { $0.name == name } }

    /// `ENLOG_*` variables that are not settings but are still enlog's: the token `auth token`
    /// reads, and the ones the project's own scripts and tests set (so they are not warned about).
    static let otherEnvironmentNames: Set<String> = ["ENLOG_TOKEN", "ENLOG_PYTHON", "ENLOG_TEST_TRACE", "ENLOG_DEMO_DB",
                                                     InputDeadline.environmentName]
}

extension Setting {
    /// A numeric setting's default, read from the table above: code that needs a default (a
    /// value type's initializer, a flag's help) takes it from here instead of repeating it.
    package var defaultNumber: Double {
        guard let range, let value = defaultValue.flatMap(range.value(of:)) else { return 0 }
        return value
    }

    package var defaultInteger: Int { Int(defaultNumber) }

    package var defaultDuration: Duration { .milliseconds(Int64((defaultNumber * 1000).rounded())) }
}
