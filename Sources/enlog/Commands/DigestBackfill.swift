import ArgumentParser
import Foundation
import Support
import Configuration
import Auth
import Compose
import Outbox
import Diary
import Sync
import CoreCommands

/// `enlog digest --since DAY --until DAY`: the missing digests of a span, once each. A day
/// with its digest is passed over and a day without fixes has none, so a run stopped half-way
/// goes on where it stopped when run again.
struct DigestBackfill {
    /// A hundred years of days: a span beyond is a typo, and would only walk empty days.
    static let longestSpan = 36_525

    struct DayResult: Encodable {
        var day: String
        /// written, alreadyThere or noFixes.
        var outcome: String
        var note: Int64?
    }

    let context: RunContext
    let since: String?
    let until: String?
    let date: String?
    let json: Bool
    let noSync: Bool
    /// The digests of this device's points (nil: the whole history's).
    let device: String?

    func run(zone: TimeZone) async throws {
        guard date == nil else { throw ValidationError("--date is one day: leave out --since and --until") }
        guard let since, let until else { throw ValidationError("a backfill needs both --since and --until") }
        guard let first = TrackDay(since, timeZone: zone) else { throw ValidationError("--since '\(since)' is not a date like 2026-11-22") }
        guard let stop = TrackDay(until, timeZone: zone) else { throw ValidationError("--until '\(until)' is not a date like 2026-11-22") }
        guard first.start < stop.start else { throw ValidationError("--since must come before --until") }
        guard stop.start.timeIntervalSince(first.start) < Double(Self.longestSpan) * 86_400 else {
            throw ValidationError("a backfill spans at most \(Self.longestSpan) days")
        }
        let outbox = try context.outbox(.change)
        try await outbox.checkDevice(device)
        let account = (try? Account.credentialStore().loadIfPresent()).flatMap { $0 }.map { EvernoteAccount(credentials: $0).accountKey }
        let digest = context.digest(outbox: outbox, accountKey: account, device: device)
        var results: [DayResult] = []
        var day = first
        while day.start < stop.start {
            do {
                switch try await digest.write(day) {
                case .alreadyThere(let id):
                    results.append(DayResult(day: day.name, outcome: "alreadyThere", note: id))
                case .written(let note, _, _, let mapProblem, let mapPending):
                    results.append(DayResult(day: day.name, outcome: "written", note: note.id))
                    if !json { try Terminal.standardOutput("\(day.name): logged note \(note.id!): \(note.title)") }
                    if let mapProblem, !json {
                        Terminal.standardError("enlog: \(day.name): no route map \(mapPending ? "yet " : "")(\(mapProblem))")
                    }
                }
            } catch is DigestError {
                results.append(DayResult(day: day.name, outcome: "noFixes", note: nil))
            }
            day = TrackDay(containing: day.end, timeZone: zone)
        }
        let written = results.filter { $0.outcome == "written" }.count
        if json {
            try Terminal.standardOutput(try JSONOutput.encode(results))
        } else {
            let had = results.filter { $0.outcome == "alreadyThere" }.count
            try Terminal.standardOutput("\(written) digest\(written == 1 ? "" : "s") written, \(had) already there, \(results.count - written - had) days without fixes")
        }
        if written > 0, !noSync, let credentials = try? Account.credentialStore().loadIfPresent() {
            let session = SyncSession(context: context, outbox: outbox, account: EvernoteAccount(credentials: credentials))
            if case .failed(let error) = await session.runOpportunistically(loggedNote: results.last { $0.outcome == "written" }!.note!) {
                Terminal.standardError("enlog: upload failed: \(error.reason); the digests stay queued, run `enlog sync`")
            }
        }
    }
}
