import Foundation
import XCTest
import GRDB
#if canImport(Glibc)
import Glibc
#endif

/// One HTTP/1.1 exchange over a socket of its own to 127.0.0.1: the request's bytes as given,
/// the reply read until the server closes (every request here says `Connection: close`).
enum LoopbackHTTP {
    struct Reply {
        var status: Int
        var headers: [String: String]
        var body: String
    }

    static func request(port: Int, _ method: String, _ target: String, headers: [String: String] = [:], body: [UInt8] = [],
                        seconds: Int = 30) -> Reply? {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { head += "\(name): \(value)\r\n" }
        if method != "GET" || !body.isEmpty { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        return exchange(port: port, Array(head.utf8) + body, seconds: seconds)
    }

    static func basic(_ user: String, _ password: String) -> String {
        "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }

    /// Connects, writes `bytes`, reads to EOF; nil when the connection failed or was reset
    /// before a whole status line came back.
    static func exchange(port: Int, _ bytes: [UInt8], seconds: Int = 30) -> Reply? {
        guard let fd = connectTo(port: port) else { return nil }
        defer { close(fd) }
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var noSignal: Int32 = 1
        _ = noSignal
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { break }
            offset += sent
        }
        noSignal = 0
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count <= 0 { break }
            received += buffer[0..<count]
        }
        return parse(received)
    }

    static func connectTo(port: Int) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { close(fd); return nil }
        return fd
    }

    static func parse(_ bytes: [UInt8]) -> Reply? {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n") else { return nil }
        let lines = text[..<split.lowerBound].components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { return nil }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Reply(status: status, headers: headers, body: String(text[split.upperBound...]))
    }
}

/// `enlog serve` as a process on 127.0.0.1 with a port the kernel picked (`--listen 127.0.0.1:0`),
/// read from its `listening` event.
final class ServeProcess {
    let child: ChildProcess
    let port: Int

    init(home: EnlogHome, environment: [String: String] = [:], verbose: Bool = true) throws {
        var env = home.environment
        env.merge(environment) { $1 }
        child = try ChildProcess(Subprocess.enlog.path, ["serve", "--listen", "127.0.0.1:0", "--json"] + (verbose ? ["-v"] : []),
                                 environment: env.map { "\($0.key)=\($0.value)" }.sorted())
        guard child.waitForOutput(containing: #""event":"listening""#, within: .seconds(60)),
              let line = child.output.split(separator: "\n").first(where: { $0.contains(#""event":"listening""#) }),
              let event = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
              let address = event["address"] as? String, let port = Int(address.split(separator: ":").last ?? "") else {
            kill(child.pid, SIGKILL)
            throw XCTSkip("enlog serve did not start: \(child.finish().output)")
        }
        self.port = port
    }

    func events(_ name: String) -> [[String: Any]] {
        child.output.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]).flatMap { $0["event"] as? String == name ? $0 : nil }
        }
    }

    func stop(_ signal: Int32 = SIGTERM) -> (status: Int32, output: String) {
        kill(child.pid, signal)
        return child.finish()
    }
}

final class ServeCommandTests: XCTestCase {
    static let fixtures = Fixtures.root.appendingPathComponent("phone")

    /// The outbox as another reader sees it while `enlog serve` writes (waiting out its commits).
    static func database(_ path: String) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.busyMode = .timeout(30)
        return try DatabaseQueue(path: path, configuration: configuration)
    }

    static func fixture(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: fixtures.appendingPathComponent(name)))
    }

    static func fixtureText(_ name: String) throws -> String {
        String(decoding: try fixture(name), as: UTF8.self)
    }

    func makeHome() throws -> EnlogHome {
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        return home
    }

    /// `enlog devices add NAME --json`: its secret.
    func addDevice(_ home: EnlogHome, _ name: String) throws -> (secret: String, json: [String: Any]) {
        let result = try home.run("devices", "add", name, "--json")
        XCTAssertEqual(result.status, 0, result.standardError)
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        return (try XCTUnwrap(json["secret"] as? String), json)
    }

    func count(_ home: EnlogHome, _ sql: String = "SELECT COUNT(*) FROM fix") throws -> Int {
        try Self.database(home.database).read { try Int.fetchOne($0, sql: sql) ?? -1 }
    }

    /// The requests each app makes with `devices add`'s settings, the fixture as the body or query.
    func appRequests(port: Int, name: String, secret: String) throws -> [(what: String, send: () -> LoopbackHTTP.Reply?, expect: String)] {
        let basic = LoopbackHTTP.basic(name, secret)
        let json = ["Content-Type": "application/json"]
        return [
            ("owntracks location", { LoopbackHTTP.request(port: port, "POST", "/owntracks", headers: json.merging(["Authorization": basic, "X-Limit-U": name, "X-Limit-D": name]) { $1 },
                                                          body: (try? Self.fixture("owntracks-location.json")) ?? []) }, "[]"),
            ("owntracks transition", { LoopbackHTTP.request(port: port, "POST", "/owntracks", headers: json.merging(["Authorization": basic]) { $1 },
                                                            body: (try? Self.fixture("owntracks-transition.json")) ?? []) }, "[]"),
            ("owntracks status", { LoopbackHTTP.request(port: port, "POST", "/owntracks", headers: json.merging(["Authorization": basic]) { $1 },
                                                        body: (try? Self.fixture("owntracks-status.json")) ?? []) }, "[]"),
            ("overland batch", { LoopbackHTTP.request(port: port, "POST", "/overland/\(name)", headers: json.merging(["Authorization": "Bearer \(secret)"]) { $1 },
                                                      body: (try? Self.fixture("overland-batch.json")) ?? []) }, #"{"result":"ok"}"#),
            ("gpslogger GET", { LoopbackHTTP.request(port: port, "GET", "/gpslogger?" + ((try? Self.fixtureText("gpslogger-query.txt")) ?? ""),
                                                     headers: ["Authorization": basic]) }, "OK\n"),
            ("gpslogger %ALL form", { LoopbackHTTP.request(port: port, "POST", "/gpslogger", headers: ["Authorization": basic, "Content-Type": "application/x-www-form-urlencoded"],
                                                           body: (try? Self.fixture("gpslogger-all-form.txt")) ?? []) }, "OK\n"),
            ("gpslogger JSON, token", { LoopbackHTTP.request(port: port, "POST", "/gpslogger/\(name)", headers: json.merging(["Authorization": "Bearer \(secret)"]) { $1 },
                                                             body: (try? Self.fixture("gpslogger-json.json")) ?? []) }, "OK\n"),
            ("traccar OsmAnd GET", { LoopbackHTTP.request(port: port, "GET", "/traccar/\(name)/\(secret)?" + ((try? Self.fixtureText("traccar-osmand-query.txt")) ?? "")) }, "OK\n"),
            ("traccar location= ms", { LoopbackHTTP.request(port: port, "POST", "/traccar/\(name)/\(secret)?" + ((try? Self.fixtureText("traccar-osmand-location-ms.txt")) ?? "")) }, "OK\n"),
            ("traccar client JSON", { LoopbackHTTP.request(port: port, "POST", "/traccar/\(name)/\(secret)", headers: json,
                                                           body: (try? Self.fixture("traccar-client.json")) ?? []) }, "OK\n"),
            ("traccar push token", { LoopbackHTTP.request(port: port, "POST", "/traccar/\(name)/\(secret)", headers: ["Content-Type": "application/x-www-form-urlencoded"],
                                                          body: (try? Self.fixture("traccar-push-token.txt")) ?? []) }, "OK\n"),
        ]
    }

    func testEveryAppsPayloadIsStoredOnceWithItsDeviceAndAnsweredAsTheAppExpects() throws {
        let home = try makeHome()
        let (secret, links) = try addDevice(home, "phone")
        for app in ["owntracks", "overland", "gpslogger", "traccar"] {
            let settings = try XCTUnwrap(links[app] as? [String: Any], "devices add --json has \(app)")
            XCTAssertTrue((settings["url"] as? String)?.hasPrefix("http://127.0.0.1:8473/") == true, "\(settings)")
        }
        let serve = try ServeProcess(home: home)
        for request in try appRequests(port: serve.port, name: "phone", secret: secret) {
            let reply = try XCTUnwrap(request.send(), request.what)
            XCTAssertEqual(reply.status, 200, "\(request.what): \(reply.body)")
            XCTAssertEqual(reply.body, request.expect, request.what)
        }
        // 1 OwnTracks location (the transition and status are not points), 3 Overland features
        // (`current` is not one), 3 GPSLogger, 3 Traccar (the push token has no position).
        XCTAssertEqual(try count(home), 10)
        XCTAssertEqual(try count(home, "SELECT COUNT(*) FROM fix WHERE device = 'phone' AND source = 'phone'"), 10)

        // Sent again (the app never saw the replies): acknowledged, nothing added.
        for request in try appRequests(port: serve.port, name: "phone", secret: secret) {
            XCTAssertEqual(request.send()?.status, 200, request.what)
        }
        XCTAssertEqual(try count(home), 10, "a resent batch adds nothing")
        XCTAssertEqual(serve.stop().status, 0)

        // history --track --json gives each point's device, and the apps' units became SI.
        let history = try home.run("history", "--track", "--json")
        let fixes = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(history.standardOutput.utf8)) as? [[String: Any]])
        XCTAssertEqual(fixes.count, 10)
        XCTAssertTrue(fixes.allSatisfy { $0["device"] as? String == "phone" }, "\(fixes)")
        func fix(at time: String) -> [String: Any]? { fixes.first { $0["timestamp"] as? String == time } }
        XCTAssertEqual(fix(at: "2026-11-18T11:06:40Z")?["speed"] as? Double, 5, "OwnTracks vel 18 km/h is 5 m/s")
        XCTAssertEqual(try XCTUnwrap(fix(at: "2026-11-18T13:06:40Z")?["speed"] as? Double), 5.2 * 1852 / 3600, accuracy: 1e-9, "Traccar's knots")
        XCTAssertNil(fix(at: "2026-11-18T15:00:30Z")?["speed"], "Overland's -1 is unknown")
        XCTAssertEqual(fix(at: "2026-11-18T15:00:30Z")?["horizontalAccuracy"] as? Double, 65, "the -0700 offset read")
        XCTAssertEqual(fix(at: "2026-11-18T13:07:40Z")?["latitude"] as? Double, -33.857001, "OsmAnd's millisecond timestamp and location=lat,lon")
    }

    func testWrongOrMissingSecretIs401TheSameWhetherTheDeviceExistsAndStoresNothing() throws {
        let home = try makeHome()
        let (secret, _) = try addDevice(home, "phone")
        let serve = try ServeProcess(home: home)
        let body = try Self.fixture("owntracks-location.json")
        var replies: [LoopbackHTTP.Reply] = []
        for headers in [[:], ["Authorization": LoopbackHTTP.basic("phone", secret + "x")], ["Authorization": LoopbackHTTP.basic("nobody", secret)],
                        ["Authorization": LoopbackHTTP.basic("phone", "")], ["Authorization": "Bearer " + secret],
                        ["Authorization": "Digest whatever"]] {
            replies.append(try XCTUnwrap(LoopbackHTTP.request(port: serve.port, "POST", "/owntracks", headers: headers, body: body)))
        }
        replies.append(try XCTUnwrap(LoopbackHTTP.request(port: serve.port, "POST", "/overland/nobody", headers: ["Authorization": "Bearer " + secret],
                                                          body: try Self.fixture("overland-batch.json"))))
        replies.append(try XCTUnwrap(LoopbackHTTP.request(port: serve.port, "GET", "/traccar/phone/wrong?" + (try Self.fixtureText("traccar-osmand-query.txt")))))
        for reply in replies {
            XCTAssertEqual(reply.status, 401)
            XCTAssertEqual(reply.body, replies[0].body, "the same reply whatever was wrong")
            XCTAssertEqual(reply.headers["www-authenticate"], replies[0].headers["www-authenticate"])
        }
        XCTAssertEqual(try count(home), 0, "nothing stored")
        // A removed device's secret stops working.
        XCTAssertEqual(LoopbackHTTP.request(port: serve.port, "POST", "/owntracks", headers: ["Authorization": LoopbackHTTP.basic("phone", secret)], body: body)?.status, 200)
        XCTAssertEqual(try home.run("devices", "remove", "phone").status, 0)
        XCTAssertEqual(LoopbackHTTP.request(port: serve.port, "POST", "/owntracks", headers: ["Authorization": LoopbackHTTP.basic("phone", secret)], body: body)?.status, 401)
        XCTAssertEqual(serve.stop().status, 0)
        XCTAssertEqual(try home.run("devices", "remove", "phone").status, 2, "no such device is a usage error")
    }

    func testABadBodyIs400WithOneLogLineAndNothingStored() throws {
        let home = try makeHome()
        let (secret, _) = try addDevice(home, "phone")
        let serve = try ServeProcess(home: home)
        let bearer = ["Authorization": "Bearer " + secret, "Content-Type": "application/json"]
        // The batch's last point is at latitude 95: the whole batch is refused, not its first points stored.
        var batch = try Self.fixtureText("overland-batch.json")
        batch = batch.replacingOccurrences(of: "[-122.040111, 37.335002]", with: "[-122.040111, 95.0]")
        let bad = try XCTUnwrap(LoopbackHTTP.request(port: serve.port, "POST", "/overland/phone", headers: bearer, body: Array(batch.utf8)))
        XCTAssertEqual(bad.status, 400)
        XCTAssertTrue(bad.body.contains("latitude 95"), bad.body)
        for body in ["{\"locations\": [", "[1,2]", "", "{\"locations\": [{\"type\":\"Feature\",\"geometry\":{\"type\":\"Point\",\"coordinates\":[1,2]},\"properties\":{\"timestamp\":\"yesterday\"}}]}"] {
            XCTAssertEqual(LoopbackHTTP.request(port: serve.port, "POST", "/overland/phone", headers: bearer, body: Array(body.utf8))?.status, 400, body)
        }
        XCTAssertEqual(LoopbackHTTP.request(port: serve.port, "GET", "/gpslogger?lat=abc&lon=1&timestamp=1795000000",
                                            headers: ["Authorization": LoopbackHTTP.basic("phone", secret)])?.status, 400)
        XCTAssertEqual(try count(home), 0, "nothing of a bad request is stored")
        XCTAssertEqual(serve.stop().status, 0)
        XCTAssertEqual(serve.events("bad-request").count, 6, "one line per bad request: \(serve.child.output)")
    }

    /// A batch is one transaction: a reader polling the history while 2000 points arrive sees
    /// none or all of them, never a part.
    func testABatchIsOneTransaction() throws {
        let home = try makeHome()
        let (secret, _) = try addDevice(home, "phone")
        let serve = try ServeProcess(home: home)
        let points = 2000
        let features = (0..<points).map { index in
            #"{"type":"Feature","geometry":{"type":"Point","coordinates":[13.4,52.5]},"properties":{"timestamp":"\#(InstantTextForTests.iso(1_795_000_000 + Double(index)))","horizontal_accuracy":5}}"#
        }
        let body = Array(#"{"locations":[\#(features.joined(separator: ","))]}"#.utf8)
        let seen = SeenCounts()
        let database = home.database
        let reader = Thread {
            guard let queue = try? ServeCommandTests.database(database) else { return }
            while !seen.done {
                if let value = try? queue.read({ try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM fix") }) { seen.add(value ?? -1) }
            }
        }
        reader.start()
        let reply = LoopbackHTTP.request(port: serve.port, "POST", "/overland/phone", headers: ["Authorization": "Bearer " + secret, "Content-Type": "application/json"], body: body)
        Thread.sleep(forTimeInterval: 0.2)
        seen.finish()
        XCTAssertEqual(reply?.status, 200)
        XCTAssertEqual(reply?.body, #"{"result":"ok"}"#)
        XCTAssertEqual(try count(home), points)
        XCTAssertTrue(seen.values.isSubset(of: [0, points]), "a reader saw part of the batch: \(seen.values.sorted().prefix(10))")
        XCTAssertEqual(serve.stop().status, 0)
    }

    func testLimitsRefuseLargeBodiesLargeHeadersFastDevicesAndSlowClients() throws {
        let home = try makeHome()
        let (secret, _) = try addDevice(home, "phone")
        let serve = try ServeProcess(home: home, environment: ["ENLOG_SERVE_MAX_BODY": "0.01", "ENLOG_SERVE_RATE": "5",
                                                               "ENLOG_SERVE_IDLE_TIMEOUT": "1"])
        let basic = LoopbackHTTP.basic("phone", secret)
        let large = [UInt8](repeating: UInt8(ascii: " "), count: 20_000)
        XCTAssertEqual(LoopbackHTTP.request(port: serve.port, "POST", "/owntracks", headers: ["Authorization": basic], body: large)?.status, 413)
        let header = String(repeating: "a", count: 20_000)
        let tooLong = LoopbackHTTP.request(port: serve.port, "POST", "/owntracks", headers: ["Authorization": basic, "X-Padding": header], body: [])
        XCTAssertTrue([400, 431].contains(tooLong?.status ?? 0), "\(String(describing: tooLong?.status))")
        // Five a minute: the sixth quick request is told to wait.
        var statuses: [Int] = []
        for index in 0..<6 {
            let point = #"{"_type":"location","lat":52.5,"lon":13.4,"tst":\#(1_795_000_000 + index)}"#
            statuses.append(LoopbackHTTP.request(port: serve.port, "POST", "/owntracks", headers: ["Authorization": basic], body: Array(point.utf8))?.status ?? 0)
        }
        XCTAssertEqual(statuses, [200, 200, 200, 200, 200, 429])
        XCTAssertEqual(try count(home), 5)
        // A client that sends half a request and then nothing is cut after the idle timeout.
        let fd = try XCTUnwrap(LoopbackHTTP.connectTo(port: serve.port))
        defer { close(fd) }
        let partial = Array("POST /owntracks HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{".utf8)
        _ = partial.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var byte: UInt8 = 0
        XCTAssertLessThanOrEqual(recv(fd, &byte, 1, 0), 0, "the slow client's connection is closed, not answered")
        XCTAssertEqual(serve.stop().status, 0)
    }

    /// `kill -9` while a client streams OwnTracks points and Overland batches: every point that
    /// was acknowledged is in the history exactly once, no batch is there in part, and sending
    /// everything again to a new `enlog serve` adds only what was never acknowledged.
    func testKillNineUnderLoadLosesNoAcknowledgedPoint() throws {
        // Wait until a fair number are acknowledged, then kill mid-stream.
        let (home, secret, serve, client) = try streamingPhone(untilAcknowledged: 60)
        kill(serve.child.pid, SIGKILL)
        _ = serve.child.finish()
        client.stop()
        while !client.finished { Thread.sleep(forTimeInterval: 0.01) }
        let acknowledged = client.acknowledged
        XCTAssertGreaterThanOrEqual(acknowledged.count, 60)
        let queue = try Self.database(home.database)
        try queue.read { db in
            XCTAssertEqual(try String.fetchOne(db, sql: "PRAGMA integrity_check"), "ok")
            for request in acknowledged {
                for time in request.times {
                    XCTAssertEqual(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM fix WHERE device = 'phone' AND timestamp = ?", arguments: [time]), 1,
                                   "acknowledged point \(time) present once")
                }
            }
            for request in client.sent where request.times.count > 1 {
                let present = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM fix WHERE timestamp IN (\(request.times.map { "'\($0)'" }.joined(separator: ",")))") ?? -1
                XCTAssertTrue(present == 0 || present == request.times.count, "a batch in part: \(present) of \(request.times.count)")
            }
        }
        let before = try count(home)
        XCTAssertLessThanOrEqual(before, client.sent.reduce(0) { $0 + $1.times.count })
        // Everything sent again to a new server: the acknowledged points add nothing.
        let again = try ServeProcess(home: home, verbose: false)
        let resend = StreamingClient(port: again.port, secret: secret)
        for request in client.sent { XCTAssertEqual(resend.send(request)?.status, 200) }
        XCTAssertEqual(try count(home), client.sent.reduce(0) { $0 + $1.times.count }, "each point once")
        XCTAssertEqual(again.stop().status, 0)
    }

    /// Two phones a day apart in space: `timeline --device` and `places list --device` tell each
    /// one's stays alone; without it, both.
    func testTimelineAndPlacesTakeADevice() throws {
        let home = try makeHome()
        let a = try addDevice(home, "a").secret, b = try addDevice(home, "b").secret
        let serve = try ServeProcess(home: home, verbose: false)
        // 2026-11-18 09:00 to 09:40 UTC (a) and 10:00 to 10:40 (b), a point a minute, each phone
        // at its own place.
        for (name, secret, latitude, start) in [("a", a, 52.512345, 1_794_992_400), ("b", b, 48.876543, 1_794_996_000)] {
            let points = (0..<40).map { #"{"_type":"location","lat":\#(latitude),"lon":13.4,"acc":5,"tst":\#(start + 60 * $0)}"# }
            let reply = LoopbackHTTP.request(port: serve.port, "POST", "/owntracks", headers: ["Authorization": LoopbackHTTP.basic(name, secret)],
                                             body: Array("[\(points.joined(separator: ","))]".utf8))
            XCTAssertEqual(reply?.status, 200, reply?.body ?? "")
        }
        XCTAssertEqual(serve.stop().status, 0)
        let both = try home.run("timeline", "--date", "2026-11-18", "--json")
        XCTAssertEqual(both.status, 0, both.standardError)
        XCTAssertTrue(both.standardOutput.contains("52.51") && both.standardOutput.contains("48.87"), both.standardOutput)
        let onlyA = try home.run("timeline", "--date", "2026-11-18", "--json", "--device", "a")
        XCTAssertEqual(onlyA.status, 0, onlyA.standardError)
        XCTAssertTrue(onlyA.standardOutput.contains("52.51"), onlyA.standardOutput)
        XCTAssertFalse(onlyA.standardOutput.contains("48.87"), onlyA.standardOutput)
        let placesB = try home.run("places", "list", "--json", "--device", "b")
        XCTAssertEqual(placesB.status, 0, placesB.standardError)
        XCTAssertTrue(placesB.standardOutput.contains("48.87"), placesB.standardOutput)
        XCTAssertFalse(placesB.standardOutput.contains("52.51"), placesB.standardOutput)
    }

    /// SIGTERM while a client streams: the server exits 0, and every acknowledged point is there once.
    func testSIGTERMUnderLoadFinishesWhatItAcknowledged() throws {
        let (home, _, serve, client) = try streamingPhone(untilAcknowledged: 30)
        let stopped = serve.stop(SIGTERM)
        client.stop()
        while !client.finished { Thread.sleep(forTimeInterval: 0.01) }
        XCTAssertEqual(stopped.status, 0, stopped.output)
        XCTAssertTrue(stopped.output.contains(#""event":"stopped""#), stopped.output)
        let acknowledged = client.acknowledged
        XCTAssertGreaterThanOrEqual(acknowledged.count, 30)
        try Self.database(home.database).read { db in
            for time in acknowledged.flatMap(\.times) {
                XCTAssertEqual(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM fix WHERE device = 'phone' AND timestamp = ?", arguments: [time]), 1, time)
            }
        }
    }

    /// A device "phone", a server, and a client streaming to it from a thread of its own, once
    /// `count` of its requests are acknowledged (or two minutes have gone by).
    private func streamingPhone(untilAcknowledged count: Int) throws
        -> (home: EnlogHome, secret: String, serve: ServeProcess, client: StreamingClient) {
        let home = try makeHome()
        let (secret, _) = try addDevice(home, "phone")
        let serve = try ServeProcess(home: home, verbose: false)
        let client = StreamingClient(port: serve.port, secret: secret)
        Thread { client.run() }.start()
        let start = Date()
        while client.acknowledgedCount < count, Date().timeIntervalSince(start) < 120 { Thread.sleep(forTimeInterval: 0.01) }
        return (home, secret, serve, client)
    }

    func testServeThatCannotListenExits69() throws {
        let home = try makeHome()
        // A listener of the test's own holds the port.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && listen(fd, 1) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        XCTAssertTrue(bound)
        let port = Int(UInt16(bigEndian: address.sin_port))
        let result = try home.run("serve", "--listen", "127.0.0.1:\(port)")
        XCTAssertEqual(result.status, 69, result.standardError)
        XCTAssertTrue(result.standardError.contains("cannot listen on 127.0.0.1:\(port)"), result.standardError)
    }

    /// `enlog serve` becomes the enlog-serve beside it (execv): the same process, so a unit's
    /// signals, socket and notify socket reach the receiver. Without it: one line and exit 69.
    func testServeBecomesTheEnlogServeBesideItAndSaysWhenItIsMissing() throws {
        let home = try makeHome()
        let serve = try ServeProcess(home: home)
        XCTAssertEqual(serve.events("listening").first?["pid"] as? Int, Int(serve.child.pid))
        XCTAssertEqual(try String(contentsOfFile: "/proc/\(serve.child.pid)/comm", encoding: .utf8), "enlog-serve\n")
        XCTAssertEqual(serve.stop().status, 0)

        let lonely = Fixtures.repositoryRoot.appendingPathComponent(".build/lonely-enlog-\(getpid())")
        try FileManager.default.createDirectory(at: lonely, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: lonely) }
        let binary = lonely.appendingPathComponent("enlog")
        do {
            try FileManager.default.linkItem(at: Subprocess.enlog, to: binary)
        } catch {
            try FileManager.default.copyItem(at: Subprocess.enlog, to: binary)
        }
        let result = try Subprocess.run(binary, ["serve", "--check"], environment: home.environment)
        XCTAssertEqual(result.status, 69, result.standardError)
        XCTAssertEqual(result.standardErrorLines, ["enlog: error: enlog serve runs \(lonely.path)/enlog-serve, which is missing or not executable "
                                                   + "(install enlog-serve beside enlog: it comes in the same package, and `swift build` builds it)"])
    }

    func testCheckValidatesTheConfigurationAndSIGTERMStopsCleanly() throws {
        let home = try makeHome()
        let check = try home.run("serve", "--check")
        XCTAssertEqual(check.status, 0, check.standardError)
        XCTAssertTrue(check.standardOutput.contains("127.0.0.1:8473"), check.standardOutput)
        var bad = home
        bad.extraEnvironment["ENLOG_SERVE_LISTEN"] = "localhost:99999"
        let refused = try bad.run("serve", "--check")
        XCTAssertEqual(refused.status, 78, refused.standardError)
        XCTAssertTrue(refused.standardError.contains("ENLOG_SERVE_LISTEN"), refused.standardError)
        let serve = try ServeProcess(home: home)
        let stopped = serve.stop(SIGTERM)
        XCTAssertEqual(stopped.status, 0, stopped.output)
        XCTAssertTrue(stopped.output.contains(#""event":"stopped""#), stopped.output)
    }
}

enum InstantTextForTests {
    static func iso(_ seconds: Double) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: Date(timeIntervalSince1970: seconds))
    }
}

/// Counts a polling reader saw, collected across threads.
final class SeenCounts: @unchecked Sendable {
    private let lock = NSLock()
    private var seen: Set<Int> = []
    private var stopped = false

    func add(_ value: Int) { lock.withLock { _ = seen.insert(value) } }
    var values: Set<Int> { lock.withLock { seen } }
    var done: Bool { lock.withLock { stopped } }
    func finish() { lock.withLock { stopped = true } }
}

/// Sends OwnTracks points and Overland batches of 20, one after another, recording which were
/// acknowledged; stops at the first connection that fails (the server was killed).
final class StreamingClient: @unchecked Sendable {
    struct Sent {
        var app: String
        var body: [UInt8]
        /// The points' times as the history stores them.
        var times: [String]
    }

    let port: Int
    let secret: String
    private let lock = NSLock()
    private var sentRequests: [Sent] = []
    private var acknowledgedRequests: [Sent] = []
    private var stopping = false
    private var done = false

    init(port: Int, secret: String) {
        self.port = port
        self.secret = secret
    }

    var acknowledgedCount: Int { lock.withLock { acknowledgedRequests.count } }
    var acknowledged: [Sent] { lock.withLock { acknowledgedRequests } }
    var sent: [Sent] { lock.withLock { sentRequests } }
    var finished: Bool { lock.withLock { done } }
    func stop() { lock.withLock { stopping = true } }

    static func stored(_ seconds: Int) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss.SSS"
        return formatter.string(from: Date(timeIntervalSince1970: Double(seconds)))
    }

    func send(_ request: Sent) -> LoopbackHTTP.Reply? {
        if request.app == "owntracks" {
            return LoopbackHTTP.request(port: port, "POST", "/owntracks", headers: ["Authorization": LoopbackHTTP.basic("phone", secret)], body: request.body, seconds: 10)
        }
        return LoopbackHTTP.request(port: port, "POST", "/overland/phone", headers: ["Authorization": "Bearer " + secret, "Content-Type": "application/json"],
                                    body: request.body, seconds: 10)
    }

    func run() {
        var second = 1_795_000_000
        var index = 0
        while !lock.withLock({ stopping }) {
            let request: Sent
            if index % 3 == 2 {
                let times = (0..<20).map { second + $0 }
                second += 20
                let features = times.map { #"{"type":"Feature","geometry":{"type":"Point","coordinates":[13.4,52.5]},"properties":{"timestamp":"\#(InstantTextForTests.iso(Double($0)))"}}"# }
                request = Sent(app: "overland", body: Array(#"{"locations":[\#(features.joined(separator: ","))]}"#.utf8), times: times.map(Self.stored))
            } else {
                request = Sent(app: "owntracks", body: Array(#"{"_type":"location","lat":52.5,"lon":13.4,"acc":5,"tst":\#(second)}"#.utf8), times: [Self.stored(second)])
                second += 1
            }
            index += 1
            lock.withLock { sentRequests.append(request) }
            guard let reply = send(request) else { break }
            guard reply.status == 200 else { break }
            lock.withLock { acknowledgedRequests.append(request) }
        }
        lock.withLock { done = true }
    }
}
