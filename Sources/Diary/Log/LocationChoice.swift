import Support
import EvernoteAPI
import Configuration
import Network
import Capture
import Compose
import Outbox
/// Which location source `enlog log` uses: a position given by hand, an NMEA log, or gpsd
/// with the configured address, timeout and quality filter.
package struct LocationChoice: Sendable {
    package var at: String?
    package var nmea: String?

    package init(at: String?, nmea: String?) {
        self.at = at
        self.nmea = nmea
    }

    /// Manual and NMEA fixes are taken as given: the quality filter is for live gpsd fixes.
    package func source(config: Config) throws -> any LocationSource {
        if let at { return try ManualLocation(at) }
        if let nmea { return NMEALogLocation(path: nmea) }
        let endpoint = try GPSDLocation.Endpoint(parsing: config.string(.gpsd) ?? "127.0.0.1:2947")
        return GPSDLocation(endpoint: endpoint, timeout: config.number(.locationTimeout),
                            filter: QualityFilter(maxAge: config.number(.maxAge), minAccuracy: config.number(.minAccuracy)))
    }
}
