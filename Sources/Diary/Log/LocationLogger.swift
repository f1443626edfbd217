import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Capture
import Compose
import Outbox

/// Looks up the place a fix is at; the geocoder behind it may be slow or unreachable.
public protocol PlaceLookup: Sendable {
    func place(for fix: Fix) async throws -> Place
}

/// What `enlog log` does: fix → place (if it comes in time) → rendered, validated note →
/// outbox, in that order, so that a note is stored whole or not at all and never waits on the
/// network longer than its budget.
public struct LocationLogger: Sendable {
    public struct Outcome: Sendable {
        public var note: OutboxNote
        public var fix: Fix
        /// Why the lookup of the address failed (unreachable, too slow), when it was tried and did.
        public var addressProblem: String?
        /// Why the map could not be made now; `mapPending` says whether sync will try again.
        public var mapProblem: String?
        public var mapPending: Bool
    }

    private let outbox: OutboxStore
    private let renderer: NoteRenderer
    private let lookup: (any PlaceLookup)?
    private let lookupBudget: Duration
    /// The account signed in when the note is queued; sync uploads it to that account only.
    private let account: String?
    private let maps: MapRenderer?
    private let mapBudget: Duration
    /// No lookup now, but one before upload (`log --no-geocode`): the note waits for its address.
    /// Without it and without a geocoder, no address will come: the note is final as logged.
    private let addressLater: Bool

    /// - Parameters:
    ///   - maps: makes the note's map image (nil: no map); `mapBudget` bounds it, and it runs
    ///     beside the address lookup, so storing the note waits at most the longer of the two.
    public init(outbox: OutboxStore, renderer: NoteRenderer, lookup: (any PlaceLookup)?, lookupBudget: Duration = .seconds(3),
                account: String? = nil, maps: MapRenderer? = nil, mapBudget: Duration = .seconds(3), addressLater: Bool = false) {
        self.addressLater = addressLater
        self.account = account
        self.maps = maps
        self.mapBudget = mapBudget
        self.outbox = outbox
        self.renderer = renderer
        self.lookup = lookup
        self.lookupBudget = lookupBudget
    }

    /// - Parameters:
    ///   - message: the user's words, placed by the template and kept with the note.
    ///   - attachments: files (`Attachments.load`) carried as resources of the note, stored with
    ///     it; the note with all of them is checked against Evernote's limits before it is stored.
    public func log(from source: any LocationSource, message: String? = nil, attachments: [NoteResource] = []) async throws -> Outcome {
        try await log(try await source.currentFix(), historyFix: nil, message: message, attachments: attachments)
    }

    /// - Parameter historyFix: the fix's row when it is in the history already (`enlog import
    ///   --notes`): the note is written on it instead of storing the fix again.
    public func log(_ fix: Fix, historyFix: Int64?, message: String? = nil, attachments: [NoteResource] = []) async throws -> Outcome {
        async let mapResult = makeMap(fix)
        // A place the user named: the title names it, and naming it is the consent Evernote asks for placeName.
        let named = try await outbox.userPlaceName(latitude: fix.latitude, longitude: fix.longitude)
        var addressProblem: String?
        var place: Place?
        if let lookup {
            do {
                place = try await withDeadline(lookupBudget) { try await lookup.place(for: fix) }
            } catch {
                addressProblem = (error as? any ENLogError)?.reason ?? "\(error)"
            }
        }
        // While the map is drawn on another thread: the note rendered and validated around a
        // stand-in of the map (a random hash, the map's size), so that when the picture comes
        // only its hash is left to put in. A 32-hex-digit attribute value replaced by another
        // leaves the document exactly as valid; anything else is rendered again below.
        let standIn = maps.flatMap { $0.settings.style == .tiles ? MapReference.standIn(for: $0.settings) : nil }
        let early = standIn.flatMap { standIn in
            try? render(fix, place, map: standIn, entry: DiaryEntry(message: message, attachments: attachments),
                        addressProblem: addressProblem, placeName: named)
        }
        var mapProblem: String?
        var mapPending = false
        var map: MapImage?
        switch await mapResult {
        case .success(let image):
            map = image
        case .failure(let error):
            // .disabled: nothing wanted, nothing to say. Settings errors: no map, said once here.
            if error != .disabled { mapProblem = error.reason }
            mapPending = error.isRetryable
        case nil:
            break
        }
        // A file identical to the map is the map: one resource per hash in a note.
        let files = attachments.filter { $0.hash != map?.md5 }
        var draft: NoteDraft
        if let early, let standIn, let map, files.count == attachments.count,
           map.width == standIn.width, map.height == standIn.height {
            (draft, addressProblem) = early
            draft.content = draft.content.replacingOccurrences(of: standIn.hash, with: map.md5)
        } else {
            (draft, addressProblem) = try render(fix, place, map: map.map(MapReference.init),
                                                 entry: DiaryEntry(message: message, attachments: files), addressProblem: addressProblem,
                                                 placeName: named)
        }
        draft.account = account
        if let named { draft.placeName = named }
        draft.resources = (map.map { [NoteResource(map: $0)] } ?? []) + files
        draft.mapPending = mapPending
        try Attachments.checkNote(content: draft.content, resources: draft.resources)
        let note = if let historyFix {
            try await outbox.enqueue(note: draft, onFix: historyFix)
        } else {
            try await outbox.enqueue(fix: fix, note: draft)
        }
        await maps?.finishCaching()
        return Outcome(note: note, fix: fix, addressProblem: addressProblem, mapProblem: mapProblem, mapPending: mapPending)
    }

    private func makeMap(_ fix: Fix) async -> Result<MapImage, MapError>? {
        guard let maps else { return nil }
        do {
            return .success(try await maps.render(fix, budget: mapBudget))
        } catch {
            return .failure(error)
        }
    }

    /// The fix is the user's; the address is someone else's text. When the note renders without
    /// the address, the address was at fault: keep the note, its address pending. When it does
    /// not, the template is at fault, and that error is the one to report.
    ///
    /// Without a geocoder (geocoding off) no address will come: the note is final with its
    /// coordinates alone, not "Address pending".
    private func render(_ fix: Fix, _ place: Place?, map: MapReference?, entry: DiaryEntry, addressProblem: String?,
                        placeName: String?) throws -> (NoteDraft, String?) {
        let pending = lookup != nil || addressLater
        guard let place else {
            return (try renderer.render(fix: fix, place: nil, map: map, entry: entry, addressPending: pending, placeName: placeName),
                    addressProblem)
        }
        let withAddress = Result { () throws(NoteError) -> NoteDraft in
            try renderer.render(fix: fix, place: place, map: map, entry: entry, placeName: placeName)
        }
        switch withAddress {
        case .success(let draft):
            return (draft, addressProblem)
        case .failure(let error):
            let draft = try renderer.render(fix: fix, place: nil, map: map, entry: entry, addressPending: pending, placeName: placeName)
            return (draft, "the geocoder's answer could not be put in the note: \(error.reason)")
        }
    }
}
