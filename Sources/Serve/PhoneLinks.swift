import Foundation
import Support
import Configuration
import Capture

/// What to type into each app for a device: the URL, the user and the password or token, as
/// `enlog devices add` prints them (and `--json` under the keys `owntracks`, `overland`,
/// `gpslogger`, `traccar`).
public struct PhoneLinks: Sendable, Encodable, Equatable {
    public struct OwnTracks: Sendable, Encodable, Equatable {
        public var mode = "HTTP"
        public var url: String
        public var user: String
        public var password: String
        public var deviceId: String
    }

    public struct Overland: Sendable, Encodable, Equatable {
        public var url: String
        public var token: String
        public var deviceId: String
    }

    public struct GPSLogger: Sendable, Encodable, Equatable {
        public var url: String
        public var method = "GET"
        public var user: String
        public var password: String
    }

    public struct Traccar: Sendable, Encodable, Equatable {
        /// The server URL: the secret is its last path segment (the apps carry no password).
        public var url: String
        public var deviceId: String
    }

    public var device: String
    public var secret: String
    public var owntracks: OwnTracks
    public var overland: Overland
    public var gpslogger: GPSLogger
    public var traccar: Traccar

    /// The query GPSLogger's custom URL sends: its placeholders under the names its `%ALL` uses.
    public static let gpsLoggerQuery = "lat=%LAT&lon=%LON&timestamp=%TIMESTAMP&acc=%ACC&alt=%ALT&spd=%SPD&dir=%DIR&batt=%BATT&aid=%AID"

    public init(device: String, secret: String, base: String) {
        let base = base.hasSuffix("/") ? String(base.dropLast()) : base
        self.device = device
        self.secret = secret
        owntracks = OwnTracks(url: "\(base)/owntracks", user: device, password: secret, deviceId: device)
        overland = Overland(url: "\(base)/overland/\(device)", token: secret, deviceId: device)
        gpslogger = GPSLogger(url: "\(base)/gpslogger?\(Self.gpsLoggerQuery)", user: device, password: secret)
        traccar = Traccar(url: "\(base)/traccar/\(device)/\(secret)", deviceId: device)
    }

    /// `serve.url`, else `http://` and `serve.listen`.
    public static func base(config: Config) -> String {
        if let url = config.string(.serveURL), !url.isEmpty { return url }
        return "http://" + (config.string(.serveListen) ?? "127.0.0.1:8473")
    }

    /// The lines `enlog devices add` prints without `--json`.
    public var text: String {
        """
        device \(device); its secret (shown this once): \(secret)
        OwnTracks (mode HTTP):  URL \(owntracks.url)  user \(device)  password \(secret)  device ID \(device)
        Overland:               receiver endpoint \(overland.url)  access token \(secret)  device ID \(device)
        GPSLogger (custom URL): \(gpslogger.url)  method GET  basic authentication user \(device)  password \(secret)
        Traccar Client, OsmAnd: server URL \(traccar.url)  device identifier \(device)
        """
    }
}
