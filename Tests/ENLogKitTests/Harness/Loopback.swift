import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// A TCP socket on 127.0.0.1 (closed on deinit): bound to a port the kernel picked, listening
/// unless told otherwise; or a client connected to a loopback port.
final class LoopbackSocket: Sendable {
    let fd: Int32
    let port: UInt16

    init(listening: Bool = true, backlog: Int32 = 16) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw XCTSkip("cannot create a socket") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = Self.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound, !listening || listen(fd, backlog) == 0 else { close(fd); throw XCTSkip("cannot bind loopback") }
        self.fd = fd
        port = UInt16(bigEndian: address.sin_port)
    }

    /// A client connection to `port` on 127.0.0.1.
    init(connectingTo port: UInt16) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw XCTSkip("cannot create a socket") }
        var address = Self.loopback(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { close(fd); throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .ECONNREFUSED) }
        self.fd = fd
        self.port = port
    }

    /// Whether something accepts connections on `port` now.
    static func accepts(_ port: UInt16) -> Bool { (try? LoopbackSocket(connectingTo: port)) != nil }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        return address
    }

    deinit { close(fd) }
}

/// A loopback TCP port nothing listens on at the time of the call.
func freeLoopbackPort() throws -> UInt16 { try LoopbackSocket(listening: false).port }

/// The same, as an `Int` for URLs.
func closedLoopbackPort() throws -> Int { Int(try freeLoopbackPort()) }
