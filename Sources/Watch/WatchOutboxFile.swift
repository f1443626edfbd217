import Foundation
import Outbox

extension Watcher {
    /// An outbox deleted under watch is put back and followed (`OutboxFile`): said once, as a
    /// problem event. One replaced by another file stops watch, whose exit error says it.
    func reportOutboxFileChanges() {
        let report = dependencies.report
        outbox.onFileChange { change in
            guard case let .vanished(path, _, keptIn, _) = change, keptIn == path else { return }
            report(WatchReport(.problem, "outbox-restored", change.reason, ["path": .string(path)]))
        }
    }
}
