import Foundation
import Support
import Configuration
import Capture

/// What to type into each app for a device: the URL, the user and the password or token, as
/// `enlog devices add` prints them (and `--json` under the keys `owntracks`, `overland`,
/// `gpslogger`, `traccar`).
package struct PhoneLinks: Sendable, Encodable, Equatable {
    package struct OwnTracks: Sendable, Encodable, Equatable {
        package var mode = "HTTP"
        package var url: String
        package var user: String
        package var password: String
        package var deviceId: String
    }

    package struct Overland: Sendable, Encodable, Equatable {
        package var url: String
        package var token: String
        package var deviceId: String
    }

    package struct GPSLogger: Sendable, Encodable, Equatable {
        package var url: String
        package var method = "GET"
        package var user: String
        package var password: String
    }

    package struct Traccar: Sendable, Encodable, Equatable {
        /// The server URL: the secret is its last path segment (the apps carry no password).
        package var url: String
        package var deviceId: String
    }

    package var device: String
    package var secret: String
    package var owntracks: OwnTracks
    package var overland: Overland
    package var gpslogger: GPSLogger
    package var traccar: Traccar

    /// The query GPSLogger's custom URL sends: its placeholders under the names its `%ALL` uses.
    package static let gpsLoggerQuery = "lat=%LAT&lon=%LON&timestamp=%TIMESTAMP&acc=%ACC&alt=%ALT&spd=%SPD&dir=%DIR&batt=%BATT&aid=%AID"

    package init(device: String, secret: String, base: String) {
        let base = base.hasSuffix("/") ? String(base.dropLast()) : base
        self.device = device
        self.secret = secret
        owntracks = OwnTracks(url: "\(base)/owntracks", user: device, password: secret, deviceId: device)
        overland = Overland(url: "\(base)/overland/\(device)", token: secret, deviceId: device)
        gpslogger = GPSLogger(url: "\(base)/gpslogger?\(Self.gpsLoggerQuery)", user: device, password: secret)
        traccar = Traccar(url: "\(base)/traccar/\(device)/\(secret)", deviceId: device)
    }

    /// `serve.url`, else `http://` and `serve.listen` (`https://` when serve.tls_certificate and
    /// serve.tls_key are set: enlog serve itself speaks TLS then).
    package static func base(config: Config) -> String {
        if let url = config.string(.serveURL), !url.isEmpty { return url }
        let tls = [Setting.serveTLSCertificate, .serveTLSKey].allSatisfy { config.string($0).map { !$0.isEmpty } ?? false }
        return (tls ? "https://" : "http://") + (config.string(.serveListen) ?? "127.0.0.1:8473")
    }

    /// The lines `enlog devices add` prints without `--json`.
    package var text: String {
        """
        device \(device); its secret (shown this once): \(secret)
        OwnTracks (mode HTTP):  URL \(owntracks.url)  user \(device)  password \(secret)  device ID \(device)
        Overland:               receiver endpoint \(overland.url)  access token \(secret)  device ID \(device)
        GPSLogger (custom URL): \(gpslogger.url)  method GET  basic authentication user \(device)  password \(secret)
        Traccar Client, OsmAnd: server URL \(traccar.url)  device identifier \(device)
        """
    }
}
