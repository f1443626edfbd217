import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Support

/// systemd's socket activation (`sd_listen_fds(3)`), read directly like `SystemdNotifier`: a
/// `.socket` unit binds the port and starts the service with the listening sockets from descriptor 3
/// on, `LISTEN_FDS` of them, for the process `LISTEN_PID`. `systemd-socket-activate` does the same
/// from a shell, which is how the tests start it.
package enum SystemdSocketActivation {
    package static let firstDescriptor: Int32 = 3

    package enum Failure: ENLogError, Equatable {
        case badCount(String)
        case notOne(Int)
        case notListeningStream(Int32, String)

        package var reason: String {
            switch self {
            case .badCount(let text):
                return "LISTEN_FDS is \"\(TerminalText.oneLine(String(text.prefix(20))))\", not a count of sockets"
            case .notOne(let count):
                return "systemd passed \(count) sockets; enlog serve listens on exactly one"
            case .notListeningStream(let descriptor, let what):
                return "descriptor \(descriptor) from systemd is not a listening TCP socket (\(what))"
            }
        }

        package var recoverySuggestion: String? { "give enlog-serve.socket exactly one ListenStream=ADDRESS:PORT" }
        package var category: ErrorCategory { .config }
    }

    /// The one listening socket passed to this process, or nil when it was not socket-activated
    /// (no `LISTEN_FDS`, or `LISTEN_PID` names another process: the variables were inherited).
    /// The variables are removed from the environment either way, so that no child reads them, and
    /// the socket gets close-on-exec.
    package static func listeningSocket(environment: [String: String] = ProcessInfo.processInfo.environment,
                                       processID: pid_t = getpid()) throws(Failure) -> Int32? {
        defer { for name in ["LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES"] { unsetenv(name) } }
        guard let countText = environment["LISTEN_FDS"] else { return nil }
        if let pidText = environment["LISTEN_PID"], pidText != String(processID) { return nil }
        guard let count = Int(countText), count >= 0 else { throw .badCount(countText) }
        guard count == 1 else { throw .notOne(count) }
        let descriptor = firstDescriptor
        var type: Int32 = 0, listening: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_TYPE, &type, &length) == 0 else {
            throw .notListeningStream(descriptor, String(cString: strerror(errno)))
        }
        length = socklen_t(MemoryLayout<Int32>.size)
        guard type == Int32(SOCK_STREAM.rawValue), getsockopt(descriptor, SOL_SOCKET, SO_ACCEPTCONN, &listening, &length) == 0, listening != 0 else {
            throw .notListeningStream(descriptor, type == Int32(SOCK_STREAM.rawValue) ? "not listening" : "not a stream socket")
        }
        var storage = sockaddr_storage()
        length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let family = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) == 0 ? Int32($0.pointee.sa_family) : -1 }
        }
        guard family == AF_INET || family == AF_INET6 else { throw .notListeningStream(descriptor, "not an IP socket") }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        return descriptor
    }

    /// `ADDRESS:PORT` of a bound socket, for the log line that says where enlog listens.
    package static func localAddress(of descriptor: Int32) -> String? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        return withUnsafeMutablePointer(to: &storage) { pointer -> String? in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address -> String? in
                guard getsockname(descriptor, address, &length) == 0 else { return nil }
                var host = [CChar](repeating: 0, count: Int(NI_MAXHOST)), service = [CChar](repeating: 0, count: Int(NI_MAXSERV))
                guard getnameinfo(address, length, &host, socklen_t(host.count), &service, socklen_t(service.count),
                                  NI_NUMERICHOST | NI_NUMERICSERV) == 0 else { return nil }
                let hostText = String(cString: host), port = String(cString: service)
                return hostText.contains(":") ? "[\(hostText)]:\(port)" : "\(hostText):\(port)"
            }
        }
    }
}
