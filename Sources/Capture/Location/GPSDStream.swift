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
package struct GPSDStream: Sendable {
    package enum Event: Sendable, Equatable {
        case connected(endpoint: String)
        /// The connection failed or ended; the next attempt comes after `retryIn` seconds.
        case lost(LocationError, retryIn: TimeInterval)
        case accepted(Fix)
        case rejected(Fix, QualityFilter.Rejection)
        /// GPS time runs `by` seconds ahead of the system clock (`GPSClockCheck`): the clock is
        /// wrong, and fixes are judged by GPS time until it is set. Once per episode.
        case clockBehind(by: TimeInterval)
        /// The system clock agrees with GPS time again (NTP, or someone, set it).
        case clockAgrees
    }

    package var endpoint: GPSDLocation.Endpoint
    package var filter: QualityFilter
    /// Bounds connecting and the host lookup; reading waits as long as gpsd is connected.
    package var connectTimeout: TimeInterval
    package var backoff: Backoff

    /// 1 s, doubling to 30 s: a restarted gpsd is found again within seconds, a missing one
    /// costs one attempt every half minute.
    package struct Backoff: Sendable, Equatable {
        package var first: TimeInterval = 1
        package var cap: TimeInterval = 30
        package init(first: TimeInterval = 1, cap: TimeInterval = 30) {
            self.first = first
            self.cap = cap
        }
        package func delay(afterFailures failures: Int) -> TimeInterval {
            min(cap, first * pow(2, Double(max(0, failures - 1))))
        }
    }

    package init(endpoint: GPSDLocation.Endpoint, filter: QualityFilter, connectTimeout: TimeInterval = 10,
                backoff: Backoff = Backoff()) {
        self.endpoint = endpoint
        self.filter = filter
        self.connectTimeout = connectTimeout
        self.backoff = backoff
    }

    /// The events, until the consuming task stops iterating (or is cancelled). The socket waits on
    /// a thread of its own (`BlockingCall`), woken through a pipe when the stream ends.
    package func events() -> AsyncStream<Event> {
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
        var clock = GPSClockCheck()
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
                for event in clock.judge(fix, now: Date(), filter: filter) { emit(event) }
            }
        }
    }
}

/// Judges live gpsd fixes when the system clock and GPS time disagree by more than
/// `QualityFilter.clockDisagreement`.
///
/// GPS time ahead of the clock: the clock is wrong. That is what an RTC-less machine (a
/// Raspberry Pi) looks like before NTP has set it, its clock restored from the last shutdown or
/// at 1970; a clock does not run ahead by itself, and a receiver's date errors (GPS week
/// rollover) put GPS time in the past, not the future. Such fixes are still recorded, at their
/// GPS time: a user of a logger expects the trip recorded, and satellites' time is the best
/// time the machine has. Their freshness is judged against the clock corrected by the offset
/// (the largest seen: the freshest fix bounds it), so a stale fix replayed later is still
/// refused. The notes carry the fix's time; only what runs on the clock alone (the queue's
/// timestamps, when a digest is due) waits for the clock to be set.
///
/// GPS time behind the clock is not corrected: the fix may be stale, or the receiver's date
/// wrong; those fixes are refused as too old, as before, and `watch` says why once.
package struct GPSClockCheck: Sendable, Equatable {
    /// How far GPS time is ahead of the system clock, while it is.
    package private(set) var clockBehind: TimeInterval?
    /// Fixes refused as too old in a row under the correction: after `relearnAfter`, the
    /// offset came from a fix stamped too far ahead and is learned again.
    private var staleInARow = 0
    static let relearnAfter = 10

    package init() {}

    /// The events for `fix` seen at `now`: the verdict, after a change of the clock's state.
    package mutating func judge(_ fix: Fix, now: Date, filter: QualityFilter) -> [GPSDStream.Event] {
        let ahead = fix.timestamp.timeIntervalSince(now)
        var events: [GPSDStream.Event] = []
        guard ahead > QualityFilter.clockDisagreement else {
            if clockBehind != nil {
                clockBehind = nil
                staleInARow = 0
                events.append(.clockAgrees)
            }
            let rejection = filter.rejection(of: fix, now: now)
            events.append(rejection.map { .rejected(fix, $0) } ?? .accepted(fix))
            return events
        }
        if clockBehind == nil { events.append(.clockBehind(by: ahead)) }
        if staleInARow >= Self.relearnAfter { clockBehind = nil; staleInARow = 0 }
        let offset = max(clockBehind ?? ahead, ahead)
        clockBehind = offset
        let rejection = filter.rejection(of: fix, now: now.addingTimeInterval(offset))
        if case .tooOld? = rejection { staleInARow += 1 } else { staleInARow = 0 }
        events.append(rejection.map { .rejected(fix, $0) } ?? .accepted(fix))
        return events
    }
}
