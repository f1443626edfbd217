import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Support
import Configuration
import Network

/// The first fix from gpsd (JSON protocol over TCP) that passes the quality filter.
///
/// The wait is bounded by `timeout` and ends early when the calling task is cancelled. When no
/// fix is accepted the error says what was seen: no gpsd, no fix at all, or only fixes that
/// failed the filter (with the best of them).
package struct GPSDLocation: LocationSource {
    package struct Endpoint: Sendable, Equatable, CustomStringConvertible {
        package var host: String
        package var port: UInt16

        package static let defaultPort: UInt16 = 2947
        package static let `default` = Endpoint(host: "127.0.0.1", port: defaultPort)

        package init(host: String, port: UInt16 = Endpoint.defaultPort) {
            self.host = host
            self.port = port
        }

        /// `HOST`, `HOST:PORT`, `[IPv6]`, `[IPv6]:PORT`, or a bare IPv6 address.
        package init(parsing text: String) throws(LocationError) {
            let text = text.trimmingCharacters(in: .whitespaces)
            var host = text
            var portText: Substring?
            if text.hasPrefix("[") {
                guard let close = text.firstIndex(of: "]") else { throw .invalidGPSDEndpoint(text) }
                host = String(text[text.index(after: text.startIndex)..<close])
                let rest = text[text.index(after: close)...]
                if !rest.isEmpty {
                    guard rest.hasPrefix(":") else { throw .invalidGPSDEndpoint(text) }
                    portText = rest.dropFirst()
                }
            } else if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") {
                host = String(text[..<colon])
                portText = text[text.index(after: colon)...]
            }
            guard !host.isEmpty, !host.contains(where: \.isWhitespace) else { throw .invalidGPSDEndpoint(text) }
            var port = Endpoint.defaultPort
            if let portText {
                guard let value = UInt16(portText), value > 0 else { throw .invalidGPSDEndpoint(text) }
                port = value
            }
            self.init(host: host, port: port)
        }

        package var description: String {
            host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        }
    }

    package var endpoint: Endpoint
    package var timeout: TimeInterval
    package var filter: QualityFilter
    /// Resolves a gpsd host given by name (a seam for tests); the lookup counts against `timeout`.
    var resolver: NameLookup.Resolver = NameLookup.system

    package static let defaultTimeout: TimeInterval = 30

    package init(endpoint: Endpoint = .default, timeout: TimeInterval = GPSDLocation.defaultTimeout,
                filter: QualityFilter = QualityFilter()) {
        self.endpoint = endpoint
        self.timeout = timeout
        self.filter = filter
    }

    package func currentFix() async throws -> Fix {
        let start = Date()
        let deadline = start.addingTimeInterval(timeout)
        // The name lookup and the socket wait each block; both run on threads of their own, so
        // that they neither tie up a cooperative thread for up to `timeout` nor ignore cancellation.
        let addresses = try await resolve(before: deadline)
        guard let wake = WakePipe() else {
            throw LocationError.gpsdUnreachable(endpoint: endpoint.description,
                                                detail: "cannot create a pipe: \(String(cString: strerror(errno)))")
        }
        let endpoint = self.endpoint, timeout = self.timeout, filter = self.filter
        return try await BlockingCall.run("enlog.gpsd", onCancel: .wake { wake.signal() }) { _ in
            var session = GPSDSession(endpoint: endpoint, timeout: timeout, filter: filter, wake: wake)
            return try session.run(addresses: addresses, start: start, deadline: deadline)
        }
    }

    /// The addresses of the gpsd host, found before `deadline`.
    private func resolve(before deadline: Date) async throws -> [NameLookup.Entry] {
        // An address literal needs no lookup: getaddrinfo with AI_NUMERICHOST answers at once.
        let literal = NameLookup.system(endpoint.host, endpoint.port, AI_NUMERICHOST)
        if literal.status == 0, !literal.entries.isEmpty { return literal.entries }
        let budget = Duration.milliseconds(Int64((max(deadline.timeIntervalSinceNow, 0) * 1000).rounded(.up)))
        guard let answer = try await NameLookup.resolve(endpoint.host, port: endpoint.port, flags: 0,
                                                        within: budget, using: resolver) else {
            throw LocationError.gpsdUnreachable(endpoint: endpoint.description,
                                                detail: "the host name did not resolve within \(Int(timeout)) s")
        }
        guard answer.status == 0, !answer.entries.isEmpty else {
            throw LocationError.gpsdUnreachable(endpoint: endpoint.description,
                                                detail: "cannot resolve host: \(answer.failureDescription)")
        }
        return answer.entries
    }
}

/// One connection's worth of state, on the thread that waits for gpsd.
package struct GPSDSession {
    private let endpoint: GPSDLocation.Endpoint
    private let timeout: TimeInterval
    private let filter: QualityFilter
    private let wake: WakePipe

    private var reports = 0
    private var fixesSeen = 0
    private var noDevice = false
    private var best: (fix: Fix, rejection: QualityFilter.Rejection)?

    var endpointDescription: String { endpoint.description }

    init(endpoint: GPSDLocation.Endpoint, timeout: TimeInterval, filter: QualityFilter, wake: WakePipe) {
        self.endpoint = endpoint
        self.timeout = timeout
        self.filter = filter
        self.wake = wake
    }

    mutating func run(addresses: [NameLookup.Entry], start: Date, deadline: Date) throws -> Fix {
        let socket = try connect(to: addresses, before: deadline)
        defer { close(socket) }
        try send(#"?WATCH={"enable":true,"json":true};"# + "\n", on: socket, before: deadline)

        var pending = Data()
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            guard try wait(for: socket, events: Int16(POLLIN), until: deadline) else {
                throw timeoutError(waited: Date().timeIntervalSince(start))
            }
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK { continue }
                throw LocationError.gpsdUnreachable(endpoint: endpoint.description,
                                                    detail: String(cString: strerror(errno)))
            }
            if count == 0 { throw LocationError.gpsdClosedConnection(endpoint: endpoint.description) }
            pending.append(contentsOf: buffer[0..<count])
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = pending[pending.startIndex..<newline]
                pending = Data(pending[(newline + 1)...])
                if let fix = consider(line: line) { return fix }
            }
        }
    }

    // MARK: Reports

    private struct Report: Decodable {
        struct Device: Decodable {}
        let kind: String
        let mode: Int?
        let time: String?
        let lat, lon, alt, altHAE, altMSL, eph, epx, epy, speed, track: Double?
        let devices: [Device]?

        enum CodingKeys: String, CodingKey {
            case kind = "class"
            case mode, time, lat, lon, alt, altHAE, altMSL, eph, epx, epy, speed, track, devices
        }
    }

    /// What one report line says, as far as enlog cares.
    package enum Line: Equatable {
        case devices(empty: Bool)
        /// A TPV report; the fix when it has a usable position (mode ≥ 2, a time when ages matter).
        case report(Fix?)
        case other
    }

    /// Decodes one line of gpsd's JSON stream. `needsTime`: a TPV without a time has an unknown
    /// age (gpsd sends a few before it knows the date), so it gives no fix when ages matter.
    package static func decode(line: Data, needsTime: Bool) -> Line {
        guard let report = try? JSONDecoder().decode(Report.self, from: line) else { return .other }
        switch report.kind {
        case "DEVICES":
            return .devices(empty: report.devices?.isEmpty ?? false)
        case "TPV":
            break
        default:
            return .other
        }
        guard let mode = report.mode, mode >= 2, let lat = report.lat, let lon = report.lon else { return .report(nil) }
        let timestamp: Date
        // Read by hand as track files' times are, not by ISO8601DateFormatter: ICU under it
        // divides by zero (SIGFPE, the process ends) on 35 or more fractional digits.
        if let time = report.time.flatMap(TrackTime.parse) {
            timestamp = time
        } else if !needsTime {
            timestamp = Date()
        } else {
            return .report(nil)
        }
        let accuracy = report.eph ?? {
            guard let x = report.epx, let y = report.epy else { return nil }
            return (x * x + y * y).squareRoot()
        }()
        let altitude = mode >= 3 ? (report.altMSL ?? report.alt ?? report.altHAE) : nil
        return .report(try? Fix(latitude: lat, longitude: lon, altitude: altitude, horizontalAccuracy: accuracy,
                                speed: report.speed, course: report.track, timestamp: timestamp, source: .gpsd))
    }

    /// The fix in a report line when it is one the filter accepts.
    private mutating func consider(line: Data) -> Fix? {
        switch Self.decode(line: line, needsTime: filter.maxAge != nil) {
        case .devices(let empty):
            noDevice = empty
            return nil
        case .other:
            return nil
        case .report(let fix):
            reports += 1
            guard let fix else { return nil }
            fixesSeen += 1
            guard let rejection = filter.rejection(of: fix) else { return fix }
            if best == nil || Self.isBetter(fix, than: best!.fix) { best = (fix, rejection) }
            return nil
        }
    }

    /// More accurate wins; among equally accurate fixes the newer one.
    private static func isBetter(_ fix: Fix, than other: Fix) -> Bool {
        let a = fix.horizontalAccuracy.flatMap { $0 >= 0 ? $0 : nil } ?? .infinity
        let b = other.horizontalAccuracy.flatMap { $0 >= 0 ? $0 : nil } ?? .infinity
        return a != b ? a < b : fix.timestamp > other.timestamp
    }

    private func timeoutError(waited: TimeInterval) -> LocationError {
        if let best {
            return .gpsdNoAcceptableFix(endpoint: endpoint.description, waited: waited, fixesSeen: fixesSeen,
                                        best: best.fix, rejection: best.rejection)
        }
        return .gpsdNoFix(endpoint: endpoint.description, waited: waited, reports: reports, noDevice: noDevice)
    }

    // MARK: Sockets

    func connect(to addresses: [NameLookup.Entry], before deadline: Date) throws -> Int32 {
        var lastError = ECONNREFUSED
        for info in addresses {
            let fd = socket(info.family, info.socketType, info.protocolNumber)
            guard fd >= 0 else { lastError = errno; continue }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL, 0) | O_NONBLOCK)
            if info.withSockaddr({ Glibc.connect(fd, $0, $1) }) == 0 { return fd }
            guard errno == EINPROGRESS else { lastError = errno; close(fd); continue }
            do {
                guard try wait(for: fd, events: Int16(POLLOUT), until: deadline) else {
                    close(fd)
                    throw LocationError.gpsdUnreachable(endpoint: endpoint.description,
                                                        detail: "no answer within \(Int(timeout)) s")
                }
            } catch {
                close(fd)
                throw error
            }
            var soError: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &soError, &length)
            if soError == 0 { return fd }
            lastError = soError
            close(fd)
        }
        let detail = lastError == ECONNREFUSED
            ? "connection refused (is gpsd running and listening there?)"
            : String(cString: strerror(lastError))
        throw LocationError.gpsdUnreachable(endpoint: endpoint.description, detail: detail)
    }

    func send(_ text: String, on fd: Int32, before deadline: Date) throws {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            guard try wait(for: fd, events: Int16(POLLOUT), until: deadline) else {
                throw LocationError.gpsdUnreachable(endpoint: endpoint.description, detail: "cannot send the WATCH command")
            }
            let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw LocationError.gpsdUnreachable(endpoint: endpoint.description, detail: String(cString: strerror(errno)))
            }
            bytes = bytes.dropFirst(sent)
        }
    }

    /// `true` when `fd` is ready, `false` at the deadline; throws `CancellationError` when woken.
    func wait(for fd: Int32, events: Int16, until deadline: Date) throws -> Bool {
        while true {
            let remaining = deadline.timeIntervalSinceNow
            if remaining <= 0 { return false }
            var fds = [pollfd(fd: fd, events: events, revents: 0),
                       pollfd(fd: wake.readEnd, events: Int16(POLLIN), revents: 0)]
            let milliseconds = Int32(min(remaining * 1000, Double(Int32.max)).rounded(.up))
            let ready = poll(&fds, nfds_t(fds.count), milliseconds)
            if ready < 0 {
                if errno == EINTR { continue }
                throw LocationError.gpsdUnreachable(endpoint: endpoint.description, detail: String(cString: strerror(errno)))
            }
            if fds[1].revents != 0 { throw CancellationError() }
            if fds[0].revents != 0 { return true }
        }
    }
}
