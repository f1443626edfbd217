import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Runs a command to completion; returns status, output and wall time in milliseconds.
@discardableResult
func runCommand(_ path: String, _ arguments: [String]) throws -> (status: Int32, output: String, milliseconds: Double) {
    let start = DispatchTime.now().uptimeNanoseconds
    let child = try ChildProcess(path, arguments, environment: ChildProcess.cleanEnvironment)
    let result = child.finish()
    return (result.status, result.output, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
}

/// Runs `ip ARGS…`, failing the test with its output when it does not succeed.
func ip(_ arguments: String..., file: StaticString = #filePath, line: UInt = #line) throws {
    try ip(arguments, file: file, line: line)
}

/// `ip` with its arguments built at run time.
func ip(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws {
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
