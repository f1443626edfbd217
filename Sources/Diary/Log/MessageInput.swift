import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Capture
import Compose
import Outbox

/// Words for a note that could not be had.
package enum MessageError: ENLogError, Equatable {
    case unreadable(path: String, reason: String)
    /// `--message-file -` with standard input closed (`<&-`), not merely empty.
    case standardInputClosed
    /// `-e` without `$VISUAL` or `$EDITOR`.
    case noEditor
    /// `-e` with standard input not a terminal: an editor would have no one to talk to.
    case noTerminal
    /// The editor exited non-zero or was killed; `kept` is the file holding what was typed, if any.
    case editorFailed(command: String, status: String, kept: String?)
    /// The editor left the file empty: taken as "do not log", as git takes an empty commit message.
    case emptyFromEditor

    package var reason: String {
        switch self {
        case .unreadable(let path, let reason):
            return "cannot read the message from \(path): \(reason)"
        case .standardInputClosed:
            return "cannot read the message from standard input: it is closed"
        case .noEditor:
            return "-e needs an editor: set VISUAL or EDITOR"
        case .noTerminal:
            return "-e needs a terminal: standard input is not one"
        case .editorFailed(let command, let status, let kept):
            return "the editor (\(command)) \(status); nothing was stored" + (kept.map { " (what you typed is in \($0))" } ?? "")
        case .emptyFromEditor:
            return "the message is empty; nothing was stored"
        }
    }

    package var recoverySuggestion: String? {
        switch self {
        case .noEditor, .noTerminal: return "give the words with -m TEXT or --message-file FILE"
        default: return nil
        }
    }

    package var category: ErrorCategory {
        switch self {
        case .unreadable, .standardInputClosed: return .noInput
        case .noEditor, .noTerminal, .editorFailed, .emptyFromEditor: return .usage
        }
    }
}

/// Where `enlog log` takes a note's words from: `-m` (each one a paragraph), a file or standard
/// input, and `-e` (the editor, started with what the others gave).
package struct MessageInput: Sendable {
    package var paragraphs: [String]
    package var file: String?
    package var edit: Bool

    package static let standardInputPath = "-"

    package init(paragraphs: [String] = [], file: String? = nil, edit: Bool = false) {
        self.paragraphs = paragraphs
        self.file = file
        self.edit = edit
    }

    /// The words, or nil when none were asked for (or all given were blank).
    /// - Parameter arguments: the command line as the kernel passed it, to tell a `-m` that was
    ///   not UTF-8 (which the argument parser repaired into U+FFFD) from one that was.
    package func read(environment: [String: String] = ProcessInfo.processInfo.environment,
                     arguments: [[UInt8]] = Self.rawArguments()) throws(MessageError) -> String? {
        for paragraph in paragraphs where paragraph.unicodeScalars.contains("\u{FFFD}") {
            for raw in arguments where String(decoding: raw, as: UTF8.self) == paragraph {
                do throws(FileBytes.ReadError) {
                    _ = try FileBytes.utf8Text(raw)
                } catch {
                    throw .unreadable(path: "-m", reason: error.reason)
                }
            }
        }
        var parts = paragraphs
        if let file { parts.append(try Self.readFile(file)) }
        var text = parts.filter { !$0.allSatisfy(\.isWhitespace) }.joined(separator: "\n\n")
        if edit {
            text = try MessageEditor(environment: environment).edit(text)
            if text.allSatisfy(\.isWhitespace) { throw .emptyFromEditor }
        }
        return text.allSatisfy(\.isWhitespace) ? nil : text
    }

    static func readFile(_ path: String) throws(MessageError) -> String {
        if path == standardInputPath && StandardInput.wasClosed { throw .standardInputClosed }
        let name = path == standardInputPath ? "standard input" : path
        let text: String
        do throws(FileBytes.ReadError) {
            text = path == standardInputPath ? try FileBytes.utf8Text(try FileBytes.readStandardInput(limit: .message))
                                             : try FileBytes.readText(path, limit: .message)
        } catch {
            throw .unreadable(path: name, reason: error.reason)
        }
        // NUL is valid UTF-8 but never text: 100 MB of it would otherwise be cleaned into an
        // empty message (a note cannot carry it) and logged as none.
        if let nul = text.utf8.firstIndex(of: 0) {
            throw .unreadable(path: name, reason: "it holds NUL bytes (the first at offset \(text.utf8.distance(from: text.utf8.startIndex, to: nul))): not text")
        }
        return text
    }

    /// The process's arguments as bytes, undecoded.
    package static func rawArguments() -> [[UInt8]] {
        (0..<Int(CommandLine.argc)).compactMap { index in
            CommandLine.unsafeArgv[index].map { Array(UnsafeBufferPointer(start: UnsafeRawPointer($0).assumingMemoryBound(to: UInt8.self), count: strlen($0))) }
        }
    }
}

/// `$VISUAL`, else `$EDITOR`, run by the shell (so "code --wait" works) on a temporary file on
/// the terminal enlog was started from.
struct MessageEditor {
    let command: String?

    init(environment: [String: String]) {
        command = [environment["VISUAL"], environment["EDITOR"]].compactMap { $0 }.first { !$0.allSatisfy(\.isWhitespace) }
    }

    func edit(_ initial: String) throws(MessageError) -> String {
        guard let command else { throw .noEditor }
        guard isatty(STDIN_FILENO) == 1 else { throw .noTerminal }
        var template = Array((FileManager.default.temporaryDirectory.path + "/enlog-message-XXXXXX.txt").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemps($0.baseAddress!, 4) }
        guard descriptor >= 0 else {
            throw .unreadable(path: "a temporary file", reason: String(cString: strerror(errno)))
        }
        let path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        var keep = false
        defer { if !keep { unlink(path) } }
        let written = initial.isEmpty ? "" : initial + "\n"
        do {
            try handle.write(contentsOf: Data(written.utf8))
            try handle.close()
        } catch {
            throw .unreadable(path: path, reason: "\(error)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command + " \"$1\"", "sh", path]
        do {
            try process.run()
        } catch {
            throw .editorFailed(command: command, status: "could not be started (\(error))", kept: nil)
        }
        process.waitUntilExit()
        let text = try? MessageInput.readFile(path)
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            let status = process.terminationReason == .exit ? "exited with status \(process.terminationStatus)"
                                                            : "was killed by signal \(process.terminationStatus)"
            // Words typed before the editor failed are not thrown away.
            keep = text.map { !$0.allSatisfy(\.isWhitespace) && $0 != written } ?? false
            throw .editorFailed(command: command, status: status, kept: keep ? path : nil)
        }
        guard let text else { return try MessageInput.readFile(path) }
        return text
    }
}
