import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Support
import EvernoteAPI
import Configuration

/// The kernel's word that the network changed: rtnetlink multicast messages for links,
/// addresses and routes (IPv4 and IPv6), read from a NETLINK_ROUTE socket. Nothing is polled: the
/// socket's thread sleeps in `poll()` until the kernel has something to say.
package enum NetworkEvents {
    /// One batch of messages read together.
    package struct Change: Sendable, Equatable, CustomStringConvertible {
        /// Message kinds in the batch, e.g. `newroute`, `deladdr`; `overrun` when the kernel
        /// dropped messages (the socket buffer was full), which is a change all the same.
        package var kinds: [String]

        package var description: String { kinds.joined(separator: ",") }
    }

    package enum Failure: ENLogError, Equatable {
        case socket(String)
        package var reason: String {
            switch self {
            case .socket(let detail): return "cannot listen for network changes (rtnetlink): \(detail)"
            }
        }
        /// The kernel refused the subscription: like `WatchError.setupFailed`.
        package var category: ErrorCategory { .unavailable }
    }

    // <linux/rtnetlink.h>, which Glibc does not export to Swift.
    static let netlinkRoute: Int32 = 0
    static let groups: UInt32 = 0x1 /* RTMGRP_LINK */ | 0x10 /* RTMGRP_IPV4_IFADDR */ | 0x40 /* RTMGRP_IPV4_ROUTE */
        | 0x100 /* RTMGRP_IPV6_IFADDR */ | 0x400 /* RTMGRP_IPV6_ROUTE */
    static let kinds: [UInt16: String] = [16: "newlink", 17: "dellink", 20: "newaddr", 21: "deladdr",
                                          24: "newroute", 25: "delroute"]

    /// Opens the subscription now (so no change after this call is missed) and streams the
    /// changes until the consumer stops iterating. Throws when the socket cannot be opened.
    package static func subscribe() throws(Failure) -> AsyncStream<Change> {
        let fd = socket(AF_NETLINK, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), netlinkRoute)
        guard fd >= 0 else { throw .socket(String(cString: strerror(errno))) }
        // struct sockaddr_nl { sa_family_t nl_family; unsigned short nl_pad; __u32 nl_pid; __u32 nl_groups; }
        var address = [UInt8](repeating: 0, count: 12)
        withUnsafeBytes(of: sa_family_t(AF_NETLINK)) { address.replaceSubrange(0..<2, with: $0) }
        withUnsafeBytes(of: groups) { address.replaceSubrange(8..<12, with: $0) }
        let bound = address.withUnsafeBytes {
            bind(fd, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(12))
        }
        guard bound == 0 else {
            let detail = String(cString: strerror(errno))
            close(fd)
            throw .socket(detail)
        }
        guard let wake = WakePipe() else {
            close(fd)
            throw .socket("cannot create a pipe")
        }
        let (stream, continuation) = AsyncStream.makeStream(of: Change.self, bufferingPolicy: .bufferingNewest(64))
        let task = Task {
            await BlockingCall.run("enlog.netlink", wake: { wake.signal() }) { flag in
                defer { close(fd) }
                read(fd, wake: wake, cancelled: flag) { continuation.yield($0) }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    private static func read(_ fd: Int32, wake: WakePipe, cancelled: CancellationFlag, emit: (Change) -> Void) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while !cancelled.isCancelled {
            var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: wake.readEnd, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&fds, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return
            }
            if fds[1].revents != 0 { return }
            guard fds[0].revents != 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count < 0 {
                if errno == ENOBUFS { emit(Change(kinds: ["overrun"])) }
                continue
            }
            let kinds = messageKinds(buffer[0..<count])
            if !kinds.isEmpty { emit(Change(kinds: kinds)) }
        }
    }

    /// The kinds of the netlink messages in one datagram (struct nlmsghdr: u32 length, u16 type, …).
    static func messageKinds(_ bytes: ArraySlice<UInt8>) -> [String] {
        var kinds: [String] = []
        var offset = bytes.startIndex
        while bytes.endIndex - offset >= 16 {
            // Netlink headers are in host byte order.
            let (length, type) = bytes.withUnsafeBytes { raw -> (Int, UInt16) in
                let at = offset - bytes.startIndex
                return (Int(raw.loadUnaligned(fromByteOffset: at, as: UInt32.self)),
                        raw.loadUnaligned(fromByteOffset: at + 4, as: UInt16.self))
            }
            guard length >= 16, length <= bytes.endIndex - offset else { break }
            if let kind = self.kinds[type] { kinds.append(kind) }
            offset += (length + 3) & ~3   // NLMSG_ALIGN
        }
        return kinds
    }
}
