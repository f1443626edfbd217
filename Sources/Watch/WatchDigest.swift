import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Auth
import Capture
import Compose
import Outbox
import Diary
import Sync

/// `watch.digest = true`: the previous day's digest, written by a running watch once the day is
/// over (a minute past midnight in note.time_zone, so the day's last fix is in), and at start for
/// a day that ended while no watch ran. The outbox remembers digested days, so restarts never
/// write one twice.
extension Watcher {
    /// How long after midnight the digest is written.
    package static let digestDelay: TimeInterval = 60

    /// When the next digest is due after `now`: a minute past the coming midnight.
    package static func nextDigestTime(after now: Date, timeZone: TimeZone) -> Date {
        TrackDay(containing: now, timeZone: timeZone).end.addingTimeInterval(digestDelay)
    }
}

extension Watcher.Loop {
    /// Writes the previous day's digest when not written yet (`WatchStateMachine` asks only
    /// when the setting is on, and sets the timer for the next).
    func writeDigest() async {
        let zone = TrackDay.timeZone(config: config)
        let now = Date()
        // Before the grace minute after midnight the day before yesterday is the one that is over and settled.
        let today = TrackDay(containing: now.addingTimeInterval(-Watcher.digestDelay), timeZone: zone)
        let day = today.previous
        let account = watcher.dependencies.account()?.accountKey
        let digest = context.digest(outbox: watcher.outbox, accountKey: account)
        do {
            switch try await digest.write(day) {
            case .alreadyThere(let id):
                report(WatchReport(.detail, "digest", "\(day.name) has its digest already (note \(id))",
                                   ["day": .string(day.name), "id": .int(Int(id)), "written": .bool(false)]))
            case .written(let note, let statistics, let places, let mapProblem, let mapPending):
                var fields: [String: WatchReport.Value] = [
                    "day": .string(day.name), "id": .int(Int(note.id ?? 0)), "written": .bool(true),
                    "fixes": .int(statistics.fixes), "distance": .double(statistics.distance), "places": .int(places),
                ]
                if let mapProblem { fields["mapProblem"] = .string(mapProblem) }
                if mapPending { fields["mapPending"] = .bool(true) }
                report(WatchReport(.event, "digest", "wrote the digest of \(day.name) as note \(note.id ?? 0): \(note.title)", fields))
            }
        } catch let error as DigestError {
            report(WatchReport(.detail, "digest", "\(error.reason)", ["day": .string(day.name), "written": .bool(false)]))
        } catch {
            report(WatchReport(.problem, "digest-failed", "could not write the digest of \(day.name): \((error as? any ENLogError)?.reason ?? "\(error)")"))
        }
    }
}
