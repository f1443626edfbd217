import Foundation
import Synchronization
import Testing

/// Every command and option that reads a file, given what is not a file of bounded size: an
/// endless device, a FIFO nobody writes to, a FIFO written a byte at a time for ever, a
/// directory. Each ends by itself with one error line, in bounded memory (the child's own peak,
/// from `wait4`); the deadline of the run only fails a hang.
@Suite("inputs that are not files of bounded size")
struct InputBoundsTests {
    /// Where the odd input goes: a path in the command line (`INPUT`), or standard input.
    struct Reader: Sendable, CustomStringConvertible {
        var arguments: [String]
        var standardInput = false
        /// The input's path relative to the scratch directory, when it is not `input` itself.
        var at = "input"
        /// How much of the input this reader may hold: its `InputLimit` (Sources/Support/FileBytes.swift),
        /// spelled out here so that a reader that comes to read more fails here until its bound is
        /// raised on purpose. 0 for one that refuses anything but a regular file before reading.
        var mayHold = Self.smallText
        var description: String { arguments.joined(separator: " ") }

        static let smallText = 1 << 20, enmlNote = 16 << 20, message = 16 << 20, caBundle = 8 << 20, track = 64 << 20

        /// enlog's own peak (`MeasuredRun`, not the test process's): 26 to 48 MB for the
        /// binary, Swift, Foundation, SQLite and libxml2, plus the input it holds (`watch
        /// --replay` of /dev/zero: 105 MB). The bound is 64 MiB plus the input and a quarter:
        /// a reader that reads a track's 64 MiB where its limit is 1 or 16, or a track reader
        /// that reads twice its limit (tried: 166 MB), fails.
        var peakKilobytesBound: Int { (64 << 10) + mayHold / 1024 * 5 / 4 }
    }

    enum Oddity: String, Sendable, CaseIterable {
        case endlessDevice, fifoWithoutWriter, fifoWrittenSlowly, directory

        /// Puts this oddity at `path`; the writer feeding a slowly written FIFO, to be stopped.
        func make(at path: String) throws -> SlowFIFOWriter? {
            switch self {
            case .endlessDevice: try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: "/dev/zero")
            case .directory: try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            case .fifoWithoutWriter: try #require(mkfifo(path, 0o600) == 0)
            case .fifoWrittenSlowly:
                try #require(mkfifo(path, 0o600) == 0)
                return SlowFIFOWriter(path: path)
            }
            return nil
        }
    }

    static let logAt = ["log", "--at", "1,1", "--no-sync", "--no-geocode"]
    static let readers: [Reader] = [
        Reader(arguments: ["validate", "INPUT"], mayHold: Reader.enmlNote),
        Reader(arguments: ["validate", "-"], standardInput: true, mayHold: Reader.enmlNote),
        Reader(arguments: logAt + ["--message-file", "INPUT"], mayHold: Reader.message),
        Reader(arguments: logAt + ["--message-file", "-"], standardInput: true, mayHold: Reader.message),
        Reader(arguments: logAt + ["--template", "TEMPLATE"], at: "template/title.mustache"),
        Reader(arguments: logAt + ["--attach", "INPUT"], mayHold: 0),
        Reader(arguments: ["log", "--photo", "INPUT", "--no-sync", "--no-geocode"], mayHold: 0),
        Reader(arguments: ["log", "--nmea", "INPUT", "--no-sync", "--no-geocode"], mayHold: Reader.track),
        Reader(arguments: ["log", "--nmea", "-", "--no-sync", "--no-geocode"], standardInput: true, mayHold: Reader.track),
        // Streamed: a line or a JSON token is at most 1 MiB.
        Reader(arguments: ["import", "INPUT"]),
        Reader(arguments: ["watch", "--replay", "INPUT"], mayHold: Reader.track),
        Reader(arguments: ["config", "show", "--config", "INPUT"]),
        Reader(arguments: ["auth", "status"], at: "config/enlog/credentials.json"),
    ]

    @Test(arguments: readers, Oddity.allCases)
    func endsPromptlyWithOneLineInBoundedMemory(_ reader: Reader, _ oddity: Oddity) throws {
        let home = try EnlogHome()
        let scratch = home.directory
        let input = scratch.path(reader.at)
        try FileManager.default.createDirectory(atPath: (input as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        if reader.at.hasPrefix("template/") {
            _ = try scratch.file("template/content.mustache", contents: "<div>{{latitude}}</div>")
        }
        let writer = try oddity.make(at: input)
        defer { writer?.stop() }
        let arguments = reader.arguments.map { $0 == "INPUT" ? input : $0 == "TEMPLATE" ? scratch.path("template") : $0 }
        // A short deadline for pipes and devices, so a FIFO ends in seconds.
        let environment = home.environment.merging(["ENLOG_INPUT_TIMEOUT": "2"]) { $1 }
        let result = try RedirectedRun.run(Subprocess.enlog, arguments, environment: environment,
                                           standardInput: reader.standardInput ? .file(input) : .null,
                                           memoryLimit: 2 << 30)
        let context = "\(reader) on \(oddity): status \(result.status), peak \(result.peakKilobytes) KiB of \(reader.peakKilobytesBound), stderr: \(result.standardError)"
        #expect(!result.hung, "\(context)")
        #expect(result.signal == nil, "\(context)")
        #expect(result.status != 0 && result.status != 70, "\(context)")
        let lines = result.standardError.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains("error: "), "\(context)")
        #expect(!result.standardError.contains("Fatal error"), "\(context)")
        #expect(result.peakKilobytes < reader.peakKilobytesBound, "\(context)")
        // Nothing was stored from an input that could not be read.
        if FileManager.default.fileExists(atPath: home.database) { #expect(try home.counts().notes == 0, "\(context)") }
    }

    /// One FIFO among good notes: the notes are validated, the FIFO reported, nobody waits for it.
    @Test func validatingADirectoryValidatesTheGoodFilesAndReportsAFIFO() throws {
        let scratch = try TemporaryDirectory()
        let valid = Fixtures.enml("valid").prefix(3)
        try FileManager.default.createDirectory(atPath: scratch.path("notes"), withIntermediateDirectories: true)
        for note in valid {
            try FileManager.default.copyItem(atPath: note.path, toPath: scratch.path("notes/" + note.lastPathComponent))
        }
        try #require(mkfifo(scratch.path("notes/x.enml"), 0o600) == 0)
        let result = try RedirectedRun.run(Subprocess.enlog, ["validate", "--json", scratch.path("notes")],
                                           environment: ["PATH": "/usr/bin:/bin", "HOME": scratch.url.path])
        #expect(!result.hung, "\(result.standardError)")
        #expect(result.status == 2, "\(result.standardError)")
        #expect(result.standardError.split(separator: "\n") == ["\(scratch.path("notes/x.enml")): error: not a regular file (a FIFO); skipped"],
                "\(result.standardError)")
        let report = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any]
        let files = report?["files"] as? [[String: Any]] ?? []
        #expect(files.count == valid.count + 1, "\(result.standardOutput)")
        #expect(files.filter { $0["valid"] as? Bool == true }.count == valid.count, "\(result.standardOutput)")
    }

    /// `network.ca_file` is read by enlog, within bounds, before any connection: libcurl's TLS
    /// library, given the path, would read an endless device or wait on a FIFO for ever.
    @Test(arguments: Oddity.allCases)
    func aCAFileThatIsNoFileIsAConfigurationError(_ oddity: Oddity) throws {
        let home = try EnlogHome()
        let input = home.directory.path("ca.pem")
        let writer = try oddity.make(at: input)
        defer { writer?.stop() }
        // A loopback tile URL on a closed port: nothing leaves the machine, whatever happens.
        let environment = home.environment.merging(["ENLOG_NETWORK_CA_FILE": input, "ENLOG_MAP_STYLE": "tiles",
                                                    "ENLOG_MAP_TILE_URL": "https://127.0.0.1:1/{z}/{x}/{y}.png",
                                                    "ENLOG_INPUT_TIMEOUT": "2"]) { $1 }
        let result = try RedirectedRun.run(Subprocess.enlog, ["map", "--at", "48.1,11.5", "--output", home.directory.path("map.png")],
                                           environment: environment, memoryLimit: 2 << 30)
        let bound = Reader(arguments: ["map"], mayHold: Reader.caBundle).peakKilobytesBound
        let context = "\(oddity): status \(result.status), peak \(result.peakKilobytes) KiB of \(bound), stderr: \(result.standardError)"
        #expect(!result.hung && result.signal == nil, "\(context)")
        #expect(result.status == 78, "\(context)")
        #expect(result.errorLines.count == 1 && result.standardError.contains("ENLOG_NETWORK_CA_FILE cannot be used: "), "\(context)")
        #expect(result.peakKilobytes < bound, "\(context)")
    }

    @Test func aBadInputTimeoutIsAConfigurationError() throws {
        let home = try EnlogHome()
        let result = try RedirectedRun.run(Subprocess.enlog, ["validate", "-"],
                                           environment: home.environment.merging(["ENLOG_INPUT_TIMEOUT": "0"]) { $1 })
        #expect(result.status == 78, "\(result.standardError)")
        #expect(result.errorLines.count == 1 && result.standardError.contains("ENLOG_INPUT_TIMEOUT"), "\(result.standardError)")
    }
}

/// Writes one byte to a FIFO every 50 ms until stopped, from its own thread: a producer that
/// never ends. Opens without blocking (retrying while no reader has the FIFO open), and takes
/// a reader's going away as the end (EPIPE, with SIGPIPE blocked on its thread).
final class SlowFIFOWriter: Sendable {
    private let stopped = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    init(path: String) {
        let thread = Thread { [self] in
            defer { self.finished.signal() }
            var pipeSignal = sigset_t()
            sigemptyset(&pipeSignal)
            sigaddset(&pipeSignal, SIGPIPE)
            pthread_sigmask(SIG_BLOCK, &pipeSignal, nil)
            var fd: Int32 = -1
            while !self.stopped.load(ordering: .relaxed) {
                if fd < 0 { fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC) }
                if fd >= 0 {
                    var byte: UInt8 = UInt8(ascii: "x")
                    if write(fd, &byte, 1) < 0 && errno == EPIPE { break }
                }
                usleep(50_000)
            }
            if fd >= 0 { close(fd) }
            // A SIGPIPE taken while blocked is dropped before the thread ends.
            var pending = sigset_t()
            if sigpending(&pending) == 0, sigismember(&pending, SIGPIPE) == 1 {
                var now = timespec()
                _ = sigtimedwait(&pipeSignal, nil, &now)
            }
        }
        thread.start()
    }

    func stop() {
        stopped.store(true, ordering: .relaxed)
        finished.wait()
    }
}
