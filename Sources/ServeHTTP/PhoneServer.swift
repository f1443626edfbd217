import Foundation
import Synchronization
import NIOCore
import NIOHTTP1
import NIOPosix
import Support
import Capture
import Watch
import Serve

/// `enlog serve`'s HTTP/1.1 side, on SwiftNIO (its HTTP parser, its body aggregation, its idle
/// timer): each connection's requests in turn, each answered by `PhoneReceiver`. Limits: the
/// body (`serve.max_body`, 413 from NIO's aggregator), the headers (16 KiB, 100 fields: 431/400
/// from NIO's decoder), the connections held at once (`serve.max_connections`: more are closed
/// at accept), silence and slowness (`serve.idle_timeout`: a connection silent that long, or a
/// request not whole within it, is closed; with TLS the handshake counts as part of the first
/// request).
package struct PhoneServer: Sendable {
    package struct Settings: Sendable {
        package var maxBody: Int
        package var maxConnections: Int
        package var idleTimeout: TimeAmount
        package var maxHeaderBytes = 16 * 1024
        package var maxHeaderFields = 100
        /// serve.tls_certificate and serve.tls_key, read again on SIGHUP or when renewed; nil: plain HTTP.
        package var tls: ServeTLSCertificates?

        package init(maxBody: Int = 4 << 20, maxConnections: Int = 256, idleTimeout: TimeAmount = .seconds(30), tls: ServeTLSCertificates? = nil) {
            self.maxBody = maxBody
            self.maxConnections = maxConnections
            self.idleTimeout = idleTimeout
            self.tls = tls
        }
    }

    /// Where to listen: an address to bind, or a socket already bound and listening (systemd's
    /// socket activation hands one over as a descriptor).
    package enum Listener: Sendable {
        case address(ListenAddress)
        case descriptor(CInt)
    }

    let receiver: PhoneReceiver
    let settings: Settings
    let report: @Sendable (WatchReport) -> Void

    package init(receiver: PhoneReceiver, settings: Settings, report: @escaping @Sendable (WatchReport) -> Void) {
        self.receiver = receiver
        self.settings = settings
        self.report = report
    }

    /// A running server: where it listens, and how to stop it.
    package final class Running: Sendable {
        package let address: String
        let connections: Connections
        let serverChannel: any Channel
        let done: Task<Void, Never>

        init(address: String, connections: Connections, serverChannel: any Channel, done: Task<Void, Never>) {
            self.address = address
            self.connections = connections
            self.serverChannel = serverChannel
            self.done = done
        }

        /// Stops accepting; requests being handled are answered (their points committed first),
        /// connections waiting between requests are closed; returns when every connection is.
        package func stop() async {
            connections.stopping()
            try? await serverChannel.close()
            await done.value
        }

        /// Returns when the server has stopped (after `stop()`, or when listening failed).
        package func wait() async { await done.value }
    }

    /// Binds (or takes the bound socket) and starts accepting; returns once listening.
    package func start(_ listener: Listener, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) async throws -> Running {
        let settings = self.settings, report = self.report
        let connections = Connections(limit: settings.maxConnections)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.maxMessagesPerRead, value: 16)
        let initializer: @Sendable (any Channel) -> EventLoopFuture<NIOAsyncChannel<NIOHTTPServerRequestFull, HTTPServerResponsePart>> = { channel in
            channel.eventLoop.makeCompletedFuture {
                var limits = NIOHTTPDecoderLimitConfiguration()
                limits.maxHeaderListSize = settings.maxHeaderBytes
                limits.maxHeaderFieldSize = settings.maxHeaderBytes
                limits.maxHeaderFieldCount = settings.maxHeaderFields
                let pipeline = channel.pipeline.syncOperations
                try pipeline.addHandler(IdleStateHandler(allTimeout: settings.idleTimeout))
                try pipeline.addHandler(IdleCloser())
                let clock = RequestClock(timeout: settings.idleTimeout)
                try pipeline.addHandler(clock.startWatch())
                try settings.tls?.addHandlers(to: pipeline, report: report)
                try pipeline.configureHTTPServerPipeline(withPipeliningAssistance: true, withErrorHandling: true,
                                                         withEncoderConfiguration: .init(), withDecoderLimitConfiguration: limits)
                try pipeline.addHandler(clock.stopWatch())
                try pipeline.addHandler(NIOHTTPServerRequestAggregator(maxContentLength: settings.maxBody))
                // The wrapping that closes the connection when it is dropped unserved, not the one that
                // traps: a connection accepted while the listener closes (SIGTERM under load) may be
                // made here after the accept loop has ended and never reach `executeThenClose`, and
                // NIO then stops the process ("Deinited NIOAsyncWriter without calling finish()",
                // swift-nio issue 2637; seen in ServeCommandTests' SIGTERM test on a loaded machine).
                // Such a phone gets no reply, so it sends the points again: nothing acknowledged is lost.
                return try NIOAsyncChannel<NIOHTTPServerRequestFull, HTTPServerResponsePart>(synchronouslyWrapping: channel)
            }
        }
        let server: NIOAsyncChannel<NIOAsyncChannel<NIOHTTPServerRequestFull, HTTPServerResponsePart>, Never>
        switch listener {
        case .address(let address):
            server = try await bootstrap.bind(host: address.host, port: address.port, childChannelInitializer: initializer)
        case .descriptor(let descriptor):
            server = try await bootstrap.bind(descriptor, childChannelInitializer: initializer)
        }
        let local = server.channel.localAddress
        let shown = local.map { address in
            let ip = address.ipAddress ?? "?"
            return (ip.contains(":") ? "[\(ip)]" : ip) + ":\(address.port ?? 0)"
        } ?? "?"
        let receiver = self.receiver
        let done = Task {
            do {
                try await server.executeThenClose { inbound in
                    try await withThrowingDiscardingTaskGroup { group in
                        for try await connection in inbound {
                            guard let id = connections.admit(connection.channel) else {
                                report(WatchReport(.detail, "connection-refused", "more than \(settings.maxConnections) connections: closed a new one"))
                                // Through executeThenClose, which finishes the channel's writer: a wrapped
                                // channel dropped unfinished is NIO's fatal error (seen at SIGTERM under load).
                                try? await connection.executeThenClose { _, _ in }
                                continue
                            }
                            group.addTask {
                                await Self.serve(connection, id: id, connections: connections, receiver: receiver)
                                connections.remove(id)
                            }
                        }
                    }
                }
            } catch {
                report(WatchReport(.problem, "server-failed", "the listener failed: \(error)"))
            }
        }
        return Running(address: shown, connections: connections, serverChannel: server.channel, done: done)
    }

    /// One connection's requests, in turn, until the client closes, a limit closes it, or the
    /// server stops (then after the request being answered).
    static func serve(_ connection: NIOAsyncChannel<NIOHTTPServerRequestFull, HTTPServerResponsePart>, id: Int,
                      connections: Connections, receiver: PhoneReceiver) async {
        try? await connection.executeThenClose { inbound, outbound in
            for try await request in inbound {
                guard connections.begin(id) else { break }
                let head = request.head
                let body = request.body.map { Array($0.readableBytesView) } ?? []
                var headers: [String: String] = [:]
                for (name, value) in head.headers where headers[name.lowercased()] == nil { headers[name.lowercased()] = value }
                let response = await receiver.handle(PhoneRequest(method: head.method.rawValue, uri: head.uri, headers: headers, body: body))
                let keepAlive = head.isKeepAlive && !connections.isStopping
                var responseHeaders = HTTPHeaders()
                responseHeaders.add(name: "Content-Type", value: response.contentType)
                responseHeaders.add(name: "Content-Length", value: String(response.body.utf8.count))
                responseHeaders.add(name: "Connection", value: keepAlive ? "keep-alive" : "close")
                for (name, value) in response.headers.sorted(by: { $0.key < $1.key }) { responseHeaders.add(name: name, value: value) }
                try await outbound.write(.head(HTTPResponseHead(version: head.version, status: HTTPResponseStatus(statusCode: response.status),
                                                                headers: responseHeaders)))
                try await outbound.write(.body(.byteBuffer(ByteBuffer(string: response.body))))
                try await outbound.write(.end(nil))
                connections.end(id)
                if !keepAlive { break }
            }
        }
    }
}

/// The open connections: how many, which are answering a request, and whether the server stops.
final class Connections: Sendable {
    private struct State {
        var next = 0
        var open: [Int: (channel: any Channel, busy: Bool)] = [:]
        var stopping = false
    }

    private let limit: Int
    private let state = Mutex(State())

    init(limit: Int) { self.limit = limit }

    /// An id for the new connection, or nil when `limit` are open or the server stops.
    func admit(_ channel: any Channel) -> Int? {
        state.withLock { state in
            guard !state.stopping, state.open.count < limit else { return nil }
            state.next += 1
            state.open[state.next] = (channel, false)
            return state.next
        }
    }

    /// A request is whole and about to be answered; false when the server stops (not answered).
    func begin(_ id: Int) -> Bool {
        state.withLock { state in
            guard !state.stopping else { return false }
            state.open[id]?.busy = true
            return true
        }
    }

    func end(_ id: Int) {
        state.withLock { $0.open[id]?.busy = false }
    }

    func remove(_ id: Int) {
        _ = state.withLock { $0.open.removeValue(forKey: id) }
    }

    var isStopping: Bool { state.withLock { $0.stopping } }

    /// No new connection or request; connections between requests are closed now, the others
    /// once their reply is written.
    func stopping() {
        let idle = state.withLock { state in
            state.stopping = true
            return state.open.values.filter { !$0.busy }.map(\.channel)
        }
        for channel in idle { channel.close(promise: nil) }
    }
}

/// Closes a connection `IdleStateHandler` found silent.
final class IdleCloser: ChannelInboundHandler, Sendable {
    typealias InboundIn = NIOAny

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent {
            context.close(promise: nil)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }
}

/// A request must be whole within `timeout` of its first byte: a client that trickles its
/// headers or body (each byte resetting the idle timer) is closed all the same. One
/// `RequestClock.Watch` before the HTTP decoder starts the clock at a request's first bytes,
/// another after it stops the clock when the request is whole.
final class RequestClock {
    let timeout: TimeAmount
    var deadline: Scheduled<Void>?

    init(timeout: TimeAmount) { self.timeout = timeout }

    func start(_ context: ChannelHandlerContext) {
        guard deadline == nil else { return }
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
    }

    func stop() {
        deadline?.cancel()
        deadline = nil
    }

    /// Passes what it reads on, after showing it to the clock: raw bytes before the decoder,
    /// request parts after it. A closed connection stops the clock.
    final class Watch<Part>: ChannelInboundHandler {
        typealias InboundIn = Part
        typealias InboundOut = Part
        let clock: RequestClock
        let read: (RequestClock, ChannelHandlerContext, Part) -> Void

        init(_ clock: RequestClock, read: @escaping (RequestClock, ChannelHandlerContext, Part) -> Void) {
            self.clock = clock
            self.read = read
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            read(clock, context, unwrapInboundIn(data))
            context.fireChannelRead(data)
        }

        func channelInactive(context: ChannelHandlerContext) {
            clock.stop()
            context.fireChannelInactive()
        }
    }

    /// Before the HTTP decoder: a request's first bytes start the clock.
    func startWatch() -> Watch<ByteBuffer> {
        Watch(self) { clock, context, _ in clock.start(context) }
    }

    /// After the HTTP decoder: the request's end stops the clock.
    func stopWatch() -> Watch<HTTPServerRequestPart> {
        Watch(self) { clock, _, part in
            if case .end = part { clock.stop() }
        }
    }
}
