import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Support
import Configuration
import Network

/// gpsd's report stream, followed for as long as the caller wants: every fix, in order, through
/// the quality filter; the connection re-made with capped backoff whenever gpsd goes away
/// (stopped, restarted, not yet started).
public struct GPSDStream: Sendable {
    public enum Event: Sendable, Equatable {
        case connected(endpoint: String)
        /// The connection failed or ended; the next attempt comes after `retryIn` seconds.
        case lost(LocationError, retryIn: TimeInterval)
        case accepted(Fix)
        case rejected(Fix, QualityFilter.Rejection)
    }

    public var endpoint: GPSDLocation.Endpoint
    public var filter: QualityFilter
    /// Bounds connecting and the host lookup; reading waits as long as gpsd is connected.
    public var connectTimeout: TimeInterval
    public var backoff: Backoff

    /// 1 s, doubling to 30 s: a restarted gpsd is found again within seconds, a missing one
    /// costs one attempt every half minute.
    public struct Backoff: Sendable, Equatable {
        public var first: TimeInterval = 1
        public var cap: TimeInterval = 30
        public init(first: TimeInterval = 1, cap: TimeInterval = 30) {
            self.first = first
            self.cap = cap
        }
        public func delay(afterFailures failures: Int) -> TimeInterval {
            min(cap, first * pow(2, Double(max(0, failures - 1))))
        }
    }

    public init(endpoint: GPSDLocation.Endpoint, filter: QualityFilter, connectTimeout: TimeInterval = 10,
                backoff: Backoff = Backoff()) {
        self.endpoint = endpoint
        self.filter = filter
        self.connectTimeout = connectTimeout
        self.backoff = backoff
    }

    /// The events, until the consuming task stops iterating (or is cancelled). The socket waits on
    /// a thread of its own (`BlockingCall`), woken through a pipe when the stream ends.
    public func events() -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingNewest(1024))
        guard let wake = WakePipe() else {
            continuation.yield(.lost(.gpsdUnreachable(endpoint: endpoint.description, detail: "cannot create a pipe"), retryIn: 0))
            continuation.finish()
            return stream
        }
        let follower = self
        let task = Task {
            await BlockingCall.run("enlog.gpsd.watch", wake: { wake.signal() }) { flag in
                follower.follow(wake: wake, cancelled: flag) { continuation.yield($0) }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// Connects, reads, reconnects, until woken.
    private func follow(wake: WakePipe, cancelled: CancellationFlag, emit: (Event) -> Void) {
        var failures = 0
        while !cancelled.isCancelled {
            var session = GPSDSession(endpoint: endpoint, timeout: connectTimeout, filter: filter, wake: wake)
            let problem: LocationError
            do {
                try session.stream(addresses: try resolve(), connectTimeout: connectTimeout, filter: filter) { event in
                    // A gpsd that accepts and hangs up at once must not be retried every second:
                    // the backoff starts again only once it has delivered a fix.
                    switch event {
                    case .accepted, .rejected: failures = 0
                    default: break
                    }
                    emit(event)
                }
                return
            } catch let error as LocationError {
                problem = error
            } catch {
                return   // woken: the stream is over
            }
            failures += 1
            let delay = backoff.delay(afterFailures: failures)
            emit(.lost(problem, retryIn: delay))
            var fds = [pollfd(fd: wake.readEnd, events: Int16(POLLIN), revents: 0)]
            let deadline = Date().addingTimeInterval(delay)
            while !cancelled.isCancelled, deadline.timeIntervalSinceNow > 0 {
                let milliseconds = Int32((deadline.timeIntervalSinceNow * 1000).rounded(.up))
                if poll(&fds, 1, max(1, milliseconds)) > 0 { return }
            }
        }
    }

    /// The addresses of the gpsd host. On this thread, so a slow name server only delays gpsd.
    private func resolve() throws(LocationError) -> [NameLookup.Entry] {
        let literal = NameLookup.system(endpoint.host, endpoint.port, AI_NUMERICHOST)
        if literal.status == 0, !literal.entries.isEmpty { return literal.entries }
        let answer = NameLookup.system(endpoint.host, endpoint.port, 0)
        guard answer.status == 0, !answer.entries.isEmpty else {
            throw .gpsdUnreachable(endpoint: endpoint.description, detail: "cannot resolve host: \(answer.failureDescription)")
        }
        return answer.entries
    }
}

extension GPSDSession {
    /// Follows one connection until it ends (throws the reason) or the wake pipe fires
    /// (`CancellationError`).
    mutating func stream(addresses: [NameLookup.Entry], connectTimeout: TimeInterval, filter: QualityFilter,
                         emit: (GPSDStream.Event) -> Void) throws {
        let connectDeadline = Date().addingTimeInterval(connectTimeout)
        let socket = try connect(to: addresses, before: connectDeadline)
        defer { close(socket) }
        try send(#"?WATCH={"enable":true,"json":true};"# + "\n", on: socket, before: connectDeadline)
        emit(.connected(endpoint: endpointDescription))
        var pending = Data()
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            _ = try wait(for: socket, events: Int16(POLLIN), until: .distantFuture)
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK { continue }
                throw LocationError.gpsdUnreachable(endpoint: endpointDescription, detail: String(cString: strerror(errno)))
            }
            if count == 0 { throw LocationError.gpsdClosedConnection(endpoint: endpointDescription) }
            pending.append(contentsOf: buffer[0..<count])
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = pending[pending.startIndex..<newline]
                pending = Data(pending[(newline + 1)...])
                guard case .report(let fix?) = Self.decode(line: line, needsTime: filter.maxAge != nil) else { continue }
                if let rejection = filter.rejection(of: fix) {
                    emit(.rejected(fix, rejection))
                } else {
                    emit(.accepted(fix))
                }
            }
        }
    }
}
