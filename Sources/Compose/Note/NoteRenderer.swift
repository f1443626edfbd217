import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Capture

/// The place a fix is at, as a geocoder described it; nil fields are unknown.
package struct Place: Sendable, Equatable, Codable {
    /// Short form used in titles and links, e.g. "Tokyo, Chiyoda, Marunouchi".
    package var address: String
    /// The geocoder's full description, kept in the note body.
    package var displayName: String?

    package init(address: String, displayName: String? = nil) {
        self.address = address
        self.displayName = displayName
    }
}

/// How notes look and where they go: everything the renderer takes from configuration.
package struct NoteStyle: Sendable {
    package enum MapProvider: String, Sendable {
        case openstreetmap, google
    }

    package var timeZone: TimeZone
    package var map: MapProvider
    /// Image URL with `{lat}`, `{lon}` and `{key}` placeholders; nil means no image.
    package var staticMapURL: String?
    package var staticMapKey: String?
    package var notebook: String?
    package var tags: [String]
    package var setsPlaceName: Bool

    package init(timeZone: TimeZone = .current, map: MapProvider = .openstreetmap, staticMapURL: String? = nil,
                staticMapKey: String? = nil, notebook: String? = nil, tags: [String] = ["LocationHistory"], setsPlaceName: Bool = false) {
        self.timeZone = timeZone
        self.map = map
        self.staticMapURL = staticMapURL
        self.staticMapKey = staticMapKey
        self.notebook = notebook
        self.tags = tags
        self.setsPlaceName = setsPlaceName
    }

    package init(config: Config) {
        self.init(
            timeZone: config.timeZone,
            map: config.string(.map).flatMap(MapProvider.init(rawValue:)) ?? .openstreetmap,
            staticMapURL: config.string(.staticMapURL),
            staticMapKey: config.string(.staticMapKey),
            notebook: config.string(.notebook),
            tags: config.list(.tags),
            setsPlaceName: config.boolean(.placeName))
    }
}

/// Turns a fix (and its place, when known) into a note ready for the outbox: the template
/// rendered, the title checked against Evernote's rules, the ENML validated.
package struct NoteRenderer: Sendable {
    package static let sourceApplication = "enlog"
    /// EDAM_NOTE_TITLE_LEN_MAX, EDAM_TAG_NAME_LEN_MAX, EDAM_NOTEBOOK_NAME_LEN_MAX.

    package let template: NoteTemplate
    package let style: NoteStyle
    private let validator: ENMLValidator

    /// The configured template and style (`note.*` settings).
    package init(config: Config) throws(NoteError) {
        self.init(template: try NoteTemplate.load(config.string(.template) ?? NoteTemplate.defaultName),
                  style: NoteStyle(config: config))
    }

    package init(template: NoteTemplate = .builtIn, style: NoteStyle = NoteStyle(), validator: ENMLValidator = ENMLValidator()) {
        self.template = template
        self.style = style
        self.validator = validator
    }

    /// - Parameters:
    ///   - map: the map image the note carries, shown by `{{#map}}…{{hash}}…{{/map}}`.
    ///   - entry: the user's words and files (`{{#message}}`, `{{#attachments}}`).
    ///   - addressPending: whether the address is still to be looked up (`{{#addressPending}}`);
    ///     nil: whenever `place` is nil. False without a place: the note goes with its
    ///     coordinates alone (geocoding off, or the lookup failed for good).
    ///   - placeName: the name of the place the user named that holds the fix (`{{placeName}}`).
    package func render(fix: Fix, place: Place?, uid: String = UUID().uuidString.lowercased(),
                       map: MapReference? = nil, entry: DiaryEntry = DiaryEntry(), addressPending: Bool? = nil,
                       placeName: String? = nil) throws(NoteError) -> NoteDraft {
        let addressPending = place == nil && (addressPending ?? true)
        let place = place.map { Place(address: ENMLCharacters.cleaned($0.address), displayName: $0.displayName.map(ENMLCharacters.cleaned)) }
        for tag in style.tags where !NoteNames.isEdgeTrimmedName(tag, maxLength: NoteNames.tagLength) || tag.contains(",") {
            throw .invalidTitle("tag '\(tag)' must be 1 to 100 characters, without commas or leading/trailing spaces")
        }
        if let notebook = style.notebook, !NoteNames.isEdgeTrimmedName(notebook, maxLength: NoteNames.notebookLength) {
            throw .invalidTitle("notebook name '\(notebook)' must be 1 to 100 characters, without leading/trailing spaces")
        }
        var base = self.context(fix: fix, place: place, addressPending: addressPending)
        if let placeName = placeName.map(ENMLCharacters.cleaned), !placeName.isEmpty { base["placeName"] = placeName }
        if let map { base["map"] = ["hash": map.hash, "width": map.width, "height": map.height] as [String: Any] }
        let context = base.merging(entry.templateValues) { $1 }
        let without = { base.merging(DiaryEntry(message: nil, attachments: entry.attachments).templateValues) { $1 } }
        guard let renderedTitle = template.render(.title, context) else { throw tooLarge(.title, entry: entry, without: without()) }
        let title = try Self.checkedTitle(renderedTitle)
        guard let content = template.render(.content, context) else { throw tooLarge(.content, entry: entry, without: without()) }
        let report = validator.validate(content)
        if let first = report.errors.first {
            if entry.message != nil, let tooLong = report.errors.first(where: { $0.code == .contentTooLong }) {
                if let rendered = template.render(.content, without()),
                   !validator.validate(rendered).errors.contains(where: { $0.code == .contentTooLong }) {
                    throw .messageTooLong(tooLong.message)
                }
            }
            throw .invalidENML(first, count: report.errors.count)
        }
        var draft = NoteDraft(uid: uid, title: title, content: content, notebookName: style.notebook, tags: style.tags,
                         placeName: style.setsPlaceName ? place.map { String($0.address.prefix(4096)) } : nil,
                         subjectDate: fix.timestamp, source: Self.sourceApplication,
                         sourceApplication: Self.sourceApplication, addressPending: addressPending)
        draft.place = place
        draft.message = entry.message
        return draft
    }

    /// Why rendering `part` was stopped: the message's fault when the part is within the limit
    /// without it and the message alone (escaped) would take it past the limit, the template's
    /// (it multiplies what it shows) otherwise. The title too: the default title carries the words.
    private func tooLarge(_ part: NoteTemplate.Part, entry: DiaryEntry, without: [String: Any]) -> NoteError {
        let limit = ENMLTextScan.maximumContentLength
        if let message = entry.message, let rendered = template.render(part, without),
           ENMLCharacters.escaped(message).utf16.count + rendered.utf16.count > limit {
            return .messageTooLong("content would be over \(limit) characters; Evernote accepts at most \(limit) (EDAM_NOTE_CONTENT_LEN_MAX)")
        }
        return .templateTooLarge(path: template.name + "/" + part.fileName, limit: limit)
    }

    /// The values a template can use; absent ones are left out so `{{#x}}` sections skip them.
    /// Text from outside (the geocoder's answer, settings) arrives cleaned of what a note cannot carry.
    func context(fix: Fix, place: Place?, addressPending: Bool? = nil) -> [String: Any] {
        uncleanedContext(fix: fix, place: place, addressPending: addressPending ?? (place == nil)).mapValues { value in
            (value as? String).map(ENMLCharacters.cleaned) ?? value
        }
    }

    private func uncleanedContext(fix: Fix, place: Place?, addressPending: Bool) -> [String: Any] {
        let latitude = Self.coordinate(fix.latitude), longitude = Self.coordinate(fix.longitude)
        // The calendar year by day arithmetic (InstantText), never the week-year `YYYY` the original
        // app used (2013-12-30 printed as 2014), and no formatter: ICU's costs every `log` its start-up.
        let offset = style.timeZone.secondsFromGMT(for: fix.timestamp)
        let time = InstantText.localTime(fix.timestamp, offsetSeconds: offset, dateSeparator: "/", between: " ")
        var context: [String: Any] = [
            "latitude": latitude,
            "longitude": longitude,
            "coordinates": "\(latitude),\(longitude)",
            "time": time,
            "timeWithZone": time + " " + InstantText.offset(offset) + " (\(style.timeZone.identifier))",
            "timeISO8601": InstantText.localTime(fix.timestamp, offsetSeconds: offset, dateSeparator: "-", between: "T")
                + InstantText.offset(offset),
            "timeZone": style.timeZone.identifier,
            "mapURL": mapURL(latitude: latitude, longitude: longitude),
            "source": Self.describe(fix.source),
            "addressPending": addressPending,
        ]
        if let place {
            context["address"] = place.address
            if let displayName = place.displayName, displayName != place.address { context["displayName"] = displayName }
        }
        if let accuracy = fix.horizontalAccuracy { context["accuracy"] = Self.decimal(accuracy) }
        if let altitude = fix.altitude { context["altitude"] = Self.decimal(altitude) }
        if let speed = fix.speed { context["speed"] = Self.decimal(speed) }
        if let staticMap = style.staticMapURL, !staticMap.isEmpty {
            context["staticMapURL"] = StaticMapURL.expand(staticMap, latitude: latitude, longitude: longitude,
                                                          key: style.staticMapKey)
        }
        return context
    }

    private func mapURL(latitude: String, longitude: String) -> String {
        switch style.map {
        case .openstreetmap:
            return "https://www.openstreetmap.org/?mlat=\(latitude)&mlon=\(longitude)#map=17/\(latitude)/\(longitude)"
        case .google:
            return "https://www.google.com/maps/search/?api=1&query=\(latitude)%2C\(longitude)"
        }
    }

    /// A title as EDAM_NOTE_TITLE_REGEX wants it: one line (controls and line or paragraph
    /// separators become spaces), no separator at either end, at most 255 characters (an overlong
    /// address is cut, marked with an ellipsis). Format characters stay: ZWJ holds 👨‍👩‍👧 together,
    /// ZWNJ spells Persian, variation selectors pick emoji; the rule forbids none of them.
    package static func checkedTitle(_ rendered: String) throws(NoteError) -> String {
        let oneLine = String(String.UnicodeScalarView(rendered.unicodeScalars.map { scalar in
            NoteNames.breaksLine(scalar) ? " " : scalar
        }))
        var title = NoteNames.trimmingSeparators(oneLine.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " "))
        if title.utf16.count > NoteNames.titleLength {
            // Whole characters only: a cut never splits an emoji sequence or a letter from its marks.
            // Counted from the front, once: removing characters from the end and counting again
            // took seconds for a title rendered to a few hundred kilobytes (the template fuzzer's find).
            var end = title.startIndex, kept = 0
            for index in title.indices {
                let next = title.index(after: index)
                kept += title.utf16.distance(from: index, to: next)
                guard kept <= NoteNames.titleLength - 1 else { break }
                end = next
            }
            title = NoteNames.trimmingSeparators(String(title[..<end])) + "…"
        }
        guard !title.isEmpty else { throw .invalidTitle("it is empty") }
        return title
    }

    /// Six decimals; a value that rounds to zero is "0.000000", never "-0.000000".
    package static func coordinate(_ value: Double) -> String { unsigned(zero: String(format: "%.6f", value)) }

    package static func decimal(_ value: Double) -> String {
        let text = unsigned(zero: String(format: "%.1f", value))
        return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
    }

    /// printf keeps the sign of a negative number that rounds to zero ("-0.000000").
    private static func unsigned(zero text: String) -> String {
        text.hasPrefix("-") && text.dropFirst().allSatisfy({ $0 == "0" || $0 == "." }) ? String(text.dropFirst()) : text
    }

    private static func describe(_ source: Fix.Source) -> String {
        switch source {
        case .gpsd: return "GPS (gpsd)"
        case .manual: return "entered by hand"
        case .nmea: return "NMEA log"
        case .gpx: return "GPX track"
        case .photo: return "photo (EXIF GPS)"
        case .imported: return "imported location history"
        case .phone: return "phone app (enlog serve)"
        }
    }
}

/// A map image as a template refers to it: `<en-media type="image/png" hash="{{hash}}"/>`.
package struct MapReference: Sendable, Equatable {
    /// MD5 of the PNG, 32 lowercase hex digits.
    package var hash: String
    package var width: Int
    package var height: Int

    package init(hash: String, width: Int, height: Int) {
        self.hash = hash
        self.width = width
        self.height = height
    }

    package init(_ image: MapImage) {
        self.init(hash: image.md5, width: image.width, height: image.height)
    }

    package init(_ resource: NoteResource) {
        self.init(hash: resource.hash, width: resource.width ?? 0, height: resource.height ?? 0)
    }
}
