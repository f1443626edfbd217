import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Support
import EvernoteAPI
import Configuration
import Network
import Auth
import Capture
import Compose
import Outbox
import Diary
import Sync

/// systemd's readiness protocol (`sd_notify(3)`), spoken directly: one datagram of
/// `KEY=VALUE` lines to the unix socket named by `$NOTIFY_SOCKET` (a path, or an abstract-namespace
/// name when it starts with '@'). Without `NOTIFY_SOCKET` every call does nothing, as under a
/// terminal. Implemented here rather than through libsystemd: the protocol is a documented
/// datagram, and it spares every enlog command a library only `watch` needs.
package struct SystemdNotifier: Sendable {
    /// The socket address bytes (sockaddr_un), or nil when not run by systemd.
    private let address: [UInt8]?
    /// Half of `$WATCHDOG_USEC` (when it is meant for this process): how often to send WATCHDOG=1.
    package let watchdogInterval: Duration?

    package init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        address = environment["NOTIFY_SOCKET"].flatMap(Self.socketAddress)
        if let text = environment["WATCHDOG_USEC"], let usec = UInt64(text), usec > 0,
           environment["WATCHDOG_PID"].map({ $0 == String(getpid()) }) ?? true {
            watchdogInterval = .microseconds(Int64(usec / 2))
        } else {
            watchdogInterval = nil
        }
    }

    package var isActive: Bool { address != nil }

    static func socketAddress(_ name: String) -> [UInt8]? {
        guard name.hasPrefix("/") || name.hasPrefix("@") else { return nil }
        var path = Array(name.utf8)
        if path.first == UInt8(ascii: "@") { path[0] = 0 }   // abstract namespace: a leading NUL
        let capacity = MemoryLayout.size(ofValue: sockaddr_un().sun_path)
        guard path.count < capacity else { return nil }
        var bytes: [UInt8] = []
        withUnsafeBytes(of: sa_family_t(AF_UNIX)) { bytes.append(contentsOf: $0) }
        return bytes + path
    }

    /// Sends `fields` (`READY=1`, `STATUS=…`, `WATCHDOG=1`, `STOPPING=1`) as one datagram.
    /// Returns false when not under systemd or the send failed (systemd then notices by itself).
    @discardableResult
    package func notify(_ fields: [String]) -> Bool {
        guard let address else { return false }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        // A status line must stay one line: the protocol is newline-separated.
        let message = Array(fields.map { $0.replacingOccurrences(of: "\n", with: " ") }.joined(separator: "\n").utf8)
        let sent = address.withUnsafeBytes { addr in
            message.withUnsafeBytes { body in
                sendto(fd, body.baseAddress, body.count, Int32(MSG_NOSIGNAL),
                       addr.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(addr.count))
            }
        }
        return sent == message.count
    }
}
