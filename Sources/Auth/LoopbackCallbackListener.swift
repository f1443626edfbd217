import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Support
import EvernoteAPI
import Configuration
import Network

/// The query parameters of an authorization callback (from the listener or a pasted URL).
package struct CallbackParameters: Sendable, Equatable {
    package var path: String
    /// First value of each query parameter, decoded.
    package var items: [String: String]

    package init(path: String, items: [String: String]) {
        self.path = path
        self.items = items
    }

    package subscript(name: String) -> String? { items[name] }

    /// Parses `/path?query` as it appears in an HTTP request line.
    package init(requestTarget: String) {
        if let mark = requestTarget.firstIndex(of: "?") {
            path = AuthEncoding.percentDecode(String(requestTarget[..<mark]), plusIsSpace: false)
            items = AuthEncoding.firstValues(AuthEncoding.parseForm(String(requestTarget[requestTarget.index(after: mark)...])))
        } else {
            path = AuthEncoding.percentDecode(requestTarget, plusIsSpace: false)
            items = [:]
        }
    }

    /// Parses the redirect URL a user pasted from the browser's address bar (headless `--no-browser` logins).
    /// Accepts the full `http://127.0.0.1:PORT/oauth_callback?…` URL, or just its `/oauth_callback?…` / `?…` part.
    package static func parsePastedURL(_ text: String, expectedPath: String = "/oauth_callback") throws -> CallbackParameters {
        var target = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if target.hasPrefix("<"), target.hasSuffix(">") { target = String(target.dropFirst().dropLast()) }
        guard !target.isEmpty else { throw AuthError.pastedURLInvalid("it is empty") }
        if let fragment = target.firstIndex(of: "#") { target = String(target[..<fragment]) }
        if target.lowercased().hasPrefix("http://") || target.lowercased().hasPrefix("https://") {
            guard let url = AuthURL(target) else { throw AuthError.pastedURLInvalid("it is not a URL") }
            target = url.path + (url.query.map { "?" + $0 } ?? "")
        } else if target.hasPrefix("?") {
            target = expectedPath + target
        }
        let parameters = CallbackParameters(requestTarget: target)
        guard parameters.path == expectedPath else {
            throw AuthError.pastedURLInvalid("its path is not \(expectedPath)")
        }
        guard !parameters.items.isEmpty else { throw AuthError.pastedURLInvalid("it carries no parameters") }
        return parameters
    }
}

/// What the listener does with a request on its path.
package enum CallbackVerdict: Sendable, Equatable {
    /// The authorization callback this login waits for: answer the success page and stop listening.
    case accept
    /// A genuine callback saying the user declined: answer the denial page and stop listening.
    case denied
    /// Not for this login (state/token mismatch, missing fields): answer 400 and keep waiting.
    case reject(String)
}

/// A one-shot HTTP listener on 127.0.0.1 for the OAuth redirect.
///
/// Binds at `init` (port 0 = ephemeral), so `redirectURI` is known before the browser opens. `waitForCallback`
/// serves one connection at a time (bounded reads, per-connection deadline), 404s other paths and keeps
/// waiting until a request on `path` is accepted or denied, the timeout passes, or the task is cancelled.
/// The socket is closed by `close()` or when the listener is released.
package final class LoopbackCallbackListener: Sendable {
    package let port: UInt16
    package let path: String

    /// The descriptors (-1 once closed) and whether a wait is running; they close only when none is.
    private struct State {
        var listenFD: Int32
        var wakeRead: Int32
        var wakeWrite: Int32
        var waiting = false
        var closeRequested = false
    }

    private let state: Mutex<State>

    /// Longest request head read; anything larger is answered 431 and dropped.
    static let maxRequestBytes = 16 * 1024
    /// How long one connection may take to send its request head.
    static let perConnectionTimeout: TimeInterval = 10
    /// Connections served at once (browsers open a few speculative ones).
    static let maxPendingConnections = 8

    package init(port: UInt16 = 0, path: String = "/oauth_callback") throws {
        self.path = path
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw AuthError.listenerFailed(String(cString: strerror(errno))) }
        var reuse: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 8) == 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(fd)
            throw AuthError.listenerFailed(port == 0 ? reason : "port \(port): \(reason)")
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        var pipeFDs: [Int32] = [-1, -1]
        guard pipe(&pipeFDs) == 0 else {
            Glibc.close(fd)
            throw AuthError.listenerFailed(String(cString: strerror(errno)))
        }
        for end in pipeFDs {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        self.state = Mutex(State(listenFD: fd, wakeRead: pipeFDs[0], wakeWrite: pipeFDs[1]))
        self.port = UInt16(bigEndian: actual.sin_port)
    }

    deinit { closeDescriptors() }

    /// `http://127.0.0.1:PORT/oauth_callback`
    package var redirectURI: String { "http://127.0.0.1:\(port)\(path)" }

    /// Stops listening; a pending `waitForCallback` ends with `AuthError.cancelled`.
    package func close() {
        let busy = state.withLock { state in
            state.closeRequested = true
            return state.waiting
        }
        if busy { wake() } else { closeDescriptors() }
    }

    private func closeDescriptors() {
        state.withLock { state in
            for fd in [state.listenFD, state.wakeRead, state.wakeWrite] where fd >= 0 { Glibc.close(fd) }
            state.listenFD = -1
            state.wakeRead = -1
            state.wakeWrite = -1
        }
    }

    private func wake() {
        let fd = state.withLock { $0.wakeWrite }
        if fd >= 0 {
            var byte: UInt8 = 1
            _ = write(fd, &byte, 1)
        }
    }

    /// Waits for the one callback `classify` accepts or denies (see `CallbackVerdict`) and returns it.
    /// Throws `callbackTimedOut` after `timeout` seconds and `cancelled` when the task is cancelled.
    package func waitForCallback(timeout: TimeInterval = 300,
                                classify: @escaping @Sendable (CallbackParameters) -> CallbackVerdict) async throws -> CallbackParameters {
        guard let (listenFD, wakeRead) = beginWaiting() else {
            throw AuthError.listenerFailed("the listener is closed or already waiting")
        }
        Self.drainWakePipe(wakeRead)
        return try await BlockingCall.run("enlog-oauth-callback", onCancel: .wake { self.wake() }) { _ in
            defer {
                let shouldClose = self.state.withLock { state in
                    state.waiting = false
                    return state.closeRequested
                }
                if shouldClose { self.closeDescriptors() }
            }
            return try self.serve(listenFD: listenFD, wakeRead: wakeRead, timeout: timeout, classify: classify)
        }
    }

    /// The descriptors the wait serves, which stay open until it ends; nil when closed or already waiting.
    private func beginWaiting() -> (listenFD: Int32, wakeRead: Int32)? {
        state.withLock { state in
            guard !state.waiting, !state.closeRequested, state.listenFD >= 0 else { return nil }
            state.waiting = true
            return (state.listenFD, state.wakeRead)
        }
    }

    private static func drainWakePipe(_ wakeRead: Int32) {
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(wakeRead, &buffer, buffer.count) > 0 {}
    }

    /// One accepted connection still sending its request head.
    private struct Pending {
        var fd: Int32
        var bytes: [UInt8]
        var deadline: Date
    }

    /// The serving loop, on its own thread: poll(2) over the listening socket, the wake pipe and up to
    /// `maxPendingConnections` connections, so an idle browser preconnect never delays the real callback.
    private func serve(listenFD: Int32, wakeRead: Int32, timeout: TimeInterval,
                       classify: (CallbackParameters) -> CallbackVerdict) throws -> CallbackParameters {
        let deadline = Date().addingTimeInterval(timeout)
        var pending = [Pending]()
        defer { for connection in pending { Glibc.close(connection.fd) } }
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let now = Date()
            if deadline <= now { throw AuthError.callbackTimedOut(seconds: Int(timeout.rounded())) }
            // Drop connections that took too long.
            pending.removeAll { connection in
                guard connection.deadline <= now else { return false }
                Glibc.close(connection.fd)
                return true
            }
            let wakeAt = pending.map(\.deadline).reduce(deadline, min)
            var fds = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: pending.count < Self.maxPendingConnections ? listenFD : -1, events: Int16(POLLIN), revents: 0)]
            fds += pending.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&fds, nfds_t(fds.count), Int32(min(max(wakeAt.timeIntervalSinceNow, 0) * 1000 + 1, 60_000)))
            if ready < 0 {
                if errno == EINTR { continue }
                throw AuthError.listenerFailed(String(cString: strerror(errno)))
            }
            if fds[0].revents != 0 { throw AuthError.cancelled }
            // Read from ready connections (iterate backwards so removal keeps indices valid).
            for index in pending.indices.reversed() where fds[index + 2].revents != 0 {
                let count = read(pending[index].fd, &chunk, chunk.count)
                if count < 0 && (errno == EAGAIN || errno == EINTR) { continue }
                if count > 0 { pending[index].bytes.append(contentsOf: chunk[0..<count]) }
                let complete = Self.containsHeadTerminator(pending[index].bytes)
                if !complete && count > 0 && pending[index].bytes.count <= Self.maxRequestBytes { continue }
                let connection = pending.remove(at: index)
                defer { Glibc.close(connection.fd) }
                if connection.bytes.count > Self.maxRequestBytes && !complete {
                    respond(connection.fd, status: "431 Request Header Fields Too Large", html: page("Request too large", ""))
                    continue
                }
                guard complete else { continue }  // closed or failed before a full request head
                if let result = handle(connection.fd, head: String(decoding: connection.bytes, as: UTF8.self), classify: classify) {
                    return result
                }
            }
            if fds[1].revents & Int16(POLLIN) != 0 {
                while pending.count < Self.maxPendingConnections {
                    let client = accept(listenFD, nil, nil)
                    guard client >= 0 else { break }
                    _ = fcntl(client, F_SETFD, FD_CLOEXEC)
                    _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK)
                    pending.append(Pending(fd: client, bytes: [], deadline: Date().addingTimeInterval(Self.perConnectionTimeout)))
                }
            }
        }
    }

    private static func containsHeadTerminator(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 4 else { return false }
        for index in 0...(bytes.count - 4)
        where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return true
        }
        return false
    }

    /// Answers one complete request; returns the parameters when it ends the wait.
    private func handle(_ client: Int32, head: String, classify: (CallbackParameters) -> CallbackVerdict) -> CallbackParameters? {
        guard let target = Self.requestTarget(ofHead: head) else {
            respond(client, status: "405 Method Not Allowed", html: page("Method not allowed", ""))
            return nil
        }
        let parameters = CallbackParameters(requestTarget: target)
        guard parameters.path == path else {
            respond(client, status: "404 Not Found", html: page("Not found", ""))
            return nil
        }
        switch classify(parameters) {
        case .accept:
            respond(client, status: "200 OK", html: page("enlog is authorized", "enlog is authorized — you can close this tab."))
            return parameters
        case .denied:
            respond(client, status: "200 OK", html: page("enlog was not authorized", "Access was denied — you can close this tab."))
            return parameters
        case .reject(let why):
            respond(client, status: "400 Bad Request", html: page("Not this login",
                "This authorization does not belong to the running enlog login (\(why)). Use the URL enlog printed."))
            return nil
        }
    }

    /// The target of a request head's request line (`GET /oauth_callback?… HTTP/1.1`); nil when
    /// there is none or its method is not GET or HEAD.
    package static func requestTarget(ofHead head: String) -> String? {
        guard let requestLine = head.split(separator: "\r\n", maxSplits: 1).first else { return nil }
        let words = requestLine.split(separator: " ")
        guard words.count == 3, words[0] == "GET" || words[0] == "HEAD" else { return nil }
        return String(words[1])
    }

    private func page(_ title: String, _ message: String) -> String {
        """
        <!DOCTYPE html>
        <html><head><meta charset="utf-8"><title>\(escape(title))</title></head>
        <body style="font-family: sans-serif; margin: 3em"><h1>\(escape(title))</h1><p>\(escape(message))</p></body></html>

        """
    }

    private func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    private func respond(_ client: Int32, status: String, html: String) {
        let body = Array(html.utf8)
        let head = "HTTP/1.1 \(status)\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: \(body.count)\r\n"
            + "Cache-Control: no-store\r\nReferrer-Policy: no-referrer\r\nConnection: close\r\n\r\n"
        var data = Array(head.utf8) + body
        // Bounded blocking-ish write: the socket is non-blocking, so give it a short poll on EAGAIN.
        var offset = 0
        let deadline = Date().addingTimeInterval(2)
        while offset < data.count, Date() < deadline {
            let written = data.withUnsafeMutableBytes { write(client, $0.baseAddress! + offset, $0.count - offset) }
            if written > 0 {
                offset += written
            } else if written < 0 && (errno == EAGAIN || errno == EINTR) {
                var fds = [pollfd(fd: client, events: Int16(POLLOUT), revents: 0)]
                _ = poll(&fds, 1, 100)
            } else {
                break
            }
        }
        shutdown(client, Int32(SHUT_WR))
    }
}
