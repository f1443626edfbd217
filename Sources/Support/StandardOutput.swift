import Foundation
import Synchronization

/// Standard output could not be written: a full disk (`>/dev/full`), a closed descriptor (`>&-`),
/// a reader that went away (EPIPE). Foundation's `FileHandle.write` stops the program on these;
/// every command's output goes through `StandardOutput` instead, which says so.
package struct OutputError: ENLogError, Equatable {
    /// The `errno` of the failed write.
    package let code: Int32
    /// Standard output was already closed when enlog started.
    package let closedAtStart: Bool

    /// The reader of a pipe closed it (`enlog queue list | head -1`): conventionally no error at
    /// all, the program just ends, as `cat` would.
    package var isClosedPipe: Bool { code == EPIPE }

    /// What went wrong, without "cannot write to standard output" (for messages that have their own start).
    package var detail: String {
        if closedAtStart { return "standard output is closed" }
        if isClosedPipe { return "the reader of standard output closed it (\(String(cString: strerror(code))))" }
        return String(cString: strerror(code))
    }

    package var reason: String { "cannot write to standard output: \(detail)" }
    package var category: ErrorCategory { .ioError }
}

package enum StandardOutput {
    private static let closedAtStart = Atomic<Bool>(false)

    /// Call first thing in `main`, after `StandardInput.holdIfClosed()` and before anything opens
    /// a file: a closed fd 1 or 2 would otherwise be handed to the next file opened, and output
    /// meant for the terminal written into it. fd 1 is held by /dev/null opened read-only, so
    /// writes fail (EBADF) as they would have; fd 2 by /dev/null for writing, where messages
    /// nobody can read go. SIGPIPE is caught and dropped, so a closed pipe is an EPIPE a command
    /// handles (and a socket's peer going away never ends the program). Caught, not ignored: an
    /// ignored signal stays ignored in the programs enlog starts (the editor, a browser), a
    /// caught one is back to its default there.
    package static func prepare() {
        if hold(STDOUT_FILENO, flags: O_RDONLY) { closedAtStart.store(true, ordering: .relaxed) }
        _ = hold(STDERR_FILENO, flags: O_WRONLY)
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in }
        action.sa_flags = SA_RESTART
        sigemptyset(&action.sa_mask)
        sigaction(SIGPIPE, &action, nil)
    }

    /// Puts /dev/null at `descriptor` when it is closed; true when it was.
    private static func hold(_ descriptor: Int32, flags: Int32) -> Bool {
        guard fcntl(descriptor, F_GETFD) == -1, errno == EBADF else { return false }
        let null = open("/dev/null", flags)
        if null >= 0 && null != descriptor {
            dup2(null, descriptor)
            close(null)
        }
        return true
    }

    /// `text` as a line (a newline added when it has none).
    package static func line(_ text: String) throws(OutputError) {
        try write(Data((text.hasSuffix("\n") ? text : text + "\n").utf8))
    }

    /// Bytes as they are (a PNG, a GPX file).
    package static func write(_ data: Data) throws(OutputError) {
        if let code = writeAll(STDOUT_FILENO, data) {
            throw OutputError(code: code, closedAtStart: closedAtStart.load(ordering: .relaxed))
        }
    }

    /// The `errno` of the first failed write, or nil when every byte was written.
    static func writeAll(_ descriptor: Int32, _ data: Data) -> Int32? {
        data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Int32? in
            var offset = 0
            while offset < bytes.count {
                let written = Foundation.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += written
            }
            return nil
        }
    }

    /// Ends the program as one killed by SIGPIPE ends, without a word: what `cat` or `grep` do
    /// when the reader of their output is gone, and what a shell's `pipefail` expects (141).
    package static func endForClosedPipe() -> Never {
        signal(SIGPIPE, SIG_DFL)
        raise(SIGPIPE)
        exit(128 + SIGPIPE)
    }
}

/// Messages, progress and prompts. Best effort: when standard error is full or closed there is
/// no one left to tell, and the command's exit status still says how it went.
package enum StandardError {
    /// One line: control characters in `text` (a newline or an escape sequence inside a path)
    /// are written as `\xNN`, so nothing in a message can forge a line or drive the terminal.
    package static func line(_ text: String) {
        write(TerminalText.oneLine(text.hasSuffix("\n") ? String(text.dropLast()) : text) + "\n")
    }

    /// `text` as it is (a prompt, a progress line redrawn with `\r`).
    package static func write(_ text: String) {
        _ = StandardOutput.writeAll(STDERR_FILENO, Data(text.utf8))
    }
}
