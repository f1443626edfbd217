@testable import Network
@testable import Capture
import Foundation
import Synchronization
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// A one-connection stand-in for gpsd that plays scripted report lines.
final class ScriptedGPSD: Sendable {
    let port: UInt16
    private let socket: LoopbackSocket
    private let firstCommand = Mutex("")
    var received: String { firstCommand.withLock { $0 } }

    /// `lines` are sent after the client's first command, `interval` apart; then the
    /// connection stays open (or is closed when `closeAfterwards`).
    init(lines: [String], interval: TimeInterval = 0.02, closeAfterwards: Bool = false) throws {
        let socket = try LoopbackSocket(backlog: 1)
        self.socket = socket
        port = socket.port
        let listener = socket.fd
        Thread.detachNewThread { [self] in
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            var buffer = [UInt8](repeating: 0, count: 1024)
            let count = recv(client, &buffer, buffer.count, 0)
            if count > 0 {
                let text = String(decoding: buffer[0..<count], as: UTF8.self)
                firstCommand.withLock { $0 = text }
            }
            for line in lines {
                Thread.sleep(forTimeInterval: interval)
                let sent = (line + "\n").withCString { send(client, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
                if sent < 0 { break }
            }
            if closeAfterwards {
                close(client)
            } else {
                // Hold the connection until the client goes away.
                while recv(client, &buffer, buffer.count, 0) > 0 {}
                close(client)
            }
        }
    }

    var endpoint: GPSDLocation.Endpoint { .init(host: "127.0.0.1", port: port) }

    static let greeting = [
        #"{"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}"#,
        #"{"class":"DEVICES","devices":[{"class":"DEVICE","path":"/dev/ttyACM0","driver":"u-blox"}]}"#,
        #"{"class":"WATCH","enable":true,"json":true,"nmea":false}"#,
    ]

    static func tpv(mode: Int, time: Date? = Date(), lat: Double = 48.1486, lon: Double = 11.5783,
                    extra: String = #""eph":6.5"#) -> String {
        let stamp = time.map { #""time":""# + iso($0) + #"","# } ?? ""
        return #"{"class":"TPV","device":"/dev/ttyACM0","mode":\#(mode),\#(stamp)"lat":\#(lat),"lon":\#(lon),"altHAE":568.4,"altMSL":521.2,"alt":521.2,"speed":1.39,"track":54.1,\#(extra)}"#
    }

    static func iso(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }
}

final class GPSDLocationTests: XCTestCase {
    func testEndpointParsing() throws {
        XCTAssertEqual(try GPSDLocation.Endpoint(parsing: "localhost"), .init(host: "localhost", port: 2947))
        XCTAssertEqual(try GPSDLocation.Endpoint(parsing: "10.0.0.2:3000"), .init(host: "10.0.0.2", port: 3000))
        XCTAssertEqual(try GPSDLocation.Endpoint(parsing: "[::1]:2950"), .init(host: "::1", port: 2950))
        XCTAssertEqual(try GPSDLocation.Endpoint(parsing: "::1"), .init(host: "::1", port: 2947))
        XCTAssertEqual(GPSDLocation.Endpoint(host: "::1", port: 5).description, "[::1]:5")
        for bad in ["", "host:", "host:0", "host:70000", "host:abc", "[::1", "[::1]x", "a b:1"] {
            XCTAssertThrowsError(try GPSDLocation.Endpoint(parsing: bad), bad)
        }
    }

    func testConnectionRefusedSaysNoGPSD() async throws {
        let port = try freeLoopbackPort()
        let source = GPSDLocation(endpoint: .init(host: "127.0.0.1", port: port), timeout: 5)
        let started = Date()
        await assertThrowsAsync({ try await source.currentFix() }) { error in
            guard case let .gpsdUnreachable(endpoint, detail)? = error as? LocationError else {
                return XCTFail("\(error)")
            }
            XCTAssertEqual(endpoint, "127.0.0.1:\(port)")
            XCTAssertTrue(detail.hasPrefix("connection refused"), detail)
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), hangSeconds)
    }

    func testSendsWatchAndReturnsFirstAcceptableFix() async throws {
        let gpsd = try ScriptedGPSD(lines: ScriptedGPSD.greeting + [
            ScriptedGPSD.tpv(mode: 1, time: nil),
            ScriptedGPSD.tpv(mode: 3, extra: #""eph":45.0"#),
            ScriptedGPSD.tpv(mode: 3, lat: 48.5, extra: #""epx":3.0,"epy":4.0"#),
            ScriptedGPSD.tpv(mode: 3, lat: 49.0),
        ])
        let fix = try await GPSDLocation(endpoint: gpsd.endpoint, timeout: 5).currentFix()
        XCTAssertEqual(gpsd.received, #"?WATCH={"enable":true,"json":true};"# + "\n")
        XCTAssertEqual(fix.latitude, 48.5)
        XCTAssertEqual(fix.longitude, 11.5783)
        XCTAssertEqual(fix.horizontalAccuracy, 5.0, "√(epx² + epy²) when eph is absent")
        XCTAssertEqual(fix.altitude, 521.2, "altMSL preferred")
        XCTAssertEqual(fix.speed, 1.39)
        XCTAssertEqual(fix.course, 54.1)
        XCTAssertEqual(fix.source, .gpsd)
    }

    func testOnlyNoFixReportsTimesOutWithNoFix() async throws {
        let gpsd = try ScriptedGPSD(lines: ScriptedGPSD.greeting + Array(repeating: #"{"class":"TPV","device":"/dev/ttyACM0","mode":1}"#, count: 3))
        let started = Date()
        await assertThrowsAsync({ try await GPSDLocation(endpoint: gpsd.endpoint, timeout: 1).currentFix() }) { error in
            guard case let .gpsdNoFix(_, waited, reports, noDevice)? = error as? LocationError else {
                return XCTFail("\(error)")
            }
            XCTAssertEqual(reports, 3)
            XCTAssertFalse(noDevice)
            XCTAssertGreaterThanOrEqual(waited, 0.9, "waited out its timeout (longer on a loaded machine)")
            XCTAssertTrue((error as! LocationError).reason.contains("reported no position fix in \(String(format: "%.1f", waited))"), "\(error)")
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), hangSeconds)
    }

    func testNoDeviceIsReported() async throws {
        let gpsd = try ScriptedGPSD(lines: [ScriptedGPSD.greeting[0], #"{"class":"DEVICES","devices":[]}"#])
        await assertThrowsAsync({ try await GPSDLocation(endpoint: gpsd.endpoint, timeout: 0.5).currentFix() }) { error in
            guard case let .gpsdNoFix(_, _, _, noDevice)? = error as? LocationError else { return XCTFail("\(error)") }
            XCTAssertTrue(noDevice)
        }
    }

    func testInaccurateFixesReportTheBestSeen() async throws {
        let gpsd = try ScriptedGPSD(lines: ScriptedGPSD.greeting + [
            ScriptedGPSD.tpv(mode: 2, lat: 48.1, extra: #""eph":75.0"#),
            ScriptedGPSD.tpv(mode: 3, lat: 48.2, extra: #""eph":42.5"#),
            ScriptedGPSD.tpv(mode: 3, lat: 48.3, extra: #""eph":60.0"#),
            ScriptedGPSD.tpv(mode: 3, lat: 48.4, extra: ""),
        ])
        await assertThrowsAsync({ try await GPSDLocation(endpoint: gpsd.endpoint, timeout: 1).currentFix() }) { error in
            guard case let .gpsdNoAcceptableFix(_, _, fixesSeen, best, rejection)? = error as? LocationError else {
                return XCTFail("\(error)")
            }
            XCTAssertEqual(fixesSeen, 4)
            XCTAssertEqual(best.latitude, 48.2)
            XCTAssertEqual(rejection, .tooInaccurate(accuracy: 42.5, limit: 40))
            XCTAssertTrue((error as! LocationError).reason.contains("best 48.200000,11.578300 ±42.5 m"), "\(error)")
        }
    }

    func testOldFixesAreRejectedAsTooOld() async throws {
        let hourAgo = Date().addingTimeInterval(-3600)
        let gpsd = try ScriptedGPSD(lines: ScriptedGPSD.greeting + [
            ScriptedGPSD.tpv(mode: 3, time: hourAgo), ScriptedGPSD.tpv(mode: 3, time: hourAgo.addingTimeInterval(1)),
        ])
        await assertThrowsAsync({ try await GPSDLocation(endpoint: gpsd.endpoint, timeout: 0.7).currentFix() }) { error in
            guard case let .gpsdNoAcceptableFix(_, _, _, best, .tooOld(age, limit))? = error as? LocationError else {
                return XCTFail("\(error)")
            }
            XCTAssertEqual(best.timestamp.timeIntervalSince1970, hourAgo.timeIntervalSince1970 + 1, accuracy: 0.01)
            XCTAssertEqual(age, 3599, accuracy: 5)
            XCTAssertEqual(limit, 15)
        }
        // The same reports pass once max-age allows them (e.g. a replayed log).
        let replay = try ScriptedGPSD(lines: ScriptedGPSD.greeting + [ScriptedGPSD.tpv(mode: 3, time: hourAgo)])
        let filter = QualityFilter(maxAge: 7200)
        let fix = try await GPSDLocation(endpoint: replay.endpoint, timeout: 2, filter: filter).currentFix()
        XCTAssertEqual(fix.timestamp.timeIntervalSince1970, hourAgo.timeIntervalSince1970, accuracy: 0.01)
    }

    /// A gpsd host given by name whose lookup hangs (a dead name server): `--timeout` bounds the
    /// lookup like every other wait, and the error says what happened.
    func testHostNameThatNeverResolvesIsBoundedByTheTimeout() async throws {
        let hanging = HangingResolver()
        defer { hanging.release() }
        var source = GPSDLocation(endpoint: .init(host: "gpsd.example.invalid", port: 2947), timeout: 1)
        source.resolver = hanging.resolver
        await assertThrowsAsync({ try await source.currentFix() }) { error in
            XCTAssertEqual(error as? LocationError, .gpsdUnreachable(endpoint: "gpsd.example.invalid:2947",
                                                                     detail: "the host name did not resolve within 1 s"))
        }
    }

    func testHangingHostNameLookupIsCancellable() async throws {
        let hanging = HangingResolver()
        defer { hanging.release() }
        var source = GPSDLocation(endpoint: .init(host: "gpsd.example.invalid", port: 2947), timeout: 600)
        source.resolver = hanging.resolver
        let task = Task { [source] in try await source.currentFix() }
        let name = await hanging.firstCall()
        XCTAssertEqual(name, "gpsd.example.invalid")
        task.cancel()
        await assertThrowsAsync({ try await task.value }) { error in
            XCTAssertTrue(error is CancellationError, "\(error)")
        }
    }

    /// A name that resolves goes on to connect to what it resolved to.
    func testHostNameResolvesThroughTheLookup() async throws {
        let gpsd = try ScriptedGPSD(lines: ScriptedGPSD.greeting + [ScriptedGPSD.tpv(mode: 3)])
        var source = GPSDLocation(endpoint: .init(host: "gpsd.test", port: gpsd.port), timeout: 30)
        source.resolver = { name, port, _ in
            name == "gpsd.test" ? .found(["127.0.0.1"], port: port) : NameLookup.Answer(status: EAI_NONAME, entries: [])
        }
        let fix = try await source.currentFix()
        XCTAssertEqual(gpsd.received, #"?WATCH={"enable":true,"json":true};"# + "\n")
        XCTAssertEqual(fix.latitude, 48.1486)
    }

    func testClosedConnection() async throws {
        let gpsd = try ScriptedGPSD(lines: [ScriptedGPSD.greeting[0]], closeAfterwards: true)
        await assertThrowsAsync({ try await GPSDLocation(endpoint: gpsd.endpoint, timeout: 5).currentFix() }) { error in
            XCTAssertEqual(error as? LocationError, .gpsdClosedConnection(endpoint: gpsd.endpoint.description))
        }
    }

    func testWaitIsCancellable() async throws {
        let gpsd = try ScriptedGPSD(lines: ScriptedGPSD.greeting)
        let source = GPSDLocation(endpoint: gpsd.endpoint, timeout: 30)
        let started = Date()
        let task = Task { try await source.currentFix() }
        try await waitUntil("the client is connected and watching") { !gpsd.received.isEmpty }
        task.cancel()
        await assertThrowsAsync({ try await task.value }) { error in
            XCTAssertTrue(error is CancellationError, "\(error)")
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), hangSeconds)
    }
}

/// Pids whose parent is `parent`, from /proc.
func childProcesses(of parent: Int32) -> [Int32] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { Int32($0) }.filter { pid in
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        // Fields after "(comm)": state, ppid, …
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 1 && Int32(fields[1]) == parent
    }
}

/// Replays an NMEA log through Debian's real gpsd with gpsfake.
final class GPSFakeIntegrationTests: XCTestCase {
    private var gpsfake: ChildProcess?
    private var directory: TemporaryDirectory?

    override func tearDown() {
        if let gpsfake {
            let daemons = childProcesses(of: gpsfake.pid)
            gpsfake.stop()   // gpsfake stops its gpsd on SIGTERM
            // Should gpsfake have died without cleaning up, its gpsd is still ours to end.
            for pid in daemons where kill(pid, 0) == 0 { kill(pid, SIGKILL) }
        }
        gpsfake = nil
        directory = nil
    }

    /// Starts gpsfake (and its gpsd) replaying a fresh log of fixes with `hdop`, stopped by
    /// `tearDown`, and returns gpsd's port once it listens. Skips where gpsfake is not installed.
    private func startGPSD(hdop: Double) async throws -> UInt16 {
        guard let executable = TestPaths.executableInPath("gpsfake") else {
            throw XCTSkip("gpsfake is not installed (apt-get install -y gpsd gpsd-clients)")
        }
        let directory = try TemporaryDirectory()
        self.directory = directory
        // gpsfake replays the log's own timestamps: stamp the epochs from now on, spaced like
        // the replay (3 sentences × 0.1 s), so the fixes are as fresh as live ones.
        let log = directory.path("replay.nmea")
        try NMEA.log(start: Date(), count: 400, spacing: 0.3, hdop: hdop).write(toFile: log, atomically: true, encoding: .ascii)
        let port = try freeLoopbackPort()
        let process = try ChildProcess(executable, ["-P", String(port), "-n", "-c", "0.1", "-q", log], captureOutput: false)
        gpsfake = process
        try await waitUntil("gpsd listens") { LoopbackSocket.accepts(port) || !process.isRunning }
        return port
    }

    func testFixThroughRealGPSD() async throws {
        let port = try await startGPSD(hdop: 0.5)
        let source = GPSDLocation(endpoint: .init(host: "127.0.0.1", port: port), timeout: 20)
        let received = try await source.currentFix()
        XCTAssertEqual(received.source, .gpsd)
        XCTAssertEqual(received.latitude, 48.148, accuracy: 0.01)
        XCTAssertEqual(received.longitude, 11 + 34.6930 / 60, accuracy: 1e-6)
        XCTAssertEqual(received.altitude ?? 0, 520.1, accuracy: 0.01)
        XCTAssertEqual(received.horizontalAccuracy ?? 0, 0.5 * NMEALogLocation.metresPerHDOP, accuracy: 0.01,
                       "gpsd's eph for HDOP 0.5 matches the NMEA reader's model")
        XCTAssertTrue(QualityFilter().accepts(received))
    }

    /// Issue 34: `enlog log` from a real gpsd refused an ordinary receiver's fix (HDOP 0.9, gpsd's
    /// eph 17.1 m) with "accuracy 17.1 m is worse than the 10.0 m limit". With the defaults it logs.
    func testAnOrdinaryReceiversFixIsLoggedWithTheDefaults() async throws {
        let port = try await startGPSD(hdop: 0.9)
        let home = try EnlogHome()
        let result = try home.run("log", "--gpsd", "127.0.0.1:\(port)", "--no-geocode", "--no-sync")
        XCTAssertEqual(result.status, 0, result.standardError)
        let history = try home.run("history", "--json")
        let fixes = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(history.standardOutput.utf8)) as? [[String: Any]])
        XCTAssertEqual(fixes.count, 1, history.standardOutput)
        XCTAssertEqual(fixes.first?["horizontalAccuracy"] as? Double ?? 0, 0.9 * NMEALogLocation.metresPerHDOP, accuracy: 0.01,
                       "gpsd's eph for HDOP 0.9: \(fixes)")
    }
}
