import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

enum TestPaths {
    static let packageRoot = Fixtures.repositoryRoot
    static let nmeaFixtures = Fixtures.root.appendingPathComponent("nmea")

    static func nmea(_ name: String) -> String {
        nmeaFixtures.appendingPathComponent(name).path
    }

    static func executableInPath(_ name: String) -> URL? { Subprocess.which(name) }
}

/// A loopback TCP port nothing listens on at the time of the call.
func freeLoopbackPort() throws -> UInt16 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Bool in
            bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
        }
    }
    guard bound else { throw XCTSkip("cannot bind a loopback port") }
    return UInt16(bigEndian: address.sin_port)
}

/// NMEA sentences with valid checksums, for logs generated at test time.
enum NMEA {
    static func sentence(_ body: String) -> String {
        let checksum = body.utf8.reduce(0, ^)
        return "$\(body)*\(String(format: "%02X", checksum))\r\n"
    }

    /// `count` epochs of GGA+GSA+RMC starting at `start`, `spacing` seconds apart.
    static func log(start: Date, count: Int, spacing: TimeInterval, hdop: Double) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        var text = ""
        for index in 0..<count {
            let time = start.addingTimeInterval(Double(index) * spacing)
            let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .nanosecond], from: time)
            let hundredths = (parts.nanosecond ?? 0) / 10_000_000
            let hms = String(format: "%02d%02d%02d.%02d", parts.hour!, parts.minute!, parts.second!, hundredths)
            let dmy = String(format: "%02d%02d%02d", parts.day!, parts.month!, parts.year! % 100)
            let lat = String(format: "4808.%04d", 9210 + index % 1000)
            text += sentence("GPGGA,\(hms),\(lat),N,01134.6930,E,1,09,\(hdop),520.1,M,47.3,M,,")
            text += sentence("GPGSA,A,3,02,05,07,13,15,18,20,24,29,,,,1.4,\(hdop),1.1")
            text += sentence("GPRMC,\(hms),A,\(lat),N,01134.6930,E,2.7,54.1,\(dmy),3.1,E,A")
        }
        return text
    }
}

extension XCTestCase {
    /// Asserts that `body` throws exactly `expected`.
    func assertThrows<E: Error & Equatable>(_ expected: E, file: StaticString = #filePath, line: UInt = #line,
                                            _ body: () throws -> Void) {
        do {
            try body()
            XCTFail("expected \(expected), nothing thrown", file: file, line: line)
        } catch let error as E {
            XCTAssertEqual(error, expected, file: file, line: line)
        } catch {
            XCTFail("expected \(expected), got \(error)", file: file, line: line)
        }
    }

    func assertThrowsAsync<T>(file: StaticString = #filePath, line: UInt = #line,
                              _ body: () async throws -> T, _ check: (any Error) -> Void) async {
        do {
            let value = try await body()
            XCTFail("expected an error, got \(value)", file: file, line: line)
        } catch {
            check(error)
        }
    }
}

/// `posix_spawn` with an empty signal mask and default dispositions for every signal.
///
/// Foundation's `Process` on Linux passes on the spawning thread's blocked-signal mask (XCTest's
/// threads block nearly everything), so a child would never see SIGTERM.
func spawnWithCleanSignals(_ pid: inout pid_t, _ path: String, _ actions: inout posix_spawn_file_actions_t,
                           _ argv: [UnsafeMutablePointer<CChar>?], _ envp: UnsafePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
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
    return posix_spawn(&pid, path, &actions, &attributes, argv, envp)
}

/// A child started with posix_spawn and a clean signal mask (see `spawnWithCleanSignals`).
///
/// Foundation's `Process` on Linux passes on the spawning thread's blocked-signal mask (XCTest's
/// threads block nearly everything), so a child such as gpsd would never see SIGTERM.
final class SpawnedProcess {
    let pid: pid_t
    private(set) var exitStatus: Int32?

    init(_ executable: URL, _ arguments: [String]) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd: Int32 in [0, 1, 2] {
            posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
        }
        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let status = spawnWithCleanSignals(&pid, executable.path, &actions, argv, environ)
        guard status == 0 else {
            throw NSError(domain: NSPOSIXErrorDomain, code: Int(status),
                          userInfo: [NSLocalizedDescriptionKey: "cannot start \(executable.path)"])
        }
        self.pid = pid
    }

    var isRunning: Bool {
        if exitStatus != nil { return false }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid {
            exitStatus = status
            return false
        }
        return true
    }

    /// Sends `signal`, waits up to `grace` seconds, then SIGKILLs.
    func stop(_ signal: Int32 = SIGTERM, grace: TimeInterval = 5) {
        guard isRunning else { return }
        kill(pid, signal)
        let deadline = Date().addingTimeInterval(grace)
        while isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        if isRunning {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            exitStatus = status
        }
    }
}
