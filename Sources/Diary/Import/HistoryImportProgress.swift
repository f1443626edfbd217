import Foundation
import Support

/// The progress line of `enlog import` on a terminal (standard error): bytes read of the file's
/// size, points, and the time left at the rate so far; redrawn at most twice a second, cleared
/// when the file is done. Only made when standard error is a terminal.
package final class HistoryImportProgress {
    private var path = ""
    private var size: Int?
    private var started = ContinuousClock.now
    private var drawn: ContinuousClock.Instant?

    package static func forTerminal() -> HistoryImportProgress? {
        isatty(STDERR_FILENO) == 1 ? HistoryImportProgress() : nil
    }

    func startFile(_ path: String, size: Int?) {
        self.path = path
        self.size = size
        started = .now
        drawn = nil
    }

    func update(bytes: Int, points: Int) {
        let now = ContinuousClock.now
        if let drawn, drawn.duration(to: now) < .milliseconds(500) { return }
        drawn = now
        let elapsed = started.duration(to: now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        var line = "\(TerminalText.oneLine((path as NSString).lastPathComponent)): \(Self.megabytes(bytes))"
        if let size, size > 0 {
            line += " of \(Self.megabytes(size)) (\(min(100, bytes * 100 / size)) %)"
            if bytes > 0, seconds > 1 {
                let left = seconds * Double(size - bytes) / Double(bytes)
                line += ", \(Int(left.rounded())) s left"
            }
        }
        line += ", \(points) points"
        StandardError.write("\r\u{1B}[K" + line)
    }

    func endFile() {
        if drawn != nil { StandardError.write("\r\u{1B}[K") }
    }

    private static func megabytes(_ bytes: Int) -> String {
        String(format: "%.1f MB", Double(bytes) / 1_000_000)
    }
}
