import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif
@testable import Watch

/// A unix datagram socket bound by the test, standing in for systemd's notify socket.
final class NotifySocketListener {
    let path: String
    private let fd: Int32

    init(directory: TemporaryDirectory) throws {
        path = directory.path("notify.sock")
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { throw XCTSkip("cannot bind a unix datagram socket: \(String(cString: strerror(errno)))") }
    }

    deinit { close(fd) }

    /// Datagrams until one contains `field` (e.g. "READY=1"); all of them, or nil after `seconds`.
    func messages(until field: String, seconds: Double) -> [String]? {
        var received: [String] = []
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 100) > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count > 0 else { continue }
            let message = String(decoding: buffer[0..<count], as: UTF8.self)
            received.append(message)
            if message.split(separator: "\n").contains(where: { $0.hasPrefix(field) }) { return received }
        }
        return nil
    }
}

/// `enlog watch` as a process: JSON events on its output, read as they come.
final class WatchProcess {
    let child: ChildProcess

    init(home: EnlogHome, arguments: [String] = [], environment: [String: String] = [:], wrapper: [String] = []) throws {
        var env = home.environment
        env.merge(environment) { $1 }
        let pairs = env.map { "\($0.key)=\($0.value)" }.sorted()
        if wrapper.isEmpty {
            child = try ChildProcess(Subprocess.enlog.path, ["watch", "--json", "-v"] + arguments, environment: pairs)
        } else {
            child = try ChildProcess(wrapper[0], Array(wrapper.dropFirst()) + ["/usr/bin/env", "-i"] + pairs
                                   + [Subprocess.enlog.path, "watch", "--json", "-v"] + arguments)
        }
    }

    /// Waits for an event line matching `event` (and `extra`, a substring), as the events arrive.
    @discardableResult
    func waitFor(_ event: String, _ extra: String = "", seconds: Double = 60) -> Bool {
        child.waitForOutput(containing: #""event":"\#(event)""#, within: .seconds(seconds))
            && (extra.isEmpty || child.waitForOutput(containing: extra, within: .seconds(seconds)))
    }

    /// Waits until `count` events named `event` have been printed.
    @discardableResult
    func waitFor(_ count: Int, _ event: String, seconds: Double = 60) -> Bool {
        let marker = #""event":"\#(event)""#
        return child.waitForOutput(within: .seconds(seconds)) { $0.components(separatedBy: marker).count - 1 >= count }
    }

    func terminate(_ signal: Int32 = SIGTERM) -> (status: Int32, events: [[String: Any]], output: String) {
        kill(child.pid, signal)
        let result = child.finish()
        return (result.status, Self.events(result.output), result.output)
    }

    static func events(_ output: String) -> [[String: Any]] {
        output.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }
}

final class WatchCommandTests: XCTestCase {
    static let start = Date(timeIntervalSince1970: 1_795_000_000)

    func testReplayLogsTheDrivesNotesAtTheExpectedPoints() throws {
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        let track = GeneratedTrack(start: Self.start, legs: WatchDecisionTests.drive)
        let log = try home.directory.file("drive.nmea", contents: track.nmea).path
        let result = try home.run("watch", "--nmea", log, "--json")
        XCTAssertEqual(result.status, 0, result.standardError)
        let events = WatchProcess.events(result.standardError)
        XCTAssertEqual(events.last?["fixes"] as? Int, 2300, result.standardError)
        XCTAssertEqual(events.filter { $0["event"] as? String == "noted" }.count, 5)
        // `history` lists the notes' fixes; the track kept between them is in the history too.
        let history = try home.run("history", "--json")
        let fixes = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(history.standardOutput.utf8)) as? [[String: Any]])
        let formatter = ISO8601DateFormatter()
        let seconds = fixes.compactMap { ($0["timestamp"] as? String).flatMap(formatter.date(from:)) }
            .map { Int($0.timeIntervalSince(Self.start).rounded()) }
        XCTAssertEqual(seconds, [0, 622, 922, 1422, 1722], "the same seconds as the decision logic on exact fixes")
        let kept = try XCTUnwrap(events.last?["track"] as? Int)
        let counts = try home.counts()
        XCTAssertEqual(counts.notesWithoutFix, 0)
        XCTAssertEqual(counts.fixes, 5 + kept, "the notes' fixes and the track, nothing else")
        XCTAssertEqual(try home.run("history", "--track").standardOutput.split(separator: "\n").count, 5 + kept)
        // 5 km at 10 m/s, 9.5 m radii: 25 m beyond 19 m is 5 s (50 m) on, so one per 50 m; the stops add none.
        XCTAssertTrue((5000 / 50 - 10...5000 / 50 + 10).contains(kept), "\(kept) track fixes")

        // A stationary receiver's hour, jitter and all, after a note at that place: nothing.
        let still = GeneratedTrack(start: Self.start.addingTimeInterval(3600), legs: [.stop(seconds: 3600)], noise: 11, hdop: 0.5...0.52)
        let stillLog = try home.directory.file("still.nmea", contents: still.nmea).path
        let again = try home.run("watch", "--replay", stillLog, "--min-distance", "200", "--json")
        XCTAssertEqual(again.status, 0, again.standardError)
        let stillEvents = WatchProcess.events(again.standardError)
        XCTAssertEqual(stillEvents.filter { $0["event"] as? String == "noted" }.count, 1,
                       "a fresh replay logs the first place only: \(again.standardError)")
        XCTAssertEqual(stillEvents.last?["track"] as? Int, 0, "jitter keeps no track: \(again.standardError)")
        XCTAssertEqual(try home.counts().fixes, 5 + kept + 1)
    }

    func testSettingsOutOfRangeExit78WithTheRange() throws {
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_WATCH_MIN_INTERVAL"] = "0"
        let setting = try home.run("watch", "--nmea", "/nonexistent.nmea")
        XCTAssertEqual(setting.status, 78, setting.standardError)
        XCTAssertTrue(setting.standardError.contains("from 1 to 86400"), setting.standardError)
        // The same range on the command line is a usage error, as for every command's flags.
        home.extraEnvironment = [:]
        let flag = try home.run("watch", "--min-distance", "5", "--nmea", "/nonexistent.nmea")
        XCTAssertEqual(flag.status, 2, flag.standardError)
        XCTAssertTrue(flag.standardError.contains("--min-distance is '5'; it must be a number of metres from 10 to 100000"), flag.standardError)
    }

    func testSystemdHearsReadyStatusWatchdogAndASecondWatchExits75() throws {
        let home = try EnlogHome()
        let notify = try NotifySocketListener(directory: home.directory)
        // gpsd is away (nothing listens there): watch still runs, says so once, and keeps trying.
        let port = try freeLoopbackPort()
        let watch = try WatchProcess(home: home, environment: [
            "NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "400000", "ENLOG_LOCATION_GPSD": "127.0.0.1:\(port)"])
        let ready = try XCTUnwrap(notify.messages(until: "READY=1", seconds: 30), "no READY=1")
        XCTAssertTrue(ready.joined(separator: "\n").contains("STATUS=last note none yet; 0 pending"), "\(ready)")
        XCTAssertNotNil(notify.messages(until: "WATCHDOG=1", seconds: 30), "no WATCHDOG=1")
        XCTAssertTrue(watch.waitFor("gpsd-lost"))

        let second = try home.run("watch")
        XCTAssertEqual(second.status, 75, second.standardError)
        XCTAssertTrue(second.standardError.contains("process \(watch.child.pid)"), second.standardError)

        let end = watch.terminate()
        XCTAssertEqual(end.status, 0, end.output)
        XCTAssertEqual(end.events.filter { $0["event"] as? String == "gpsd-lost" }.count, 1, "gpsd's absence is said once")
        XCTAssertNotNil(notify.messages(until: "STOPPING=1", seconds: 5))
    }

    func testSIGHUPReloadsTheConfigurationAndKeepsTheOldOneWhenTheNewIsBad() throws {
        let home = try EnlogHome()
        let port = try freeLoopbackPort()
        try home.writeConfig("[location]\ngpsd = \"127.0.0.1:\(port)\"\n[watch]\nmin_distance = 200\n")
        let watch = try WatchProcess(home: home)
        XCTAssertTrue(watch.waitFor("started", "a note every 200 m"), watch.child.output)

        try home.writeConfig("[location]\ngpsd = \"127.0.0.1:\(port)\"\n[watch]\nmin_distance = 5\n")
        kill(watch.child.pid, SIGHUP)
        XCTAssertTrue(watch.waitFor("reload-failed", "from 10 to 100000"), watch.child.output)

        try home.writeConfig("[location]\ngpsd = \"127.0.0.1:\(port)\"\n[watch]\nmin_distance = 500\n")
        kill(watch.child.pid, SIGHUP)
        XCTAssertTrue(watch.waitFor("reloaded", "every 500 m"), watch.child.output)
        let end = watch.terminate()
        XCTAssertEqual(end.status, 0, end.output)
    }

    func testAbstractNotifySocketNamesAreUnderstood() {
        XCTAssertEqual(SystemdNotifier.socketAddress("@enlog/notify")?.dropFirst(2).first, 0, "abstract: a leading NUL")
        XCTAssertEqual(SystemdNotifier.socketAddress("/run/user/1000/systemd/notify")?.count, 2 + 29)
        XCTAssertNil(SystemdNotifier.socketAddress("relative"))
        XCTAssertFalse(SystemdNotifier(environment: [:]).isActive)
        XCTAssertEqual(SystemdNotifier(environment: ["NOTIFY_SOCKET": "/x", "WATCHDOG_USEC": "60000000"]).watchdogInterval, .seconds(30))
    }

    func testShippedUnitsVerify() throws {
        guard let analyze = Subprocess.which("systemd-analyze") else { throw XCTSkip("systemd-analyze not installed") }
        let home = try TemporaryDirectory()
        let bin = home.path(".local/bin")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: bin + "/enlog", withDestinationPath: Subprocess.enlog.path)
        let units = ["enlog-watch.service", "enlog-sync.service", "enlog-sync.timer", "enlog-serve.service", "enlog-serve.socket"].map {
            Fixtures.repositoryRoot.appendingPathComponent("contrib/systemd/\($0)").path
        }
        let result = try Subprocess.run(analyze, ["verify"] + units, environment: ["HOME": home.url.path, "PATH": "/usr/bin:/bin"])
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertEqual(result.standardError, "", "warnings: \(result.standardError)")
        let watchUnit = try String(contentsOfFile: units[0], encoding: .utf8)
        for line in ["Type=notify", "Restart=on-failure", "NoNewPrivileges=yes", "ProtectSystem=strict", "PrivateTmp=yes", "WatchdogSec="] {
            XCTAssertTrue(watchUnit.contains(line), line)
        }
        let serveUnit = try String(contentsOfFile: units[3], encoding: .utf8), serveSocket = try String(contentsOfFile: units[4], encoding: .utf8)
        for line in ["Type=notify", "Requires=enlog-serve.socket", "NoNewPrivileges=yes", "ProtectSystem=strict", "ExecReload=/bin/kill -HUP $MAINPID"] {
            XCTAssertTrue(serveUnit.contains(line), line)
        }
        XCTAssertEqual(serveSocket.split(separator: "\n").filter { $0.hasPrefix("ListenStream=") }, ["ListenStream=127.0.0.1:8473"])
    }
}

/// SIGTERM while watch uploads, at seeded moments: exit 0 each time, and in the end every note
/// on the server exactly once.
final class WatchSignalTests: XCTestCase {
    func testSIGTERMWhileUploadingExitsZeroAndLosesOrDuplicatesNothing() async throws {
        let f = try SyncFixture()
        let queued = try await f.enqueue(150)
        var environment = try SyncKillTests.signedIn(f)
        environment["ENLOG_LOCATION_GPSD"] = "127.0.0.1:\(try freeLoopbackPort())"
        environment["ENLOG_NETWORK_PROBES"] = f.server.baseURL.replacingOccurrences(of: "http://", with: "")
        var rng = SeededGenerator(state: 0x7E5_2026)
        var stoppedMidSync = 0, runs = 0
        for run in 1...10 {
            runs = run
            let watch = try ChildProcess(Subprocess.enlog.path, ["watch", "--json"],
                                       environment: environment.map { "\($0.key)=\($0.value)" })
            XCTAssertTrue(watch.waitForOutput(containing: #""event":"started""#, within: .seconds(30)), watch.output)
            // A moment somewhere in the upload (150 notes take about a second here).
            let moment = Int.random(in: 0...250, using: &rng)
            _ = watch.waitForOutput(containing: #""event":"synced""#, within: .milliseconds(moment))
            kill(watch.pid, SIGTERM)
            let result = watch.finish()
            XCTAssertEqual(result.status, 0, "run \(run): \(result.output)")
            XCTAssertTrue(result.output.contains(#""event":"stopped""#), "run \(run): \(result.output)")
            if !result.output.contains(#""event":"synced""#) || result.output.contains("stopped: interrupted") { stoppedMidSync += 1 }
            let counts = try await f.outbox.counts()
            if (counts[.synced] ?? 0) == 150 { break }
        }
        let finish = try Subprocess.run(Subprocess.enlog, ["sync"], environment: environment)
        XCTAssertEqual(finish.status, 0, finish.standardError)
        let uids = try await f.serverUIDs()
        print("watch SIGTERM: \(runs) runs, \(stoppedMidSync) stopped before their upload completed; \(uids.count) notes on the server")
        XCTAssertEqual(uids.count, 150)
        XCTAssertEqual(Set(uids), Set(queued.map(\.uid)), "each note exactly once")
        let synced = try await f.outbox.counts()[.synced]
        XCTAssertEqual(synced, 150)
        let integrity = try await f.outbox.integrityCheck()
        XCTAssertEqual(integrity, ["ok"])
    }
}
