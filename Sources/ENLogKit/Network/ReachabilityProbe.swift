#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
struct ReachabilityClock {
    static func now() -> UInt64 {
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

/// A name lookup bounded by a deadline: `getaddrinfo` runs on its own thread and is abandoned
/// (left to finish in the background) when the deadline passes. Only used for a proxy given by name.
final class BoundedNameLookup: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    private var condition = pthread_cond_t()
    private var done = false
    private var results: [ReachabilityAddress] = []
    private var failure: Int32 = 0
    private let name: String
    private let port: UInt16

    private init(name: String, port: UInt16) {
        self.name = name
        self.port = port
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&condition, nil)
    }

    deinit {
        pthread_cond_destroy(&condition)
        pthread_mutex_destroy(&mutex)
    }

    /// Addresses for `name`, or nil when the lookup failed or did not finish before `deadline`.
    static func resolve(_ name: String, port: UInt16, deadline: UInt64) -> (addresses: [ReachabilityAddress], timedOut: Bool) {
        let lookup = BoundedNameLookup(name: name, port: port)
        var thread = pthread_t()
        let box = Unmanaged.passRetained(lookup).toOpaque()
        let started = pthread_create(&thread, nil, { raw in
            let lookup = Unmanaged<BoundedNameLookup>.fromOpaque(raw!).takeRetainedValue()
            lookup.run()
            return nil
        }, box)
        guard started == 0 else {
            Unmanaged<BoundedNameLookup>.fromOpaque(box).release()
            return ([], false)
        }
        pthread_detach(thread)
        return lookup.wait(until: deadline)
    }

    private func run() {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV | AI_ADDRCONFIG
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(name, String(port), &hints, &list)
        var found: [ReachabilityAddress] = []
        var cursor = list
        while let entry = cursor?.pointee {
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
            if entry.ai_family == AF_INET, let raw = entry.ai_addr {
                var address = raw.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
                inet_ntop(AF_INET, &address, &text, socklen_t(text.count))
            } else if entry.ai_family == AF_INET6, let raw = entry.ai_addr {
                var address = raw.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
                inet_ntop(AF_INET6, &address, &text, socklen_t(text.count))
            }
            let literal = String(cString: text)
            if let address = try? ReachabilityAddress(host: literal, port: port), !found.contains(address) {
                found.append(address)
            }
            cursor = entry.ai_next
        }
        if list != nil { freeaddrinfo(list) }
        pthread_mutex_lock(&mutex)
        results = found
        failure = status
        done = true
        pthread_cond_broadcast(&condition)
        pthread_mutex_unlock(&mutex)
    }

    private func wait(until deadline: UInt64) -> (addresses: [ReachabilityAddress], timedOut: Bool) {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        while !done {
            let now = ReachabilityClock.now()
            guard now < deadline else { return ([], true) }
            // pthread_cond_timedwait takes CLOCK_REALTIME; wait in short slices to stay on the monotonic deadline.
            var realtime = timespec()
            clock_gettime(CLOCK_REALTIME, &realtime)
            let slice = min(deadline - now, 50_000_000)
            var nanos = UInt64(realtime.tv_nsec) + slice
            realtime.tv_sec += Int(nanos / 1_000_000_000)
            nanos %= 1_000_000_000
            realtime.tv_nsec = Int(nanos)
            pthread_cond_timedwait(&condition, &mutex, &realtime)
        }
        return (results, false)
    }
}
