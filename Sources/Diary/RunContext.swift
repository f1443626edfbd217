import Foundation
import Synchronization
import Support
import Configuration
import Network
import Compose
import Outbox

/// The services one run of enlog uses, built from its configuration once, on first use, and
/// handed to whatever needs them (as SwiftPM builds one `SwiftCommandState` per invocation):
/// the outbox, the note renderer, the map renderer (whose memory cache and tile connections
/// then serve every map of the run: the notes `log` writes, the maps `sync` makes, the digests
/// `watch` writes), the geocoder and the HTTP configuration. A command that never draws a map
/// never builds a map renderer; one that never writes never opens the outbox for writing.
///
/// `watch` reads its configuration again on SIGHUP and builds a new context from it.
package final class RunContext: Sendable {
    package let config: Config
    private let warn: @Sendable (String) -> Void
    private let notice: @Sendable (String) -> Void
    private let built = Mutex(Built())

    private struct Built {
        var outbox: OutboxStore?
        var noteRenderer: NoteRenderer?
        var maps: MapRenderer?
    }

    /// - Parameters:
    ///   - warn: where the services' warnings go (a tile cache that cannot be opened).
    ///   - notice: where a word to the user goes that is no warning (how to start a new diary).
    package init(config: Config, warn: @escaping @Sendable (String) -> Void = { _ in },
                notice: @escaping @Sendable (String) -> Void = { _ in }) {
        self.config = config
        self.warn = warn
        self.notice = notice
    }

    /// The outbox at `outbox.db`, opened on the first call with that call's access; later calls
    /// get the same store. Reading and changing commands pass `.read`/`.change`, which never
    /// create an outbox: a mistyped `--db` (or `ENLOG_DB`, or `outbox.db`) says so instead.
    /// Where no path was given and nothing was logged yet (a new machine), they get an empty
    /// diary (`EmptyDiary`) and `notice` says how to start one: they answer, as on an empty
    /// outbox, and create nothing where the outbox will be.
    package func outbox(_ access: OutboxStore.Access = .create) throws -> OutboxStore {
        if let outbox = built.withLock({ $0.outbox }) { return outbox }
        let path = config.string(.database) ?? config.paths.defaultDatabase
        let opened: OutboxStore
        do {
            opened = try OutboxStore(path: path, access: access)
        } catch {
            let pathGiven = config.resolved[Setting.database.name].map { $0.source != .defaultValue } ?? false
            guard case .missing = error, !pathGiven, let empty = EmptyDiary.open() else { throw error }
            notice(Self.nothingLoggedYet(path))
            opened = empty
        }
        return built.withLock { built in
            if let outbox = built.outbox { return outbox }
            built.outbox = opened
            return opened
        }
    }

    /// What a reading command says on a machine where nothing was logged yet.
    static func nothingLoggedYet(_ path: String) -> String {
        "nothing is logged yet (no outbox at \(path)): `enlog log --at LAT,LON` logs a position, "
            + "`enlog log` the one gpsd gives, `enlog import FILE` a location history"
    }

    /// The outbox for a command that reads the history and keeps what it learns when it can (the
    /// places `timeline` and `places list` find): opened for changing, or, when this user cannot
    /// write it (another user's diary, a backup, a read-only mount), for reading, `writable` false.
    package func outboxWritableIfPossible() throws -> (outbox: OutboxStore, writable: Bool) {
        do {
            let outbox = try outbox(.change)
            // SQLite opens a file it may not write read-only without a word; writing would fail later.
            return (outbox, FileManager.default.isWritableFile(atPath: outbox.path))
        } catch let error as OutboxError {
            guard case .readOnly = error else { throw error }
            return (try outbox(.read), false)
        }
    }

    /// Renders notes with the configured template and note settings (the template read once).
    package func noteRenderer() throws(NoteError) -> NoteRenderer {
        if let renderer = built.withLock({ $0.noteRenderer }) { return renderer }
        let renderer = try NoteRenderer(config: config)
        built.withLock { $0.noteRenderer = renderer }
        return renderer
    }

    package var noteStyle: NoteStyle { NoteStyle(config: config) }

    package var mapSettings: MapSettings { MapSettings(config: config) }

    /// The one map renderer of the run.
    package var maps: MapRenderer {
        built.withLock { built in
            if let maps = built.maps { return maps }
            let maps = MapRenderer(settings: MapSettings(config: config), warn: warn)
            built.maps = maps
            return maps
        }
    }

    /// The map renderer, or nil when `map.style = none` asks for no map: how `log`, the digests
    /// and sync are told "no map".
    package var mapsIfWanted: MapRenderer? { mapSettings.style == .none ? nil : maps }

    /// How long `log` waits for its map (`map.timeout`, capped: see `MapSettings.logBudget`).
    package var logMapBudget: Duration { MapSettings.logBudget(config: config) }

    /// HTTP for Evernote's services: the CA file and the request timeout of the configuration.
    package func http(requestTimeout: Duration? = nil) -> HTTPConfiguration {
        HTTPConfiguration(config: config, requestTimeout: requestTimeout)
    }

    /// Addresses for fixes, or nil with `geocoding.enabled = false`.
    package func places(_ outbox: OutboxStore) -> CachingGeocoder? {
        CachingGeocoder.ifEnabled(config: config, outbox: outbox)
    }

    /// The logger `log`, `watch` and `import --notes` write notes through.
    /// - Parameter addressLater: no lookup now, but one before upload (`log --no-geocode`).
    package func logger(outbox: OutboxStore, accountKey: String?, addressLater: Bool = false) throws -> LocationLogger {
        LocationLogger(outbox: outbox, renderer: try noteRenderer(), addresses: FixAddressLookup(outbox: outbox, geocoder: places(outbox)),
                       account: accountKey, maps: mapsIfWanted, mapBudget: logMapBudget, addressLater: addressLater)
    }

    /// The digest writer of `digest`, `watch.digest` and `serve`; with `device`, of that device's points.
    package func digest(outbox: OutboxStore, accountKey: String?, device: String? = nil) -> DayDigest {
        DayDigest(outbox: outbox, style: noteStyle, maps: mapsIfWanted, account: accountKey, stays: StayDetector(config: config),
                  device: device)
    }
}
