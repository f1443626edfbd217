import Foundation
import XCTest

/// `enlog log --gpsd NAME` in a namespace whose DNS hangs (`DNSBlackHole`): the real `getaddrinfo`
/// waits as long as resolv.conf says, so `--timeout` must bound the lookup like every other wait.
final class GPSDNamespaceTests: XCTestCase {
    func testTimeoutBoundsTheLookupOfAGPSDHostName() throws {
        try requireNamespaces()
        let hole = try DNSBlackHole()
        defer { hole.tearDown() }
        addTeardownBlock { hole.tearDown() }
        try hole.build()
        // Many slow tries: an unbounded lookup would take minutes and end in "cannot resolve host".
        try "nameserver \(hole.nameServer)\noptions timeout:30 attempts:5\n"
            .write(toFile: hole.resolvDirectory + "/resolv.conf", atomically: true, encoding: .utf8)

        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        let environment = home.environment.map { "\($0.key)=\($0.value)" }
        let result = try runCommand("/usr/sbin/ip", ["netns", "exec", hole.client, "/usr/bin/env", "-i"] + environment
                                        + [Subprocess.enlog.path, "log", "--gpsd", "gpsd.example.invalid:2947", "--timeout", "2",
                                           "--no-sync"])
        print("gpsd by name behind a DNS black hole: exit \(result.status) after \(Int(result.milliseconds)) ms: \(result.output)")
        XCTAssertEqual(result.status, 69, result.output)   // EX_UNAVAILABLE, as for any unreachable gpsd
        XCTAssertTrue(result.output.contains("cannot reach gpsd at gpsd.example.invalid:2947: the host name did not resolve within 2 s"),
                      result.output)
    }
}
