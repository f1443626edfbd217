import Foundation
import Synchronization
import Support
import Configuration
import Capture
import Outbox
import Watch

/// An HTTP request as the receiver needs it, whatever carried it (SwiftNIO here; a test, a
/// reverse proxy's forwarded request): method, path, query, headers, whole body.
package struct PhoneRequest: Sendable {
    package var method: String
    /// The path without the query, percent-encoded as sent.
    package var path: String
    package var query: String
    /// Header names lowercased.
    package var headers: [String: String]
    package var body: [UInt8]

    package init(method: String, path: String, query: String = "", headers: [String: String] = [:], body: [UInt8] = []) {
        self.method = method.uppercased()
        self.path = path
        self.query = query
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }) { first, _ in first }
        self.body = body
    }

    /// `/owntracks?x=1` → path and query.
    package init(method: String, uri: String, headers: [String: String] = [:], body: [UInt8] = []) {
        let parts = uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        self.init(method: method, path: String(parts.first ?? ""), query: parts.count > 1 ? String(parts[1]) : "", headers: headers, body: body)
    }
}

/// The reply to send: a status, a body, and headers beyond the length.
package struct PhoneResponse: Sendable, Equatable {
    package var status: Int
    package var contentType: String
    package var body: String
    package var headers: [String: String]

    package init(status: Int, contentType: String = "text/plain; charset=utf-8", body: String = "", headers: [String: String] = [:]) {
        self.status = status
        self.contentType = contentType
        self.body = body
        self.headers = headers
    }

    /// The same for every failed authentication: a missing, unknown or wrong name or secret.
    static let unauthorized = PhoneResponse(status: 401, body: "authentication required\n",
                                            headers: ["WWW-Authenticate": "Basic realm=\"enlog\", charset=\"UTF-8\""])
}

/// The receiver, without a transport: authenticates a request's device, parses its payload
/// (`PhonePayload`), stores its points in one transaction (`OutboxStore.storePhonePoints`, with
/// the points of requests that came at the same time: `PhoneCommits`) and only then answers as
/// the app expects; then tells the diary there are new points.
/// `enlog serve` puts it behind SwiftNIO; another transport (MQTT) calls `store` directly.
package final class PhoneReceiver: Sendable {
    package struct Limits: Sendable {
        /// Requests per minute per device; the bucket holds a minute's worth.
        package var requestsPerMinute: Int
        package init(requestsPerMinute: Int = 600) { self.requestsPerMinute = requestsPerMinute }
    }

    /// What one accepted request did.
    package struct Outcome: Sendable, Equatable {
        package var device: String
        package var app: PhoneProtocol
        package var received: Int
        package var added: Int
        package var alreadyThere: Int
    }

    let outbox: OutboxStore
    let limits: Limits
    let report: @Sendable (WatchReport) -> Void
    /// Told after each commit that added points; reads them from the outbox (nil: storing only).
    let diary: PhoneDiary?
    /// Every request's points go through it: one transaction for the requests that came together.
    let commits: PhoneCommits
    private let buckets = Mutex<[String: TokenBucket]>([:])

    package init(outbox: OutboxStore, limits: Limits = Limits(), diary: PhoneDiary? = nil,
                report: @escaping @Sendable (WatchReport) -> Void) {
        self.outbox = outbox
        self.limits = limits
        self.diary = diary
        self.report = report
        self.commits = PhoneCommits(outbox: outbox)
    }

    /// Answers one request. Never throws: every failure is a status and one log line.
    package func handle(_ request: PhoneRequest, now: Date = Date()) async -> PhoneResponse {
        let segments = request.path.split(separator: "/").map { String($0).removingPercentEncoding ?? String($0) }
        guard let first = segments.first, let app = PhoneProtocol(rawValue: first.lowercased()) else {
            return PhoneResponse(status: 404, body: "not found: the paths are /owntracks, /overland, /gpslogger and /traccar\n")
        }
        let allowed = app == .gpslogger || app == .traccar ? ["GET", "POST"] : ["POST"]
        guard allowed.contains(request.method) else {
            return PhoneResponse(status: 405, body: "method not allowed\n", headers: ["Allow": allowed.joined(separator: ", ")])
        }
        let credentials = Self.credentials(request, segments: segments)
        let authenticated: String?
        do {
            authenticated = try await authenticate(credentials)
        } catch {
            // The outbox could not be read (locked beyond its timeout): not the phone's fault.
            report(WatchReport(.problem, "store-failed", "\(app.rawValue): could not look up the device: \(error.reason)",
                               ["app": .string(app.rawValue), "status": .int(503)], time: now))
            return PhoneResponse(status: 503, body: "not stored, send again later\n", headers: ["Retry-After": "30"])
        }
        guard let device = authenticated else {
            report(WatchReport(.event, "refused", "\(app.rawValue): refused a request without valid credentials",
                               ["app": .string(app.rawValue), "status": .int(401)], time: now))
            return .unauthorized
        }
        guard take(from: device, now: now) else {
            report(WatchReport(.event, "limited", "\(device): more than \(limits.requestsPerMinute) requests a minute; answered 429",
                               ["device": .string(device), "status": .int(429)], time: now))
            return PhoneResponse(status: 429, body: "too many requests\n", headers: ["Retry-After": "10"])
        }
        let message = PhoneMessage(query: request.query, contentType: request.headers["content-type"], body: request.body)
        do {
            let outcome = try await store(app, device: device, message: message, now: now)
            _ = outcome
            return Self.success(app)
        } catch let error as PhonePayloadError {
            report(WatchReport(.problem, "bad-request", "\(device): \(error.reason); nothing stored",
                               ["device": .string(device), "app": .string(app.rawValue), "status": .int(400)], time: now))
            return PhoneResponse(status: 400, body: error.reason + "\n")
        } catch {
            // The outbox could not commit (locked beyond its timeout, disk full): the app sends again.
            let reason = (error as? any ENLogError)?.reason ?? "\(error)"
            report(WatchReport(.problem, "store-failed", "\(device): could not store the points: \(reason)",
                               ["device": .string(device), "app": .string(app.rawValue), "status": .int(503)], time: now))
            return PhoneResponse(status: 503, body: "not stored, send again later\n", headers: ["Retry-After": "30"])
        }
    }

    /// Parses `message` as `app` sends it and stores its points as `device`'s, in one
    /// transaction, committed when this returns; then tells the diary there are new points.
    /// For transports that authenticate on their own (MQTT: the broker's user and topic).
    @discardableResult
    package func store(_ app: PhoneProtocol, device: String, message: PhoneMessage, now: Date = Date()) async throws -> Outcome {
        let points = try PhonePayload.parse(app, message)
        let stored = try await commits.store(OutboxStore.PhonePoints(points.fixes, device: device, receivedAt: now))
        let outcome = Outcome(device: device, app: app, received: points.fixes.count, added: stored.added, alreadyThere: stored.alreadyThere)
        report(WatchReport(.detail, "received", "\(device) (\(app.rawValue)): \(counted(outcome.received, "point")), "
                           + "\(outcome.added) new, \(outcome.alreadyThere) already there",
                           ["device": .string(device), "app": .string(app.rawValue), "points": .int(outcome.received),
                            "added": .int(outcome.added), "alreadyThere": .int(outcome.alreadyThere)], time: now))
        if stored.added > 0 { diary?.pointsCommitted() }
        return outcome
    }

    /// What each app takes as "delivered": OwnTracks any 2xx (a JSON array of messages back),
    /// Overland `{"result":"ok"}` only, the others any 200.
    static func success(_ app: PhoneProtocol) -> PhoneResponse {
        switch app {
        case .owntracks: return PhoneResponse(status: 200, contentType: "application/json", body: "[]")
        case .overland: return PhoneResponse(status: 200, contentType: "application/json", body: "{\"result\":\"ok\"}")
        case .gpslogger, .traccar: return PhoneResponse(status: 200, body: "OK\n")
        }
    }

    // MARK: Authentication

    struct Credentials: Equatable {
        var name: String?
        var secret: String?
    }

    /// The device name and secret, from HTTP Basic (name and password), a Bearer token (the
    /// secret, the name in the path: `/overland/NAME`), or the path alone (`/traccar/NAME/SECRET`,
    /// for apps that can carry neither).
    static func credentials(_ request: PhoneRequest, segments: [String]) -> Credentials {
        var credentials = Credentials(name: segments.count > 1 ? segments[1] : nil, secret: segments.count > 2 ? segments[2] : nil)
        guard let authorization = request.headers["authorization"] else { return credentials }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2 else { return Credentials() }
        switch parts[0].lowercased() {
        case "basic":
            guard let data = Data(base64Encoded: String(parts[1]).trimmingCharacters(in: .whitespaces)),
                  let text = String(data: data, encoding: .utf8), let colon = text.firstIndex(of: ":") else { return Credentials() }
            credentials = Credentials(name: String(text[..<colon]), secret: String(text[text.index(after: colon)...]))
        case "bearer":
            credentials.secret = String(parts[1]).trimmingCharacters(in: .whitespaces)
        default:
            return Credentials()
        }
        return credentials
    }

    /// The device's name when the secret is its own. The same work whether the device exists or
    /// not: one lookup by name, one hash, one comparison of every byte.
    func authenticate(_ credentials: Credentials) async throws(OutboxError) -> String? {
        let name = credentials.name ?? ""
        let record = DeviceSecrets.isValidName(name) ? try await outbox.device(named: name) : nil
        guard DeviceSecrets.matches(credentials.secret, stored: record?.secretHash), let record else { return nil }
        return record.name
    }

    // MARK: Rate

    private func take(from device: String, now: Date) -> Bool {
        let rate = Double(limits.requestsPerMinute)
        return buckets.withLock { buckets in
            var bucket = buckets[device] ?? TokenBucket(capacity: rate, tokens: rate, updated: now)
            let allowed = bucket.take(now: now, perSecond: rate / 60)
            buckets[device] = bucket
            return allowed
        }
    }
}

/// Up to `capacity` requests at once, refilled at a steady rate.
struct TokenBucket: Sendable {
    var capacity: Double
    var tokens: Double
    var updated: Date

    mutating func take(now: Date, perSecond: Double) -> Bool {
        tokens = min(capacity, tokens + max(0, now.timeIntervalSince(updated)) * perSecond)
        updated = now
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
