import Foundation
import Outbox

extension Watcher {
    /// An outbox deleted under watch is put back and followed (`OutboxFile`), and a deleted
    /// write-ahead log is checkpointed into it: each said once, as a problem event. One replaced by another file stops watch, whose exit error says it.
    func reportOutboxFileChanges() {
        let report = dependencies.report
        outbox.onFileChange { change in
            switch change {
            case let .vanished(path, _, keptIn, _) where keptIn == path:
                report(WatchReport(.problem, "outbox-restored", change.reason, ["path": .string(path)]))
            case let .logLost(path, true, nil):
                report(WatchReport(.problem, "outbox-log-restored", change.reason, ["path": .string(path)]))
            default:
                return
            }
        }
    }
}
