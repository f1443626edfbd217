import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// A real mosquitto broker (Debian's `mosquitto`) on 127.0.0.1 and a port of its own, with its
/// configuration in a scratch directory and nothing kept on disk; stopped on deinit. Tests publish
/// to it with Debian's `mosquitto_pub`, as the OwnTracks app publishes.
final class MosquittoBroker {
    let port: UInt16
    let process: ChildProcess
    private let directory: TemporaryDirectory

    /// - Parameter extraConfiguration: lines added to mosquitto.conf (an ACL, a password file).
    init(extraConfiguration: [String] = []) throws {
        guard let mosquitto = Subprocess.which("mosquitto") ?? ["/usr/sbin/mosquitto"].map(URL.init(fileURLWithPath:))
            .first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            try Self.missing("mosquitto")
        }
        directory = try TemporaryDirectory()
        port = try freeLoopbackPort()
        let configuration = directory.url.appendingPathComponent("mosquitto.conf")
        // As root mosquitto would switch to the user `mosquitto`; it keeps nothing on disk here, so it may stay.
        let user = getuid() == 0 ? ["user root"] : []
        try (["listener \(port) 127.0.0.1", "allow_anonymous true", "persistence false", "log_dest stderr",
              "log_type error", "log_type warning"] + user + extraConfiguration)
            .joined(separator: "\n").appending("\n").write(to: configuration, atomically: true, encoding: .utf8)
        process = try ChildProcess(mosquitto, ["-c", configuration.path], errorsToTest: true)
        let port = self.port, process = self.process
        try blockUntil("mosquitto to listen on \(port)") {
            guard process.isRunning else { throw WaitTimedOut(description: "mosquitto exited: \(process.exitStatus ?? -1)") }
            return LoopbackSocket.accepts(port)
        }
    }

    var url: String { "mqtt://127.0.0.1:\(port)" }

    /// Publishes `payload` to `topic` at QoS 1 with `mosquitto_pub`, as OwnTracks does (not retained).
    func publish(_ topic: String, _ payload: String, user: String? = nil, password: String? = nil) throws {
        guard let publisher = Subprocess.which("mosquitto_pub") else { try Self.missing("mosquitto-clients") }
        var arguments = ["-h", "127.0.0.1", "-p", String(port), "-q", "1", "-t", topic, "-m", payload]
        if let user { arguments += ["-u", user] }
        if let password { arguments += ["-P", password] }
        let result = try Subprocess.run(publisher, arguments)
        XCTAssertEqual(result.status, 0, "mosquitto_pub: \(result.standardError)")
    }

    /// Skips the test where the package is not installed, except under CI=true, where that fails it.
    static func missing(_ package: String) throws -> Never {
        if ProcessInfo.processInfo.environment["CI"] == "true" { throw MissingPackage(description: "CI=true: Debian's \(package) is not installed") }
        throw XCTSkip("needs Debian's \(package)")
    }

    deinit { process.stop() }
}

/// A program a test needs is not installed: under CI=true (scripts/apt-packages.txt installs it) a failure.
struct MissingPackage: Error, CustomStringConvertible { let description: String }
