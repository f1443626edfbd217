import Foundation
import Synchronization
import Support
import EvernoteAPI
import Configuration
import Network
import Auth
import Capture
import Compose
import Outbox
import Diary

/// What `enlog sync` (and `export`, with its own `label`) prints on stderr while it works. On a
/// terminal: one progress line, rewritten in place (`sync: 3/10 notes, about 12 s left`), erased
/// at the end. With `verbose`: one line per note (`note 3 uploaded <guid>`) and the address
/// decisions, terminal or not. Anything else gets nothing, so a pipe or a log file never sees
/// carriage-return noise.
package final class SyncProgressPrinter: Sendable {
    private let label: String
    private let terminal: Bool
    private let verbose: Bool
    private let write: @Sendable (String) -> Void
    private let now: @Sendable () -> ContinuousClock.Instant
    /// Held while a line is written, so that lines from events on different threads never interleave.
    private let state = Mutex(Progress())

    private struct Progress {
        var total = 0
        var done = 0
        var started: ContinuousClock.Instant?
        var showing = false
    }

    package init(label: String = "sync", terminal: Bool, verbose: Bool, write: @escaping @Sendable (String) -> Void,
                now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }) {
        self.label = label
        self.terminal = terminal
        self.verbose = verbose
        self.write = write
        self.now = now
    }

    package func handle(_ event: SyncEvent) {
        switch event {
        case .started(let total): start(total: total)
        case .note(let id, let action, let guid): advance("note \(id) \(action.rawValue)" + (guid.map { " \($0)" } ?? ""))
        case .notice(let text): notice(text)
        case .warning(let text): say("enlog: warning: \(text)")
        }
    }

    /// The run begins with `total` notes to go.
    package func start(total: Int) {
        state.withLock { progress in
            progress.total = total
            progress.started = now()
            redraw(&progress)
        }
    }

    /// One note done; `line` says what became of it (printed when verbose).
    package func advance(_ line: String) {
        state.withLock { progress in
            progress.done += 1
            if verbose { emit(line, &progress) }
            redraw(&progress)
        }
    }

    /// A line for verbose output only.
    package func notice(_ text: String) {
        state.withLock { progress in
            if verbose { emit("\(label): \(text)", &progress) }
        }
    }

    /// A line printed whatever the verbosity (a warning), below the progress line.
    package func say(_ line: String) {
        state.withLock { progress in emit(line, &progress) }
    }

    /// A progress line redrawn with carriage returns needs a terminal that understands them:
    /// stderr is a TTY and TERM is set and not "dumb" (Emacs shells, CI logs).
    package static func drawsProgress(standardErrorIsTerminal: Bool = isatty(STDERR_FILENO) == 1,
                                     environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        guard standardErrorIsTerminal, let term = environment["TERM"], !term.isEmpty else { return false }
        return term != "dumb"
    }

    /// Erases the progress line (call before the summary is printed).
    package func finish() {
        state.withLock { progress in
            if progress.showing { write("\r\u{1B}[K") }
            progress.showing = false
        }
    }

    /// `sync: 3/10 notes, about 12 s left` (no estimate before the first note is done).
    static func line(done: Int, total: Int, elapsed: Duration, label: String = "sync") -> String {
        let total = max(total, done)
        var text = "\(label): \(done)/\(counted(total, "note"))"
        if done > 0, done < total {
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            let left = Int((seconds / Double(done) * Double(total - done)).rounded(.up))
            text += left < 120 ? ", about \(left) s left" : ", about \(left / 60) min left"
        }
        return text
    }

    private func redraw(_ progress: inout Progress) {
        guard terminal, progress.total > 0, let started = progress.started else { return }
        write("\r\u{1B}[K" + Self.line(done: progress.done, total: progress.total, elapsed: now() - started, label: label))
        progress.showing = true
    }

    /// A whole line, below the progress line (which is redrawn after it).
    private func emit(_ text: String, _ progress: inout Progress) {
        write((progress.showing ? "\r\u{1B}[K" : "") + text + "\n")
        progress.showing = false
    }
}
