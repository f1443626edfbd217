import Foundation
import Synchronization

/// How much of one kind of input enlog reads before it calls the input too large: an endless
/// source (`/dev/zero`, `yes |`) ends there instead of filling the memory.
package struct InputLimit: Sendable, Equatable {
    package let maximumBytes: Int

    package init(maximumBytes: Int) {
        self.maximumBytes = maximumBytes
    }

    /// An ENML note: EDAM_NOTE_CONTENT_LEN_MAX is 5,242,880 characters, at most 3 bytes of
    /// UTF-8 each; a longer file is still read whole so the validator can say how long it is.
    package static let enmlNote = InputLimit(maximumBytes: 16 << 20)
    /// A note's words (`--message-file`): they go into a note of that size too.
    package static let message = InputLimit(maximumBytes: 16 << 20)
    /// `title.mustache`, `content.mustache`, config.toml, the credentials: small by nature.
    package static let smallText = InputLimit(maximumBytes: 1 << 20)
    /// An NMEA log for `log --nmea` and `watch --nmea` (`import` streams files of any size).
    package static let track = InputLimit(maximumBytes: 64 << 20)
    /// `network.ca_file`: the whole Mozilla bundle is about 220 KB.
    package static let caBundle = InputLimit(maximumBytes: 8 << 20)
}

/// The longest a read of standard input, a pipe, a FIFO or a device may take (a regular file
/// is bounded by its size): a FIFO nobody writes, or one written a byte a minute, ends in an
/// error instead of holding enlog for ever. A terminal has no deadline: a person is typing.
/// `ENLOG_INPUT_TIMEOUT` (seconds) changes it for slow producers; Config checks and sets it.
package enum InputDeadline {
    package static let defaultSeconds = 60.0
    package static let environmentName = "ENLOG_INPUT_TIMEOUT"
    private static let milliseconds = Atomic<Int>(Int(defaultSeconds * 1000))

    package static func set(seconds: Double) {
        milliseconds.store(max(1, Int(seconds * 1000)), ordering: .relaxed)
    }

    package static var current: Duration { .milliseconds(milliseconds.load(ordering: .relaxed)) }
}

/// The one way enlog reads a file it is given, and standard input: bounded in size (an
/// `InputLimit`) and, for anything but a regular file, in time (`InputDeadline`). Opened with
/// O_NONBLOCK, so a FIFO without a writer cannot hold the open itself; `fstat` then says what
/// the path is. Errors carry the operating system's own reason ("Permission denied"), which is
/// what a user needs to fix the problem.
package enum FileBytes {
    package enum ReadError: Error, Equatable {
        /// The operating system's `errno`.
        case system(Int32)
        /// What the path is instead of a file to read ("it is a directory"), or what its bytes are not.
        case notReadable(String)
        /// `size` is the file's when known; a stream is known only to exceed the limit.
        case tooLarge(size: Int?, limit: Int)
        case timedOut(after: Duration)

        package var reason: String {
            switch self {
            case .system(let code):
                return String(cString: strerror(code))
            case .notReadable(let reason):
                return reason
            case .tooLarge(let size?, let limit):
                return "it is \(size) bytes, over the limit of \(limit)"
            case .tooLarge(nil, let limit):
                return "it goes on past the limit of \(limit) bytes"
            case .timedOut(let after):
                let seconds = Double(after.components.seconds) + Double(after.components.attoseconds) / 1e18
                return "it did not end within \(seconds.formatted(.number.precision(.fractionLength(0...3)))) s (\(InputDeadline.environmentName) sets how long a pipe or device may take)"
            }
        }
    }

    /// What may stand at a path besides a regular file.
    package enum Accepting {
        /// Pipes, FIFOs and devices too, read within the size limit and the deadline
        /// (`--nmea <(gpspipe -r -n 40)`).
        case streams
        /// Only a regular file: what a directory holds (templates, notes found by `validate DIR`),
        /// files carried in a note, the credentials.
        case regularFilesOnly
    }

    package static func read(_ path: String, limit: InputLimit, accepting: Accepting = .streams,
                     followLinks: Bool = true) throws(ReadError) -> [UInt8] {
        try read(pathBytes: Array(path.utf8), limit: limit, accepting: accepting, followLinks: followLinks).bytes
    }

    /// A path as the file system spells it, which need not be UTF-8. Returns the bytes and the
    /// `fstat` of the file they came from (its mode, for a caller that checks permissions).
    package static func read(pathBytes path: [UInt8], limit: InputLimit, accepting: Accepting = .streams,
                     followLinks: Bool = true) throws(ReadError) -> (bytes: [UInt8], status: stat) {
        let (descriptor, status) = try openForReading(pathBytes: path, accepting: accepting, followLinks: followLinks)
        defer { close(descriptor) }
        return (try readAll(descriptor, status: status, limit: limit), status)
    }

    /// Opens `path` as `read` does (O_NONBLOCK, then `fstat` says what it is); the caller closes
    /// the descriptor. For a reader that streams the file instead of reading it whole.
    package static func openForReading(pathBytes path: [UInt8], accepting: Accepting = .streams,
                                       followLinks: Bool = true) throws(ReadError) -> (descriptor: Int32, status: stat) {
        guard !path.contains(0) else { throw .notReadable("the path holds a NUL byte") }
        let flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (followLinks ? 0 : O_NOFOLLOW)
        let descriptor = (path + [0]).withUnsafeBufferPointer { open(UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), flags) }
        guard descriptor >= 0 else { throw .system(errno) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let code = errno
            close(descriptor)
            throw .system(code)
        }
        let kind = status.st_mode & S_IFMT
        if kind == S_IFDIR {
            close(descriptor)
            throw .notReadable("it is a directory")
        }
        if kind != S_IFREG && accepting == .regularFilesOnly {
            close(descriptor)
            throw .notReadable("not a regular file (\(describe(kind)))")
        }
        return (descriptor, status)
    }

    /// Standard input, to its end, within the limit and (unless it is a file or a terminal) the deadline.
    package static func readStandardInput(limit: InputLimit) throws(ReadError) -> [UInt8] {
        var status = stat()
        guard fstat(STDIN_FILENO, &status) == 0 else { throw .system(errno) }
        if status.st_mode & S_IFMT == S_IFDIR { throw .notReadable("it is a directory") }
        return try readAll(STDIN_FILENO, status: status, limit: limit)
    }

    private static func readAll(_ descriptor: Int32, status: stat, limit: InputLimit) throws(ReadError) -> [UInt8] {
        let regular = status.st_mode & S_IFMT == S_IFREG
        if regular && Int(status.st_size) > limit.maximumBytes {
            throw .tooLarge(size: Int(status.st_size), limit: limit.maximumBytes)
        }
        let deadline = isatty(descriptor) == 1 ? nil : ContinuousClock.now + InputDeadline.current
        var bytes = [UInt8]()
        bytes.reserveCapacity(regular ? Int(status.st_size) : 0)
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            if !regular { try waitUntilReadable(descriptor, deadline: deadline) }
            // One byte past the limit is enough to know it is over.
            let wanted = min(chunk.count, limit.maximumBytes + 1 - bytes.count)
            let count = chunk.withUnsafeMutableBytes { Foundation.read(descriptor, $0.baseAddress, wanted) }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw .system(errno)
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<count])
            if bytes.count > limit.maximumBytes {
                throw .tooLarge(size: regular ? max(Int(status.st_size), bytes.count) : nil, limit: limit.maximumBytes)
            }
        }
    }

    /// Waits for data or the end of input (a FIFO no writer has opened yet reports neither);
    /// without a deadline (a terminal) as long as it takes.
    package static func waitUntilReadable(_ descriptor: Int32, deadline: ContinuousClock.Instant?) throws(ReadError) {
        while true {
            var milliseconds: Int32 = -1
            if let deadline {
                let left = ContinuousClock.now.duration(to: deadline)
                guard left > .zero else { throw .timedOut(after: InputDeadline.current) }
                milliseconds = Int32(clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
            }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, milliseconds)
            if ready > 0 { return }
            if ready < 0 && errno != EINTR { throw .system(errno) }
        }
    }

    /// What stands at `path` (links followed) when it is neither a regular file nor a directory:
    /// "a FIFO"; nil otherwise, or when nothing does.
    package static func specialFileKind(pathBytes path: [UInt8]) -> String? {
        var status = stat()
        guard !path.contains(0),
              (path + [0]).withUnsafeBufferPointer({ stat(UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), &status) }) == 0
        else { return nil }
        let kind = status.st_mode & S_IFMT
        return kind == S_IFREG || kind == S_IFDIR ? nil : describe(kind)
    }

    package static func describe(_ kind: mode_t) -> String {
        switch kind {
        case S_IFIFO: return "a FIFO"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFSOCK: return "a socket"
        default: return "not a file"
        }
    }

    /// A whole file as UTF-8 text. Decoding leniently would turn a Latin-1 "é" into U+FFFD in
    /// every note, so a file in another encoding is an error naming its first bad byte.
    package static func readText(_ path: String, limit: InputLimit, accepting: Accepting = .streams) throws(ReadError) -> String {
        try utf8Text(try read(path, limit: limit, accepting: accepting))
    }

    package static func utf8Text(_ bytes: [UInt8]) throws(ReadError) -> String {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            let offset = firstInvalidUTF8Offset(bytes)
            throw .notReadable("not UTF-8 text (byte 0x\(String(format: "%02X", bytes[offset])) at offset \(offset); save it as UTF-8)")
        }
        return text
    }

    /// Where UTF-8 decoding of `bytes` first fails (the start of the first bad sequence).
    package static func firstInvalidUTF8Offset(_ bytes: [UInt8]) -> Int {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        var offset = 0
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): offset += UTF8.width(scalar)
            case .emptyInput, .error: return min(offset, max(bytes.count - 1, 0))
            }
        }
    }
}
