import Foundation
import Synchronization
import Support
import Outbox

/// The diary of a machine where nothing was logged yet: an outbox with no notes, set up in a
/// file of its own under `TMPDIR` that is removed when the process ends, so that a reading
/// command (`queue list`, `history`, `timeline`, `places`, `export`, and whichever comes later)
/// answers as it would on an empty outbox (its usual empty text, `[]` with `--json`, an empty
/// GPX) rather than with an error, and creates nothing where the real outbox will be.
enum EmptyDiary {
    /// The temporary outboxes this process made (one at most in practice), removed at exit.
    private static let made = Mutex<[String]>([])
    private static let removesAtExit: Void = {
        atexit { EmptyDiary.removeAll() }
    }()

    /// A new empty outbox, or nil when none can be made (no writable `TMPDIR`, a full disk):
    /// the caller then reports the missing outbox as before.
    static func open(busyTimeout: TimeInterval = OutboxStore.defaultBusyTimeout) -> OutboxStore? {
        let folder = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((folder + "/enlog-empty-diary-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else { return nil }
        close(descriptor)
        let path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        _ = removesAtExit
        made.withLock { $0.append(path) }
        // A signal ends the process without running `atexit`: the files go then too.
        for file in [path, path + "-wal", path + "-shm"] { _ = SignalCleanup.removeOnSignal(file) }
        do {
            let outbox = try OutboxStore(path: path, busyTimeout: busyTimeout, access: .create)
            unlink(path + ".migrate-lock")
            return outbox
        } catch {
            remove(path)
            return nil
        }
    }

    /// The file and whatever was made beside it under its unique name (`-wal`, `-shm`, the
    /// migration and sync locks).
    private static func remove(_ path: String) {
        let folder = (path as NSString).deletingLastPathComponent, name = (path as NSString).lastPathComponent
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] where entry.hasPrefix(name) {
            unlink(folder + "/" + entry)
        }
    }

    private static func removeAll() {
        for path in made.withLock({ $0 }) { remove(path) }
    }
}
