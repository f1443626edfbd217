import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Capture
import Compose
import Outbox

/// A fix already in hand, as a `LocationSource`: how `watch` hands its fix to the same
/// `LocationLogger` that `enlog log` uses.
public struct GivenFix: LocationSource {
    public let fix: Fix
    public init(fix: Fix) { self.fix = fix }
    public func currentFix() async throws -> Fix { fix }
}

extension LocationLogger {
    /// The logger `watch` and `import --notes` use: the configured template, geocoder and map.
    public static func configured(config: Config, outbox: OutboxStore, accountKey: String?) throws -> LocationLogger {
        LocationLogger(outbox: outbox, renderer: try NoteRenderer(config: config),
                       lookup: GeocodedPlaces.ifEnabled(config: config, outbox: outbox),
                       lookupBudget: config.duration(.geocodingTimeout), account: accountKey,
                       // One renderer for the whole watch: its memory cache serves every later note.
                       maps: MapRenderer(settings: MapSettings(config: config)), mapBudget: MapSettings.logBudget(config: config))
    }
}
