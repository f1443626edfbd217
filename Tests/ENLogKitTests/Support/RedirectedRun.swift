import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A program run to completion with its standard streams set up the way a hostile caller sets
/// them up (stdout on /dev/full, closed, or a pipe nobody reads; stdin on a FIFO or a device),
/// started through `MeasuredRun`'s launcher for the program's own peak memory and CPU. A program
/// still running at `deadline` is killed and reported as hung: the deadline fails a hang, it does
/// not time anything.
enum RedirectedRun {
    enum Output: Sendable, CustomStringConvertible {
        /// Opened for writing (/dev/full, a file).
        case file(String)
        /// fd 1 closed (`>&-`).
        case closed
        /// A pipe whose reading end is closed before the child starts (`| head -0`).
        case closedPipe

        var description: String {
            switch self {
            case .file(let path): return ">\(path)"
            case .closed: return ">&-"
            case .closedPipe: return "| (closed)"
            }
        }
    }

    enum Input: Sendable {
        case null
        /// Opened without blocking (a FIFO with no writer would block a plain open) and handed over.
        case file(String)
    }

    struct Result {
        /// The exit status, or 128 + the signal that ended the child (as a shell reports it).
        var status: Int32
        var signal: Int32?
        var standardOutput: String
        var standardError: String
        /// What the program used; nil when the launcher reported nothing (killed at the deadline).
        var usage: ChildUsage?
        var hung: Bool

        /// The program's own peak resident set (`ru_maxrss`), KiB; Int.max when it was not
        /// measured, so that no bound passes.
        var peakKilobytes: Int { usage?.peakKilobytes ?? .max }

        var errorLines: [String] { standardError.split(separator: "\n").map(String.init).filter { $0.hasPrefix("enlog: error:") } }
    }

    static func run(_ executable: URL, _ arguments: [String], environment: [String: String],
                    standardOutput: Output? = nil, standardError: Output? = nil, standardInput: Input = .null,
                    deadline: Duration = .seconds(180), memoryLimit: Int? = nil, cpuSeconds: Int? = nil) throws -> Result {
        let scratch = try TemporaryDirectory()
        let errPath = scratch.path("stderr"), outPath = scratch.path("stdout")
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var heldOpen: [Int32] = []
        defer { heldOpen.forEach { close($0) } }
        switch standardInput {
        case .null:
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        case .file(let path):
            let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
            guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            // The child gets a blocking descriptor, as a shell's `<` gives one.
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
            heldOpen.append(fd)
            posix_spawn_file_actions_adddup2(&actions, fd, 0)
        }
        for (descriptor, output, capture) in [(Int32(1), standardOutput, outPath), (2, standardError, errPath)] {
            switch output {
            case nil:
                posix_spawn_file_actions_addopen(&actions, descriptor, capture, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            case .file(let path)?:
                posix_spawn_file_actions_addopen(&actions, descriptor, path, O_WRONLY, 0)
            case .closed?:
                posix_spawn_file_actions_addclose(&actions, descriptor)
            case .closedPipe?:
                var ends: [Int32] = [-1, -1]
                guard pipe(&ends) == 0 else { throw POSIXError(.EMFILE) }
                close(ends[0])
                _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
                heldOpen.append(ends[1])
                posix_spawn_file_actions_adddup2(&actions, ends[1], descriptor)
            }
        }
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [] {
            if let fd = Int32(name), fd > 2, !heldOpen.contains(fd) { posix_spawn_file_actions_addclose(&actions, fd) }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t(), all = sigset_t()
        sigemptyset(&empty)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        // A memory limit (RLIMIT_DATA): a program that reads without bound fails at it instead of
        // taking the machine with it. A CPU limit (RLIMIT_CPU): past it the kernel ends the
        // program, however loaded the machine is. Both apply to the program alone.
        let report = scratch.path("usage")
        let command = try MeasuredRun.commandLine(report: report, executable.path, arguments,
                                                  dataLimit: memoryLimit, cpuSeconds: cpuSeconds)
        let program = command[0]
        let argv = command.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0)=\($1)") } + [nil]
        defer { argv.forEach { free($0) }; envp.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, program, &actions, &attributes, argv, envp)
        heldOpen.forEach { close($0) }
        heldOpen = []
        guard spawned == 0 else { throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EIO) }

        var raw: Int32 = 0
        var hung = false
        let end = ContinuousClock.now + deadline
        while true {
            let reaped = waitpid(pid, &raw, WNOHANG)
            if reaped == pid { break }
            if reaped < 0 && errno != EINTR { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .ECHILD) }
            if ContinuousClock.now > end && !hung {
                hung = true
                kill(pid, SIGKILL)   // the launcher; the kernel then kills the program (PR_SET_PDEATHSIG)
            }
            usleep(10_000)
        }
        // The program's own status when the launcher reported it (the launcher ends the same way).
        let usage = MeasuredRun.usage(report: report)
        if let usage { raw = usage.rawStatus }
        let signal: Int32? = raw & 0x7f == 0 ? nil : raw & 0x7f
        let read = { (path: String) in (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
        return Result(status: signal.map { 128 + $0 } ?? (raw >> 8) & 0xff, signal: signal,
                      standardOutput: read(outPath), standardError: read(errPath),
                      usage: usage, hung: hung)
    }
}
