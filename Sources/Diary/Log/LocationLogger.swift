import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Capture
import Compose
import Outbox

/// What `enlog log` (and `watch`, `import --notes`) does with a fix, in this order:
/// 1. the address (`FixAddressLookup`: the user's name for the place and the geocoder's answer,
///    the only outbox reads before the insert) and the map (`MapRenderer`, within the log's map
///    budget) looked up side by side, each owned by its own type;
/// 2. the note rendered once, from the fix, the address, the map and the user's words;
/// 3. checked against Evernote's limits;
/// 4. stored in one outbox transaction (fix and note, or the note on a fix already in the
///    history), so that a note is stored whole or not at all and never waits on the network
///    longer than the longer of the two budgets.
package struct LocationLogger: Sendable {
    package struct Outcome: Sendable {
        package var note: OutboxNote
        package var fix: Fix
        /// Why the lookup of the address failed (unreachable, too slow), when it was tried and did.
        package var addressProblem: String?
        /// Why the map could not be made now; `mapPending` says whether sync will try again.
        package var mapProblem: String?
        package var mapPending: Bool
    }

    /// Written once per note, by the insert; read by nothing here (the address side reads it).
    private let outbox: OutboxStore
    private let renderer: NoteRenderer
    private let addresses: FixAddressLookup
    /// The account signed in when the note is queued; sync uploads it to that account only.
    private let account: String?
    /// nil: no map (`map.style = none`), the one way "no map" is said.
    private let maps: MapRenderer?
    private let mapBudget: Duration
    /// No lookup now, but one before upload (`log --no-geocode`): the note waits for its address.
    /// Without it and without a geocoder, no address will come: the note is final as logged.
    private let addressLater: Bool

    /// - Parameters:
    ///   - addresses: what the note says of the fix's place (over the same `outbox`).
    ///   - maps: makes the note's map image (nil: no map); `mapBudget` bounds it.
    package init(outbox: OutboxStore, renderer: NoteRenderer, addresses: FixAddressLookup, account: String? = nil,
                maps: MapRenderer? = nil, mapBudget: Duration = .seconds(3), addressLater: Bool = false) {
        self.outbox = outbox
        self.renderer = renderer
        self.addresses = addresses
        self.account = account
        self.maps = maps
        self.mapBudget = mapBudget
        self.addressLater = addressLater
    }

    /// - Parameters:
    ///   - message: the user's words, placed by the template and kept with the note.
    ///   - attachments: files (`Attachments.load`) carried as resources of the note, stored with
    ///     it; the note with all of them is checked against Evernote's limits before it is stored.
    package func log(from source: any LocationSource, message: String? = nil, attachments: [NoteResource] = []) async throws -> Outcome {
        try await log(try await source.currentFix(), historyFix: nil, message: message, attachments: attachments)
    }

    /// - Parameter historyFix: the fix's row when it is in the history already (`enlog import
    ///   --notes`): the note is written on it instead of storing the fix again.
    package func log(_ fix: Fix, historyFix: Int64?, message: String? = nil, attachments: [NoteResource] = []) async throws -> Outcome {
        // 1. The address and the map, side by side; only a failing database throws (what else
        // went wrong is kept).
        async let address = addresses.address(of: fix)
        async let map = map(of: fix)
        let found = try await address
        let (image, mapProblem, mapPending) = await map

        // 2. Rendered once (again without the address only when the address breaks the template).
        let files = attachments.filter { $0.hash != image?.md5 }   // a file identical to the map is the map
        var (draft, addressProblem) = try render(fix, found.place, map: image.map(MapReference.init),
                                                 entry: DiaryEntry(message: message, attachments: files), placeName: found.placeName)
        addressProblem = addressProblem ?? found.lookupProblem
        draft.account = account
        if let named = found.placeName { draft.placeName = named }
        draft.resources = (image.map { [NoteResource(map: $0)] } ?? []) + files
        draft.mapPending = mapPending

        // 3. Evernote's limits, before anything is stored.
        try Attachments.checkNote(content: draft.content, resources: draft.resources)

        // 4. One write.
        let note = if let historyFix {
            try await outbox.enqueue(note: draft, onFix: historyFix)
        } else {
            try await outbox.enqueue(fix: fix, note: draft)
        }
        await maps?.finishCaching()
        return Outcome(note: note, fix: fix, addressProblem: addressProblem, mapProblem: mapProblem, mapPending: mapPending)
    }

    /// The fix's map, or why there is none now and whether sync makes it later.
    private func map(of fix: Fix) async -> (MapImage?, problem: String?, pending: Bool) {
        guard let maps else { return (nil, nil, false) }
        do throws(MapError) {
            return (try await maps.render(fix, budget: mapBudget), nil, false)
        } catch {
            return (nil, error.reason, error.isRetryable)
        }
    }

    /// The fix is the user's; the address is someone else's text. When the note renders without
    /// the address, the address was at fault: keep the note, its address pending, and say why.
    /// When it does not, the template is at fault, and that error is the one to report.
    ///
    /// Without a geocoder (geocoding off) no address will come: the note is final with its
    /// coordinates alone, not "Address pending".
    private func render(_ fix: Fix, _ place: Place?, map: MapReference?, entry: DiaryEntry,
                        placeName: String?) throws -> (NoteDraft, addressProblem: String?) {
        let pending = addresses.looksUp || addressLater
        let withoutAddress = { () throws(NoteError) -> NoteDraft in
            try renderer.render(fix: fix, place: nil, map: map, entry: entry, addressPending: pending, placeName: placeName)
        }
        guard let place else { return (try withoutAddress(), nil) }
        do {
            return (try renderer.render(fix: fix, place: place, map: map, entry: entry, placeName: placeName), nil)
        } catch {
            return (try withoutAddress(), "the geocoder's answer could not be put in the note: \(error.reason)")
        }
    }
}
