import ArgumentParser
import Foundation
import Support
import Configuration
import Compose
import Outbox
import Diary
import CoreCommands

struct Places: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "places",
        abstract: "The places you stay at, with names that last.",
        discussion: """
            A stay within a place's radius is that place, so a name given once is used for every \
            later visit. A place's name comes, first to last, from you, from an import's own \
            name (Google's visits, Home and Work), from an import's address, or from the \
            geocoder (its cache and one request a second; unnamed while offline, named on a \
            later run); a placeholder such as Google's "searched address" or "unknown" is no \
            name. Each name says where it came from (nameSource in --json: user, google, \
            address, geocoder). docs/stays.md says more.

            Examples:
              enlog places                               every place, visits, last visit
              enlog places name 3 Home
              enlog places add Office --at 48.137,11.575 --radius 80
              enlog places merge 3 7                     7 becomes part of 3
              enlog places forget 7 --json
            """,
        subcommands: [PlacesList.self, PlacesName.self, PlacesAdd.self, PlacesMerge.self, PlacesForget.self],
        defaultSubcommand: PlacesList.self)
}

/// One place as `enlog places --json` prints it.
struct PlaceSummary: Encodable {
    var id: Int64
    var name: String?
    var nameSource: String?
    var latitude: Double
    var longitude: Double
    var radius: Double
    var visits: Int?
    var lastVisit: String?

    init(_ place: PlaceRecord, visits: Int? = nil, lastVisit: String? = nil) {
        id = place.id ?? 0
        name = place.name
        nameSource = place.nameSource?.rawValue
        latitude = place.latitude
        longitude = place.longitude
        radius = place.radius
        self.visits = visits
        self.lastVisit = lastVisit
    }

    var line: String {
        let where_ = String(format: "%.5f, %.5f", latitude, longitude)
        let visited = visits.map { " \($0) visit\($0 == 1 ? "" : "s")" } ?? ""
        let named = name.map { name in
            "\(name) (\(nameSource.flatMap(PlaceRecord.NameSource.init(rawValue:))?.description ?? "name of unknown origin"))"
        } ?? "(unnamed)"
        return "\(id)  \(named)  \(where_) r \(Int(radius)) m\(visited)\(lastVisit.map { ", last \($0)" } ?? "")"
    }

    static func print(_ places: [PlaceSummary], json: Bool) throws {
        if json {
            try Terminal.standardOutput(try JSONOutput.encode(places))
        } else if places.isEmpty {
            try Terminal.standardOutput("no places yet: they come from stays (`enlog timeline`) or `enlog places add`")
        } else {
            try Terminal.standardOutput(places.map(\.line).joined(separator: "\n"))
        }
    }
}

struct PlacesList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the places, with their visits and last visit (the stays of the whole history).",
        discussion: """
            The last visit is local time where it was lived, with its offset: the offset an \
            import stated (Google's newer exports), else note.time_zone's; --utc prints UTC.

            Examples:
              enlog places list --json
              enlog places list --device phone
            """)

    @OptionGroup var global: GlobalOptions
    @Flag(help: "Print the places as JSON.") var json = false
    @Flag(help: "Print the last visit in UTC rather than where it was lived.") var utc = false
    @Option(help: ArgumentHelp("Visits from this phone's points only (`enlog devices list`).", valueName: "name"))
    var device: String?

    func run() async throws {
        try await OutboxStore.$deviceScope.withValue(device) { try await list() }
    }

    func list() async throws {
        let context = try global.context()
        let (outbox, writable) = try context.outboxWritableIfPossible()
        try await outbox.checkDevice(device)
        let detector = StayDetector(config: context.config)
        let book = PlaceBook(context: context, outbox: outbox, detector: detector, keeping: writable)
        let (stays, _) = try await Timeline.stays(outbox: outbox, detector: detector, from: .distantPast, to: .distantFuture)
        let placed = try await book.places(of: stays)
        var visits: [Int64: (count: Int, last: Double)] = [:]
        for (stay, place) in zip(stays, placed) {
            let id = place.id ?? 0
            visits[id] = ((visits[id]?.count ?? 0) + 1, max(visits[id]?.last ?? 0, stay.departure))
        }
        // The last visit in the zone it was lived in (an import's stated offset), else note.time_zone.
        let fallback = TrackDay.timeZone(config: context.config)
        var zones = LivedZones(fallback: fallback)
        if !utc { zones = try await LivedZones.load(outbox: outbox, from: .distantPast, to: .distantFuture, fallback: fallback) }
        let clock = Timeline.Clock(zones: zones)
        // With --device, the places that device stayed at.
        let places = try await outbox.places().filter { device == nil || visits[$0.id ?? 0] != nil }.map { place in
            let seen = visits[place.id ?? 0]
            return PlaceSummary(place, visits: seen?.count ?? 0, lastVisit: seen.map { utc ? InstantText.string(Date(timeIntervalSince1970: $0.last.rounded())) : clock.string($0.last) })
        }
        try PlaceSummary.print(places, json: json)
    }
}

extension PlaceBook {
    /// The place book a command uses: new places twice the stay radius wide, named by the
    /// configured geocoder when geocoding is on; kept only when the outbox can be written (the
    /// command says once when it cannot).
    init(context: RunContext, outbox: OutboxStore, detector: StayDetector, keeping: Bool) {
        if !keeping {
            Terminal.standardError("enlog: the outbox cannot be written here: places it does not know yet are shown unnamed and not kept")
        }
        self.init(outbox: outbox, newPlaceRadius: detector.radius * 2,
                  geocoder: CachingGeocoder.ifEnabled(config: context.config, outbox: outbox), keeping: keeping)
    }
}
