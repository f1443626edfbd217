import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The one way tests start a program they talk to or stop (servers, gpsfake, holders of a lock):
/// `posix_spawn` with an empty signal mask and default dispositions, so that the child sees
/// SIGTERM (Foundation's `Process` on Linux hands down XCTest's blocked-signal mask), with its
/// stdout (and stderr, unless it goes to the test's own) on a pipe the test reads, on /dev/null, or
/// stdout alone in a file; stdin is /dev/null or a pipe the test holds and writes to (a server that
/// exits when it closes, a prompt the test answers).
/// Programs run to completion for their result go through `Subprocess.run`.
final class ChildProcess {
    let pid: pid_t
    private let readFD: Int32
    private var stdinFD: Int32 = -1
    private var buffer = Data()
    private(set) var exitStatus: Int32?
    /// Where the launcher writes the program's usage (and the directory that holds it).
    private var usageReport: (directory: TemporaryDirectory, path: String)?

    /// - Parameter environment: `NAME=value` entries; nil hands down this process's environment.
    /// - Parameter captureOutput: false sends stdout and stderr to /dev/null.
    /// - Parameter errorsToTest: stderr goes to this process's stderr (diagnostics in the test
    ///   log; a pipe nobody reads after start-up could fill up and stall the child).
    /// - Parameter standardInputPipe: the child's stdin is a pipe held until `closeStandardInput()`.
    /// - Parameter standardOutputFile: stdout goes to this file (created or truncated), so a result
    ///   read after the exit stays apart from stderr, which then alone is on the pipe (if captured).
    /// - Parameter measuringUsage: the program runs under `MeasuredRun`'s launcher, so that
    ///   `finishWithUsage` has its own peak memory and CPU; `pid` is then the launcher's, which
    ///   passes SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 on and whose death (SIGKILL) kills the program.
    init(_ path: String, _ arguments: [String], environment: [String]? = nil, captureOutput: Bool = true,
         errorsToTest: Bool = false, standardInputPipe: Bool = false, standardOutputFile: String? = nil,
         measuringUsage: Bool = false) throws {
        let report = try measuringUsage ? TemporaryDirectory() : nil
        let command = try report.map { try MeasuredRun.commandLine(report: $0.path("usage"), path, arguments) } ?? [path] + arguments
        usageReport = report.map { ($0, $0.path("usage")) }
        let path = command[0], arguments = Array(command.dropFirst())
        var fds: [Int32] = [-1, -1]
        // Close-on-exec: other children started later do not inherit a pipe end (this child gets
        // its own copies through dup2, which clears the flag). Glibc's module has no pipe2.
        if captureOutput { guard Self.closeOnExecPipe(&fds) else { throw POSIXError(.EMFILE) } }
        var input: [Int32] = [-1, -1]
        if standardInputPipe { guard Self.closeOnExecPipe(&input) else { throw POSIXError(.EMFILE) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if standardInputPipe {
            posix_spawn_file_actions_adddup2(&actions, input[0], 0)
            posix_spawn_file_actions_addclose(&actions, input[0])
            posix_spawn_file_actions_addclose(&actions, input[1])
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        if let standardOutputFile {
            posix_spawn_file_actions_addopen(&actions, 1, standardOutputFile, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        } else if captureOutput {
            posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        if !errorsToTest {
            if captureOutput {
                posix_spawn_file_actions_adddup2(&actions, fds[1], 2)
            } else {
                posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
            }
        }
        if captureOutput {
            posix_spawn_file_actions_addclose(&actions, fds[0])
            posix_spawn_file_actions_addclose(&actions, fds[1])
        }
        // Nothing else this process has open reaches the child: a descriptor another test holds
        // (a binary being copied: "Text file busy"; a server's stdin) must not stay open in it.
        // (Glibc's module has no addclosefrom_np; closing one no longer open is ignored.)
        let ownPipeEnds = Set(fds + input)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [] {
            if let fd = Int32(name), fd > 2, !ownPipeEnds.contains(fd) { posix_spawn_file_actions_addclose(&actions, fd) }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { $0.map { strdup($0) } + [nil] }
        defer { argv.forEach { free($0) }; envp?.forEach { free($0) } }
        var pid: pid_t = 0
        let status: Int32
        if let envp {
            status = envp.withUnsafeBufferPointer { posix_spawn(&pid, path, &actions, &attributes, argv, $0.baseAddress) }
        } else {
            status = posix_spawn(&pid, path, &actions, &attributes, argv, environ)
        }
        if captureOutput { close(fds[1]) }
        if standardInputPipe { close(input[0]) }
        guard status == 0 else {
            if captureOutput { close(fds[0]) }
            if standardInputPipe { close(input[1]) }
            throw NSError(domain: NSPOSIXErrorDomain, code: Int(status),
                          userInfo: [NSLocalizedDescriptionKey: "cannot start \(path)"])
        }
        self.pid = pid
        self.readFD = fds[0]
        self.stdinFD = input[1]
        eof = !captureOutput
    }

    convenience init(_ executable: URL, _ arguments: [String], environment: [String]? = nil, captureOutput: Bool = true,
                     errorsToTest: Bool = false, standardInputPipe: Bool = false, standardOutputFile: String? = nil,
                     measuringUsage: Bool = false) throws {
        try self.init(executable.path, arguments, environment: environment, captureOutput: captureOutput,
                      errorsToTest: errorsToTest, standardInputPipe: standardInputPipe,
                      standardOutputFile: standardOutputFile, measuringUsage: measuringUsage)
    }

    private static func closeOnExecPipe(_ fds: inout [Int32]) -> Bool {
        guard pipe(&fds) == 0 else { return false }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return true
    }

    /// Writes all of `data` to the child's stdin pipe (what a user would type or paste). A child
    /// that has already exited is an EPIPE error, not a SIGPIPE that ends the whole test run: the
    /// signal is blocked on this thread for the write (Linux has no F_SETNOSIGPIPE) and a pending
    /// one taken back before the mask is restored.
    func writeStandardInput(_ data: Data) throws {
        guard stdinFD >= 0 else { throw POSIXError(.EBADF) }
        var pipeSignal = sigset_t()
        sigemptyset(&pipeSignal)
        sigaddset(&pipeSignal, SIGPIPE)
        var previousMask = sigset_t()
        pthread_sigmask(SIG_BLOCK, &pipeSignal, &previousMask)
        defer {
            var pending = sigset_t()
            if sigpending(&pending) == 0, sigismember(&pending, SIGPIPE) == 1 {
                var now = timespec()
                _ = sigtimedwait(&pipeSignal, nil, &now)
            }
            pthread_sigmask(SIG_SETMASK, &previousMask, nil)
        }
        try data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            var offset = 0
            while offset < bytes.count {
                let written = write(stdinFD, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
                }
                offset += written
            }
        }
    }

    /// Closes the child's stdin pipe: it reads end of file.
    func closeStandardInput() {
        if stdinFD >= 0 { close(stdinFD) }
        stdinFD = -1
    }

    /// The first whole output line that starts with `prefix` (without it), once the child has
    /// printed it; nil when it exits or `deadline` passes first.
    func line(startingWith prefix: String, within deadline: Duration = hangDeadline) -> String? {
        func find() -> String? {
            let lines = output.split(separator: "\n", omittingEmptySubsequences: false).dropLast()   // whole lines only
            return lines.first { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
        }
        let end = ContinuousClock.now + deadline
        while ContinuousClock.now < end {
            if let found = find() { return found }
            if !readChunk(timeoutMs: 50) && (eof || !isRunning) {
                while readChunk(timeoutMs: 0) {}
                break
            }
        }
        return find()
    }

    /// No proxy variables, no inherited oddities: the child sees only what the test decides.
    static let cleanEnvironment = ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C"]

    var output: String { String(decoding: buffer, as: UTF8.self) }

    /// Reads until `marker` appears in the output (the child's own word that it is ready), the
    /// child exits, or `deadline` passes (a hang); true when it appeared.
    func waitForOutput(containing marker: String, within deadline: Duration = hangDeadline) -> Bool {
        let end = ContinuousClock.now + deadline
        while ContinuousClock.now < end {
            if output.contains(marker) { return true }
            if !readChunk(timeoutMs: 50) && (eof || !isRunning) {
                while readChunk(timeoutMs: 0) {}
                break
            }
        }
        return output.contains(marker)
    }

    /// Reads until the output so far satisfies `done` (a count of events, say), the child exits,
    /// or `deadline` passes; true when it did.
    func waitForOutput(within deadline: Duration = hangDeadline, until done: (String) -> Bool) -> Bool {
        let end = ContinuousClock.now + deadline
        while ContinuousClock.now < end {
            if done(output) { return true }
            if !readChunk(timeoutMs: 50) && (eof || !isRunning) {
                while readChunk(timeoutMs: 0) {}
                break
            }
        }
        return done(output)
    }

    /// Reads everything until EOF, then reaps the child. Returns (exit status, output); a child
    /// killed by a signal reports 128 + the signal, as a shell would.
    func finish() -> (status: Int32, output: String) {
        while readChunk(timeoutMs: -1) {}
        return (wait(), output)
    }

    /// `finish`, and what the program used, as the kernel counted it for the program alone: its
    /// peak resident memory and CPU time. Needs `measuringUsage`; nil when the launcher reported
    /// nothing (it was killed).
    func finishWithUsage() -> (status: Int32, output: String, usage: ChildUsage?) {
        precondition(usageReport != nil, "finishWithUsage needs a ChildProcess started with measuringUsage")
        let (status, output) = finish()
        return (status, output, usageReport.flatMap { MeasuredRun.usage(report: $0.path) })
    }

    /// Waits for the child to exit; its exit status (128 + signal when killed).
    @discardableResult
    func wait() -> Int32 {
        if exitStatus == nil {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            exitStatus = status
        }
        let raw = exitStatus!
        return raw & 0x7f == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
    }

    /// The signal that ended the child, once it has exited; nil when it exited by itself.
    var terminatingSignal: Int32? {
        guard let raw = exitStatus, raw & 0x7f != 0 else { return nil }
        return raw & 0x7f
    }

    private var eof: Bool
    /// One read; false on EOF or timeout.
    private func readChunk(timeoutMs: Int32) -> Bool {
        guard !eof else { return false }
        var descriptor = pollfd(fd: readFD, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, timeoutMs) > 0 else { return false }
        var chunk = [UInt8](repeating: 0, count: 4096)
        let count = read(readFD, &chunk, chunk.count)
        if count <= 0 { eof = true; return false }
        buffer.append(contentsOf: chunk[0..<count])
        return true
    }

    var isRunning: Bool {
        if exitStatus != nil { return false }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid { exitStatus = status; return false }
        return true
    }

    /// Sends `signal` and waits for the exit; SIGKILL when the child is still there after `grace`
    /// (a child that ignores the signal is not a reason to hang the suite).
    func stop(_ signal: Int32 = SIGTERM, grace: Duration = .seconds(10)) {
        guard isRunning else { return }
        Glibc.kill(pid, signal)
        let end = ContinuousClock.now + grace
        while isRunning && ContinuousClock.now < end { usleep(5_000) }
        kill()
    }

    func kill() {
        if isRunning {
            Glibc.kill(pid, SIGKILL)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            exitStatus = status
        }
    }

    deinit {
        closeStandardInput()
        kill()
        if readFD >= 0 { close(readFD) }
    }
}
