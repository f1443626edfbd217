import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// `enlog serve` as an operator runs it: a device added, the receiver started as a process with
/// everything on loopback (no geocoder, no map, reachability probing a closed local port).
final class ServeProcessFixture {
    let home: TemporaryDirectory
    private(set) var environment: [String: String]

    init() throws {
        home = try TemporaryDirectory()
        environment = ["HOME": home.url.path, "XDG_CONFIG_HOME": home.path("config"), "XDG_DATA_HOME": home.path("data"),
                       "XDG_CACHE_HOME": home.path("cache"), "ENLOG_DB": home.path("outbox.sqlite"), "TZ": "UTC",
                       "ENLOG_MAP_STYLE": "none", "ENLOG_GEOCODING_ENABLED": "false",
                       "ENLOG_NETWORK_PROBES": "127.0.0.1:\(try freeLoopbackPort())",
                       "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"]
    }

    func set(_ name: String, _ value: String) { environment[name] = value }

    /// `enlog devices add NAME --json`: the device's secret and what it prints for each app.
    func addDevice(_ name: String) throws -> (secret: String, links: [String: Any]) {
        let result = try Subprocess.run(Subprocess.enlog, ["devices", "add", name, "--json"], environment: environment)
        XCTAssertEqual(result.status, 0, result.standardError)
        let links = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        return (try XCTUnwrap(links["secret"] as? String), links)
    }

    /// Each device's points, from `enlog devices list --json`.
    func points() throws -> [String: Int] {
        let result = try Subprocess.run(Subprocess.enlog, ["devices", "list", "--json"], environment: environment)
        XCTAssertEqual(result.status, 0, result.standardError)
        let rows = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [[String: Any]])
        return Dictionary(uniqueKeysWithValues: rows.compactMap { row in (row["name"] as? String).map { ($0, row["points"] as? Int ?? -1) } })
    }

    /// `enlog serve` on 127.0.0.1 and a free port; returns once it says it listens.
    func serve(_ arguments: [String] = [], via launcher: [String] = []) throws -> (process: ChildProcess, port: UInt16) {
        let port = try freeLoopbackPort()
        let command = launcher.isEmpty ? [Subprocess.enlog.path, "serve", "--listen", "127.0.0.1:\(port)"] + arguments
                                       : launcher + [Subprocess.enlog.path, "serve"] + arguments
        let process = try ChildProcess(command[0], Array(command.dropFirst()), environment: environment.map { "\($0.key)=\($0.value)" })
        if launcher.isEmpty {
            XCTAssertTrue(process.waitForOutput(containing: "listening on"), process.output)
        }
        return (process, port)
    }

    /// curl, as a phone's app posts (the tests' only HTTP client: a real one).
    func curl(_ arguments: [String]) throws -> ProcessResult {
        guard let curl = Subprocess.which("curl") else { throw XCTSkip("needs curl") }
        return try Subprocess.run(curl, ["-sS", "--max-time", "60", "-w", "\n%{http_code}"] + arguments)
    }

    static func ownTracksLocation(_ seconds: Int) -> String {
        #"{"_type":"location","lat":48.8584,"lon":2.2945,"tst":\#(seconds),"acc":12,"alt":35,"vel":4,"cog":90,"batt":80,"tid":"ph","topic":"owntracks/alice/phone"}"#
    }
}

/// OwnTracks in MQTT mode: a real mosquitto, `mosquitto_pub -q 1` publishing as the app does.
final class ServeMQTTTests: XCTestCase {
    func testOwnTracksLocationsFromTheBrokerAreStoredOnceForKnownDevicesOnly() throws {
        let broker = try MosquittoBroker()
        let f = try ServeProcessFixture()
        _ = try f.addDevice("alice")
        f.set("ENLOG_SERVE_MQTT_BROKER", broker.url)
        let (serve, _) = try f.serve()
        XCTAssertTrue(serve.waitForOutput(containing: "MQTT subscribed to owntracks/+/+ at QoS 1"), serve.output)
        let first = ServeProcessFixture.ownTracksLocation(1_764_201_600)
        try broker.publish("owntracks/alice/phone", first)
        try broker.publish("owntracks/alice/phone", first)   // sent again, as after a lost PUBACK
        try broker.publish("owntracks/alice/phone", ServeProcessFixture.ownTracksLocation(1_764_201_660))
        try broker.publish("owntracks/mallory/phone", ServeProcessFixture.ownTracksLocation(1_764_201_600))
        try broker.publish("owntracks/alice/phone", #"{"_type":"transition","event":"enter"}"#)
        try broker.publish("owntracks/alice/phone", "not json")
        XCTAssertTrue(serve.waitForOutput(containing: "no device named mallory"), serve.output)
        XCTAssertTrue(serve.waitForOutput(containing: "owntracks/alice/phone: owntracks:"), serve.output)
        try blockUntil("alice's two points") { try f.points()["alice"] == 2 }
        serve.stop()
        XCTAssertEqual(serve.exitStatus.map { $0 >> 8 }, 0, serve.output)
        XCTAssertEqual(try f.points(), ["alice": 2])
    }

    /// A broker that is not there is a log line and retries; HTTP goes on meanwhile.
    func testAnUnreachableBrokerDoesNotStopTheReceiver() throws {
        let f = try ServeProcessFixture()
        let (secret, _) = try f.addDevice("alice")
        f.set("ENLOG_SERVE_MQTT_BROKER", "mqtt://127.0.0.1:\(try freeLoopbackPort())")
        let (serve, port) = try f.serve()
        XCTAssertTrue(serve.waitForOutput(containing: "unreachable"), serve.output)
        let reply = try f.curl(["-u", "alice:\(secret)", "-H", "Content-Type: application/json",
                                "--data-binary", ServeProcessFixture.ownTracksLocation(1_764_201_600), "http://127.0.0.1:\(port)/owntracks"])
        XCTAssertEqual(reply.standardOutput, "[]\n200", reply.standardError)
        serve.stop()
        XCTAssertEqual(try f.points(), ["alice": 1])
    }

    func testABadBrokerURLIsAConfigurationError() throws {
        let f = try ServeProcessFixture()
        f.set("ENLOG_SERVE_MQTT_BROKER", "mqtts://broker.example.org")
        let result = try Subprocess.run(Subprocess.enlog, ["serve", "--check"], environment: f.environment)
        XCTAssertEqual(result.status, 78, result.standardError)
        XCTAssertTrue(result.standardError.contains("ENLOG_SERVE_MQTT_BROKER"), result.standardError)
        XCTAssertTrue(result.standardError.contains("mqtts://, which enlog does not speak"), result.standardError)
    }
}

/// systemd's socket activation and readiness protocol, with Debian's `systemd-socket-activate`
/// (which binds the port, and on the first connection runs enlog with it as descriptor 3 and
/// LISTEN_FDS=1) and a datagram socket of the test's own as NOTIFY_SOCKET.
final class ServeSystemdTests: XCTestCase {
    func testSocketActivatedWithReadyAndStoppingAndACleanExit() throws {
        guard let activate = Subprocess.which("systemd-socket-activate") else {
            if ProcessInfo.processInfo.environment["CI"] == "true" { throw MissingPackage(description: "CI=true: systemd-socket-activate missing") }
            throw XCTSkip("needs systemd-socket-activate (Debian's systemd)")
        }
        let f = try ServeProcessFixture()
        let (secret, _) = try f.addDevice("alice")
        let notify = try NotifySocketListener(directory: f.home)
        f.set("NOTIFY_SOCKET", notify.path)
        let port = try freeLoopbackPort()
        // It hands down only the variables named with -E.
        let (serve, _) = try f.serve(via: [activate.path, "-l", "127.0.0.1:\(port)"] + f.environment.keys.sorted().flatMap { ["-E", $0] })
        XCTAssertTrue(serve.waitForOutput(containing: "Listening on 127.0.0.1:\(port)"), serve.output)
        // The first connection starts enlog; it waits in the socket's queue meanwhile.
        let reply = try f.curl(["-u", "alice:\(secret)", "-H", "Content-Type: application/json",
                                "--data-binary", ServeProcessFixture.ownTracksLocation(1_764_201_600), "http://127.0.0.1:\(port)/owntracks"])
        XCTAssertEqual(reply.standardOutput, "[]\n200", reply.standardError)
        XCTAssertTrue(serve.waitForOutput(containing: "the socket systemd passed"), serve.output)
        let ready = try XCTUnwrap(notify.messages(until: "READY=1", seconds: hangSeconds))
        XCTAssertTrue(ready.contains { $0.contains("STATUS=listening on 127.0.0.1:\(port)") }, "\(ready)")
        serve.stop()
        XCTAssertEqual(serve.exitStatus.map { $0 >> 8 }, 0, serve.output)
        XCTAssertNotNil(notify.messages(until: "STOPPING=1", seconds: hangSeconds))
        XCTAssertEqual(try f.points(), ["alice": 1])
    }

    /// Two sockets, or a descriptor 3 that is no listening socket, are refused in one line (78).
    func testWhatSystemdPassedMustBeOneListeningSocket() throws {
        let f = try ServeProcessFixture()
        for (fds, expected) in [("2", "systemd passed 2 sockets; enlog serve listens on exactly one"),
                                ("1", "descriptor 3 from systemd is not a listening TCP socket")] {
            var environment = f.environment
            environment["LISTEN_FDS"] = fds
            // No LISTEN_PID: sd_listen_fds(3) then takes the variables as meant for this process.
            let result = try Subprocess.run(Subprocess.enlog, ["serve", "--listen", "127.0.0.1:\(try freeLoopbackPort())"], environment: environment)
            XCTAssertEqual(result.status, 78, result.standardError)
            XCTAssertTrue(result.standardError.contains(expected), result.standardError)
        }
    }
}

/// contrib/nginx/enlog-serve.conf in front of `enlog serve`, in Debian's real nginx with TLS from a
/// certificate openssl made: only the lines marked CHANGE are rewritten (ports, certificate, key),
/// nginx runs with its own prefix, pid, log and temp directories on 127.0.0.1.
final class ReverseProxyTests: XCTestCase {
    func testThePostThroughNginxWithTLSIsStored() throws {
        guard let nginx = Subprocess.which("nginx") ?? ["/usr/sbin/nginx"].map(URL.init(fileURLWithPath:))
            .first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else { try MosquittoBroker.missing("nginx") }
        let f = try ServeProcessFixture()
        let (secret, links) = try f.addDevice("alice")
        let (serve, enlogPort) = try f.serve()
        let directory = try TemporaryDirectory()
        let certificate = try SelfSignedCertificate(in: directory, for: "IP:127.0.0.1")
        let tlsPort = try freeLoopbackPort()
        let shipped = try String(contentsOf: Fixtures.repositoryRoot.appendingPathComponent("contrib/nginx/enlog-serve.conf"), encoding: .utf8)
        var rewritten = 0
        let server = shipped.split(separator: "\n", omittingEmptySubsequences: false).compactMap { line -> String? in
            guard line.contains("# CHANGE") else { return String(line) }
            rewritten += 1
            let text = line.trimmingCharacters(in: .whitespaces)
            if text.hasPrefix("listen [::]") { return nil }   // loopback only
            if text.hasPrefix("listen ") { return "    listen 127.0.0.1:\(tlsPort) ssl;" }
            if text.hasPrefix("server_name ") { return "    server_name 127.0.0.1;" }
            if text.hasPrefix("ssl_certificate ") { return "    ssl_certificate \(certificate.certificate);" }
            if text.hasPrefix("ssl_certificate_key ") { return "    ssl_certificate_key \(certificate.key);" }
            if text.hasPrefix("proxy_pass ") { return "        proxy_pass http://127.0.0.1:\(enlogPort);" }
            XCTFail("a CHANGE line the test does not know: \(line)")
            return String(line)
        }.joined(separator: "\n")
        XCTAssertEqual(rewritten, 6, "the lines marked CHANGE")
        let prefix = directory.path("nginx")
        for sub in ["logs", "temp"] { try FileManager.default.createDirectory(atPath: "\(prefix)/\(sub)", withIntermediateDirectories: true) }
        try server.write(toFile: "\(prefix)/enlog-serve.conf", atomically: true, encoding: .utf8)
        // As root nginx's workers would switch to `nobody`, which may not read the test's files.
        let user = getuid() == 0 ? "user root;\n" : ""
        try """
            \(user)worker_processes 1;
            daemon off;
            pid \(prefix)/nginx.pid;
            error_log \(prefix)/logs/error.log warn;
            events { worker_connections 64; }
            http {
                access_log off;
                client_body_temp_path \(prefix)/temp/body;
                proxy_temp_path \(prefix)/temp/proxy;
                fastcgi_temp_path \(prefix)/temp/fastcgi;
                uwsgi_temp_path \(prefix)/temp/uwsgi;
                scgi_temp_path \(prefix)/temp/scgi;
                include \(prefix)/enlog-serve.conf;
            }

            """.write(toFile: "\(prefix)/nginx.conf", atomically: true, encoding: .utf8)
        let proxy = try ChildProcess(nginx, ["-p", prefix, "-c", "\(prefix)/nginx.conf", "-e", "\(prefix)/logs/error.log"], errorsToTest: true)
        defer { proxy.stop() }
        try blockUntil("nginx to listen") {
            guard proxy.isRunning else { throw WaitTimedOut(description: "nginx exited: \((try? String(contentsOfFile: "\(prefix)/logs/error.log", encoding: .utf8)) ?? "")") }
            return LoopbackSocket.accepts(tlsPort)
        }
        let owntracks = try XCTUnwrap(links["owntracks"] as? [String: Any])
        XCTAssertEqual(owntracks["user"] as? String, "alice")
        let url = "https://127.0.0.1:\(tlsPort)/owntracks"
        let stored = try f.curl(["--cacert", certificate.certificate, "-u", "alice:\(secret)", "-H", "Content-Type: application/json",
                                 "--data-binary", ServeProcessFixture.ownTracksLocation(1_764_201_600), url])
        XCTAssertEqual(stored.standardOutput, "[]\n200", stored.standardError)
        // A wrong secret through the proxy is enlog's 401, and nothing is stored.
        let refused = try f.curl(["--cacert", certificate.certificate, "-u", "alice:wrong", "-H", "Content-Type: application/json",
                                  "--data-binary", ServeProcessFixture.ownTracksLocation(1_764_201_660), url, "-o", "/dev/null"])
        XCTAssertEqual(refused.standardOutput, "\n401", refused.standardError)
        // Plain HTTP to the TLS port is not served.
        let plain = try f.curl(["http://127.0.0.1:\(tlsPort)/owntracks", "-o", "/dev/null"])
        XCTAssertEqual(plain.standardOutput, "\n400", plain.standardError)
        serve.stop()
        XCTAssertEqual(try f.points(), ["alice": 1])
    }
}
