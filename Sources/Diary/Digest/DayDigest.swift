import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Capture
import Compose
import Outbox

/// A day with no fix in the history: there is nothing to digest.
package struct DigestError: ENLogError, Equatable {
    package let day: String
    /// The device asked for (`digest --device`); nil: the whole history.
    package let device: String?
    package init(day: String, device: String? = nil) {
        self.day = day
        self.device = device
    }
    package var reason: String {
        if let device { return "the history has no fix of \(device) on \(day): no digest to write" }
        return "the history has no fix on \(day): no digest to write"
    }
    package var recoverySuggestion: String? {
        if device != nil { return "`enlog devices list` shows when each device sent its last point" }
        return "`enlog history --date \(day) --format csv` shows the day's fixes; `enlog import FILE` adds a track"
    }
    package var category: ErrorCategory { .noInput }
}

/// One note for one day (`enlog digest`, `watch.digest`): the day's fixes as a GPX 1.1 track
/// attached to the note, the distance travelled and time moving, the places noted that day, and
/// the route drawn on the map. Written once per day: the outbox remembers which days have theirs.
/// With a device (`digest --device`, `enlog serve`), the same from that phone's points alone,
/// remembered apart from the whole history's.
package struct DayDigest: Sendable {
    package enum Outcome: Sendable {
        /// `mapPending`: the route could not be drawn now (offline, tile server down); sync
        /// makes the digest again with it before upload.
        case written(note: OutboxNote, statistics: TrackStatistics, places: Int, mapProblem: String?, mapPending: Bool)
        /// The day had its digest already: that note.
        case alreadyThere(noteId: Int64)
    }

    package static let gpxMimeType = TrackFormat.gpx.mimeType

    let outbox: OutboxStore
    let style: NoteStyle
    let maps: MapRenderer?
    let account: String?
    /// Finds the day's stays for its timeline.
    let stays: StayDetector
    /// Whose points: a device's, or nil for the whole history.
    package let device: String?
    private let validator = ENMLValidator()

    /// - Parameter maps: draws the route (nil, or `map.style` other than tiles: no picture).
    /// - Parameter device: the digest of this device's points only (nil: every point).
    package init(outbox: OutboxStore, style: NoteStyle, maps: MapRenderer?, account: String?, stays: StayDetector = StayDetector(),
                 device: String? = nil) {
        self.outbox = outbox
        self.device = device
        self.stays = stays
        self.style = style
        self.maps = maps
        self.account = account
    }

    package func write(_ day: TrackDay) async throws -> Outcome {
        if let existing = try await outbox.digestNote(day: day.name, device: device) { return .alreadyThere(noteId: existing) }
        let made = try await draft(day)
        switch try await outbox.enqueueDigest(day: day.name, device: device, note: made.draft, onFix: made.lastFix) {
        case .written(let note):
            // No map wanted (map.style = none) is `maps` nil: nothing tried, nothing to say.
            let mapProblem = made.mapError?.reason
            return .written(note: note, statistics: made.statistics, places: made.places, mapProblem: mapProblem,
                            mapPending: made.draft.mapPending)
        case .alreadyThere(let noteId):
            return .alreadyThere(noteId: noteId)
        }
    }

    /// A digest whose route could not be drawn when it was written (offline, tile server down)
    /// waits for it like a note for its map: sync makes the day's digest again, route included,
    /// and it replaces the stored one (`OutboxStore.replaceDigest`). Throws the `MapError` when
    /// the route still cannot be drawn, so sync counts the failed attempt.
    package func remade(_ noteId: Int64, day: TrackDay, now: Date = Date()) async throws {
        let made = try await draft(day)
        if made.draft.mapPending, let problem = made.mapError { throw problem }
        try await outbox.replaceDigest(noteId, with: made.draft, now: now)
    }

    typealias Draft = (draft: NoteDraft, lastFix: Int64, statistics: TrackStatistics, places: Int, mapError: MapError?)

    /// The day's digest note as it would be written now: every read (fixes, stays, notes, earlier
    /// years) sees the device's points alone when there is one.
    private func draft(_ day: TrackDay) async throws -> Draft {
        try await OutboxStore.$deviceScope.withValue(device) { try await scopedDraft(day) }
    }

    private func scopedDraft(_ day: TrackDay) async throws -> Draft {
        // The day in the zone it was lived in (an import's stated offsets), else as named.
        let day = try await LivedZones.day(day.name, outbox: outbox, fallback: day.timeZone) ?? day
        let records = try await outbox.history(from: day.start, to: day.end)
        guard let last = records.last, let lastId = last.id else { throw DigestError(day: day.name, device: device) }
        let fixes = try records.map { try $0.fix() }
        var statistics = TrackStatistics(fixes)
        let places = try await outbox.notedPlaces(from: day.start, to: day.end)
        // Known places' names, no geocoder: a digest written offline or in a backfill waits for nobody.
        let timeline = try await Timeline.build(outbox: outbox, detector: stays,
                                                places: PlaceBook(outbox: outbox, newPlaceRadius: stays.radius * 2, geocoder: nil),
                                                from: day.start, to: day.end, timeZone: day.timeZone)
        // The day's distance and time moving are its timeline's (the source's own figures where
        // an import gave them, the first and last moves included): title, body and timeline agree.
        statistics.distance = Double(timeline.distanceMetres)
        statistics.movingTime = TimeInterval(timeline.movingSeconds)
        statistics.gaps = timeline.gaps
        let earlierYears = try await OnThisDay.years(of: day, outbox: outbox, detector: stays)

        // Device names are letters, digits, '-', '_' and '.': fit for a title and a file name.
        let named = device.map { "\(day.name) \($0)" } ?? day.name
        let gpx = Data(TrackWriter.gpx(fixes, name: "enlog \(named)").utf8)
        let track = NoteResource(hash: MapImage.md5Hex(gpx), body: gpx, mime: Self.gpxMimeType, width: nil, height: nil,
                                 fileName: "enlog-\(named.replacingOccurrences(of: " ", with: "-")).gpx", latitude: nil, longitude: nil)
        var resources: [NoteResource] = []
        var mapError: MapError?
        var picture: MapReference?
        if let maps {
            do {
                // The route waits as long as any map may (map.timeout, in the renderer's settings).
                let image = try await maps.renderRoute(fixes, stays: timeline.stays.map { ($0.latitude, $0.longitude) },
                                                       budget: maps.settings.timeBudget)
                var resource = NoteResource(map: image)
                resource.fileName = "route.png"
                resources.append(resource)
                picture = MapReference(image)
            } catch {
                mapError = error
            }
        }
        resources.append(track)

        let title = try NoteRenderer.checkedTitle("Day \(day.name)\(device.map { " (\($0))" } ?? ""): \(TimelineText.distance(timeline.distanceMetres)), \(TimelineText.movingTime(timeline.movingSeconds)) moving")
        let content = content(day, statistics, places: places, timeline: timeline, earlierYears: earlierYears,
                              picture: picture, track: track)
        let report = validator.validate(content)
        if let first = report.errors.first { throw NoteError.invalidENML(first, count: report.errors.count) }
        var draft = NoteDraft(title: title, content: content, notebookName: style.notebook, tags: style.tags,
                              subjectDate: day.start, source: NoteRenderer.sourceApplication,
                              sourceApplication: NoteRenderer.sourceApplication, addressPending: false, account: account)
        draft.resources = resources
        draft.mapPending = mapError?.isRetryable ?? false
        return (draft, lastId, statistics, places.count, mapError)
    }

    private func content(_ day: TrackDay, _ statistics: TrackStatistics, places: [(note: OutboxNote, fix: FixRecord)],
                         timeline: Timeline, earlierYears: [OnThisDay.Year], picture: MapReference?,
                         track: NoteResource) -> String {
        let clock = TrackDay.formatter(day.timeZone)
        clock.dateFormat = "HH:mm"
        func text(_ value: String) -> String { ENMLCharacters.escaped(value) }
        var body = "<h2>\(text(day.longName))</h2>"
        if let device { body += "<p>\(text("From the points of \(device) alone."))</p>" }
        var summary = "Distance travelled: \(TimelineText.distance(timeline.distanceMetres)). Time moving: \(TimelineText.movingTime(timeline.movingSeconds))."
        if timeline.gaps > 0 {
            summary += " Of it, \(TimelineText.distance(timeline.bridgedMetres)) across \(counted(timeline.gaps, "gap")) of more than \(Int(Timeline.gapSeconds / 60)) min without data, as the crow flies."
        }
        if let start = statistics.start, let end = statistics.end {
            summary += " \(counted(statistics.fixes, "fix", plural: "fixes")) from \(clock.string(from: start)) to \(clock.string(from: end)) (\(LivedZones.name(day.timeZone)))."
        }
        body += "<p>\(text(summary))</p>"
        if let picture {
            body += "<div><en-media type=\"\(MapImage.mimeType)\" hash=\"\(picture.hash)\" width=\"\(picture.width)\" height=\"\(picture.height)\"/></div>"
        }
        if !timeline.stays.isEmpty || !timeline.moves.isEmpty {
            body += "<h3>Timeline</h3><ul>"
            for line in TimelineText.lines(timeline, dated: false) {
                body += "<li>\(text(line.trimmingCharacters(in: .whitespaces)))</li>"
            }
            body += "</ul>"
        }
        if !earlierYears.isEmpty {
            body += "<h3>On this day</h3><ul>"
            for year in earlierYears { body += "<li>\(text(OnThisDay.line(year, for: day)))</li>" }
            body += "</ul>"
        }
        if places.isEmpty {
            body += "<p>No place was noted that day.</p>"
        } else {
            body += "<h3>Places noted</h3><ul>"
            for place in places {
                body += "<li>\(clock.string(from: place.fix.timestamp)) \(text(place.note.placeName ?? place.note.title))</li>"
            }
            body += "</ul>"
        }
        body += "<p>The day's track (GPX 1.1):</p><div><en-media type=\"\(track.mime)\" hash=\"\(track.hash)\"/></div>"
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE en-note SYSTEM "http://xml.evernote.com/pub/enml2.dtd">
            <en-note>\(body)</en-note>
            """
    }
}
