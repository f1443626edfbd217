import Foundation

/// What `enlog sync` prints on stderr while it works. On a terminal: one progress line,
/// rewritten in place (`sync: 3/10 notes, about 12 s left`), erased at the end. With `verbose`:
/// one line per note (`note 3 uploaded <guid>`) and the address decisions, terminal or not.
/// Anything else gets nothing, so a pipe or a log file never sees carriage-return noise.
public final class SyncProgressPrinter: @unchecked Sendable {
    private let lock = NSLock()
    private let terminal: Bool
    private let verbose: Bool
    private let write: @Sendable (String) -> Void
    private let now: @Sendable () -> ContinuousClock.Instant
    private var total = 0
    private var done = 0
    private var started: ContinuousClock.Instant?
    private var showing = false

    public init(terminal: Bool, verbose: Bool, write: @escaping @Sendable (String) -> Void,
                now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }) {
        self.terminal = terminal
        self.verbose = verbose
        self.write = write
        self.now = now
    }

    public func handle(_ event: SyncEvent) {
        lock.withLock {
            switch event {
            case .started(let total):
                self.total = total
                started = now()
                redraw()
            case .note(let id, let action, let guid):
                done += 1
                if verbose { emit("note \(id) \(action.rawValue)" + (guid.map { " \($0)" } ?? "")) }
                redraw()
            case .notice(let text):
                if verbose { emit("sync: \(text)") }
            }
        }
    }

    /// Erases the progress line (call before the summary is printed).
    public func finish() {
        lock.withLock {
            if showing { write("\r\u{1B}[K") }
            showing = false
        }
    }

    /// `sync: 3/10 notes, about 12 s left` (no estimate before the first note is done).
    static func line(done: Int, total: Int, elapsed: Duration) -> String {
        let total = max(total, done)
        var text = "sync: \(done)/\(total) notes"
        if done > 0, done < total {
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            let left = Int((seconds / Double(done) * Double(total - done)).rounded(.up))
            text += left < 120 ? ", about \(left) s left" : ", about \(left / 60) min left"
        }
        return text
    }

    private func redraw() {
        guard terminal, total > 0, let started else { return }
        write("\r\u{1B}[K" + Self.line(done: done, total: total, elapsed: now() - started))
        showing = true
    }

    /// A whole line, below the progress line (which is redrawn after it).
    private func emit(_ text: String) {
        write((showing ? "\r\u{1B}[K" : "") + text + "\n")
        showing = false
    }
}
