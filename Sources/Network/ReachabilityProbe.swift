#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Support
import EvernoteAPI
import Configuration

/// A socket descriptor owned by exactly one object: closed when the owner goes away, on every path.
final class ReachabilitySocket {
    let fd: Int32

    init?(family: Int32, type: Int32) {
        #if canImport(Glibc)
        let fd = socket(family, type | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
        let fd = socket(family, type, 0)
        #endif
        guard fd >= 0 else { return nil }
        self.fd = fd
    }

    func setNonBlocking() {
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
    }

    /// The pending error of a finished non-blocking connect (`SO_ERROR`).
    var pendingError: Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &value, &length) == 0 else { return errno }
        return value
    }

    deinit { close(fd) }
}

/// Monotonic clock in nanoseconds (`CLOCK_MONOTONIC`), for per-attempt milliseconds.
package struct ReachabilityClock {
    package static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    static func milliseconds(from start: UInt64, to end: UInt64) -> Double {
        Double(end &- start) / 1_000_000
    }
}

/// The blocking probe steps. Each takes only validated literals; none of them resolves a name.
enum ReachabilityProbe {
    static let noRouteErrors: Set<Int32> = [ENETUNREACH, EHOSTUNREACH, EAFNOSUPPORT, EADDRNOTAVAIL]

    static func outcome(forErrno code: Int32) -> ReachabilityAttempt.Outcome {
        switch code {
        case 0: return .connected
        case ECONNREFUSED: return .refused
        case ETIMEDOUT: return .timedOut
        case _ where noRouteErrors.contains(code): return .noRoute
        default: return .failed
        }
    }

    /// Route check: `connect()` on a UDP socket only consults the routing table — nothing is sent —
    /// and fails at once with ENETUNREACH/EHOSTUNREACH when the kernel has no route to the address.
    static func routeCheck(_ address: ReachabilityAddress) -> ReachabilityAttempt {
        let start = ReachabilityClock.now()
        func attempt(_ outcome: ReachabilityAttempt.Outcome, _ code: Int32?) -> ReachabilityAttempt {
            ReachabilityAttempt(address: address.description, phase: .route, outcome: outcome, errorCode: code,
                                milliseconds: ReachabilityClock.milliseconds(from: start, to: ReachabilityClock.now()))
        }
        guard let socket = ReachabilitySocket(family: address.addressFamily, type: Int32(SOCK_DGRAM.rawValue)) else {
            let code = errno
            return attempt(noRouteErrors.contains(code) ? .noRoute : .failed, code)
        }
        let result = address.withSockaddr { connect(socket.fd, $0, $1) }
        if result == 0 { return attempt(.routed, nil) }
        let code = errno
        return attempt(noRouteErrors.contains(code) || code == ENETDOWN ? .noRoute : .failed, code)
    }

    /// Non-blocking TCP `connect()` to every address at once, then `poll()` until the first answer
    /// (a completed handshake or a RST) or until `deadline` (monotonic nanoseconds).
    /// Returns every attempt in input order, and the index of the first answer.
    static func race(_ addresses: [ReachabilityAddress], deadline: UInt64)
        -> (attempts: [ReachabilityAttempt], winner: Int?) {
        struct Pending { let socket: ReachabilitySocket; let start: UInt64 }
        var attempts = [ReachabilityAttempt?](repeating: nil, count: addresses.count)
        var pending: [Int: Pending] = [:]
        var winner: Int?

        func finish(_ index: Int, _ outcome: ReachabilityAttempt.Outcome, _ code: Int32?, start: UInt64) {
            attempts[index] = ReachabilityAttempt(
                address: addresses[index].description, phase: .tcp, outcome: outcome, errorCode: code,
                milliseconds: ReachabilityClock.milliseconds(from: start, to: ReachabilityClock.now()))
            if winner == nil, outcome.isAnswer { winner = index }
        }

        for (index, address) in addresses.enumerated() {
            let start = ReachabilityClock.now()
            guard let socket = ReachabilitySocket(family: address.addressFamily, type: Int32(SOCK_STREAM.rawValue)) else {
                let code = errno
                finish(index, outcome(forErrno: code), code, start: start)
                continue
            }
            socket.setNonBlocking()
            let result = address.withSockaddr { connect(socket.fd, $0, $1) }
            if result == 0 {
                finish(index, .connected, nil, start: start)
            } else if errno == EINPROGRESS || errno == EINTR || errno == EAGAIN {
                pending[index] = Pending(socket: socket, start: start)
            } else {
                let code = errno
                finish(index, outcome(forErrno: code), code, start: start)
            }
        }

        while winner == nil, !pending.isEmpty {
            let now = ReachabilityClock.now()
            guard now < deadline else { break }
            let order = pending.keys.sorted()
            var fds = order.map { pollfd(fd: pending[$0]!.socket.fd, events: Int16(POLLOUT), revents: 0) }
            let timeout = Int32(min(Int64(Int32.max), Int64((deadline - now + 999_999) / 1_000_000)))
            let ready = poll(&fds, nfds_t(fds.count), max(timeout, 1))
            if ready < 0 {
                if errno == EINTR { continue }
                break
            }
            for (slot, index) in order.enumerated() where fds[slot].revents != 0 {
                let entry = pending.removeValue(forKey: index)!
                let code = entry.socket.pendingError
                finish(index, outcome(forErrno: code), code == 0 ? nil : code, start: entry.start)
            }
        }

        // Whatever is still pending either lost the race or ran out of budget; its socket closes here.
        for (index, entry) in pending {
            finish(index, winner == nil ? .timedOut : .abandoned, nil, start: entry.start)
        }
        pending.removeAll()
        return (attempts.map { $0! }, winner)
    }
}
