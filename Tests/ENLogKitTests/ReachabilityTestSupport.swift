import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// A child started with posix_spawn, an empty signal mask and default dispositions (Foundation's
/// `Process` would hand down XCTest's blocked-signal mask), with stdout (and stderr) on a pipe.
final class ReachChild {
    let pid: pid_t
    private let readFD: Int32
    private var buffer = Data()
    private(set) var exitStatus: Int32?

    init(_ path: String, _ arguments: [String], environment: [String] = ReachChild.cleanEnvironment) throws {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw XCTSkip("pipe failed") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 2)
        posix_spawn_file_actions_addclose(&actions, fds[0])
        posix_spawn_file_actions_addclose(&actions, fds[1])
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) }; envp.forEach { free($0) } }
        var pid: pid_t = 0
        let status = envp.withUnsafeBufferPointer { spawnWithCleanSignals(&pid, path, &actions, argv, $0.baseAddress) }
        close(fds[1])
        guard status == 0 else {
            close(fds[0])
            throw NSError(domain: NSPOSIXErrorDomain, code: Int(status),
                          userInfo: [NSLocalizedDescriptionKey: "cannot start \(path)"])
        }
        self.pid = pid
        self.readFD = fds[0]
    }

    /// No proxy variables, no inherited oddities: the child sees only what the test decides.
    static let cleanEnvironment = ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C"]

    /// Reads until `marker` appears in the output or `seconds` pass; true when it appeared.
    func waitForOutput(containing marker: String, seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if String(decoding: buffer, as: UTF8.self).contains(marker) { return true }
            if !readChunk(timeoutMs: 50) && !isRunning { break }
        }
        return String(decoding: buffer, as: UTF8.self).contains(marker)
    }

    /// Reads everything until EOF, then reaps the child. Returns (exit status, output).
    func finish() -> (status: Int32, output: String) {
        while readChunk(timeoutMs: -1) {}
        var status: Int32 = 0
        if exitStatus == nil {
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            exitStatus = status
        }
        let code = exitStatus! & 0x7f == 0 ? (exitStatus! >> 8) & 0xff : 128 + (exitStatus! & 0x7f)
        return (code, String(decoding: buffer, as: UTF8.self))
    }

    private var eof = false
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

    func kill() {
        if isRunning {
            Glibc.kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            exitStatus = status
        }
    }

    deinit {
        kill()
        close(readFD)
    }
}

/// Runs a command to completion; returns status, output and wall time in milliseconds.
@discardableResult
func runCommand(_ path: String, _ arguments: [String]) throws -> (status: Int32, output: String, milliseconds: Double) {
    let start = DispatchTime.now().uptimeNanoseconds
    let child = try ReachChild(path, arguments)
    let result = child.finish()
    return (result.status, result.output, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
}

/// Runs `ip ARGS…`, failing the test with its output when it does not succeed.
func ip(_ arguments: String..., file: StaticString = #filePath, line: UInt = #line) throws {
    let result = try runCommand("/usr/sbin/ip", arguments)
    if result.status != 0 {
        XCTFail("ip \(arguments.joined(separator: " ")): \(result.output)", file: file, line: line)
        throw NamespaceUnavailable(message: result.output)
    }
}

struct NamespaceUnavailable: Error { let message: String }

/// A random suffix so parallel runs never collide: `enlogt-ROLE-xxxxxx`.
func enlogtName(_ role: String) -> String {
    "enlogt-\(role)-" + String(UInt32.random(in: 0...0xFF_FFFF), radix: 16)
}

/// `enlog reachability --json`, as the namespace tests run it (binary path, then its arguments).
func reachProbeCommand() -> [String] {
    [Subprocess.enlog.path, "reachability", "--json"]
}

/// Root and `ip netns` are required; skip otherwise — except under CI=true, where that is a failure.
func requireNamespaces() throws {
    let ci = ProcessInfo.processInfo.environment["CI"] == "true"
    func unavailable(_ why: String) throws -> Never {
        if ci { XCTFail("CI=true: namespace tests cannot run: \(why)"); throw NamespaceUnavailable(message: why) }
        throw XCTSkip(why)
    }
    guard geteuid() == 0 else { try unavailable("network-namespace tests need root") }
    guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/ip") else { try unavailable("no /usr/sbin/ip") }
    let probe = enlogtName("chk")
    let added = try runCommand("/usr/sbin/ip", ["netns", "add", probe])
    guard added.status == 0 else { try unavailable("ip netns add not permitted: \(added.output)") }
    try runCommand("/usr/sbin/ip", ["netns", "del", probe])
}

/// The JSON the probe printed, decoded.
struct ProbeResult {
    let status: Int32
    let verdict: String
    let address: String?
    let decidedByRouteCheck: Bool
    let elapsedMilliseconds: Double
    let attempts: [[String: Any]]
    let wallMilliseconds: Double
    let raw: String

    init(_ run: (status: Int32, output: String, milliseconds: Double)) throws {
        status = run.status
        raw = run.output
        wallMilliseconds = run.milliseconds
        let line = run.output.split(separator: "\n").first { $0.hasPrefix("{") } ?? ""
        guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            throw NamespaceUnavailable(message: "no JSON in: \(run.output)")
        }
        verdict = object["verdict"] as? String ?? "?"
        address = object["address"] as? String
        decidedByRouteCheck = object["decidedByRouteCheck"] as? Bool ?? false
        elapsedMilliseconds = object["elapsedMilliseconds"] as? Double ?? -1
        attempts = object["attempts"] as? [[String: Any]] ?? []
    }

    func outcomes(phase: String) -> [String] {
        attempts.filter { $0["phase"] as? String == phase }.compactMap { $0["outcome"] as? String }
    }
}
