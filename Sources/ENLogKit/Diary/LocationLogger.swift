import Foundation

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
    }

    private let outbox: OutboxStore
    private let renderer: NoteRenderer
    private let lookup: (any PlaceLookup)?
    private let lookupBudget: Duration
    /// The account signed in when the note is queued; sync uploads it to that account only.
    private let account: String?

    public init(outbox: OutboxStore, renderer: NoteRenderer, lookup: (any PlaceLookup)?, lookupBudget: Duration = .seconds(3),
                account: String? = nil) {
        self.account = account
        self.outbox = outbox
        self.renderer = renderer
        self.lookup = lookup
        self.lookupBudget = lookupBudget
    }

    public func log(from source: any LocationSource) async throws -> Outcome {
        let fix = try await source.currentFix()
        var addressProblem: String?
        var place: Place?
        if let lookup {
            do {
                place = try await withDeadline(lookupBudget) { try await lookup.place(for: fix) }
            } catch {
                addressProblem = (error as? any ENLogError)?.reason ?? "\(error)"
            }
        }
        var draft: NoteDraft
        (draft, addressProblem) = try render(fix, place, addressProblem: addressProblem)
        draft.account = account
        let note = try await outbox.enqueue(fix: fix, note: draft)
        return Outcome(note: note, fix: fix, addressProblem: addressProblem)
    }

    /// The fix is the user's; the address is someone else's text. When the note renders without
    /// the address, the address was at fault: keep the note, its address pending. When it does
    /// not, the template is at fault, and that error is the one to report.
    private func render(_ fix: Fix, _ place: Place?, addressProblem: String?) throws -> (NoteDraft, String?) {
        guard let place else { return (try renderer.render(fix: fix, place: nil), addressProblem) }
        let withAddress = Result { () throws(NoteError) -> NoteDraft in try renderer.render(fix: fix, place: place) }
        switch withAddress {
        case .success(let draft):
            return (draft, addressProblem)
        case .failure(let error):
            let draft = try renderer.render(fix: fix, place: nil)
            return (draft, "the geocoder's answer could not be put in the note: \(error.reason)")
        }
    }
}
