import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import CLazyLibraries
import CMosquitto
import Support
import Configuration

/// The MQTT broker `enlog serve` subscribes to (`serve.mqtt_broker`): `mqtt://[USER[:PASSWORD]@]HOST[:PORT]`,
/// port 1883 unless given. Parsed in one place, from the configuration; every part range-checked.
package struct MQTTBroker: Sendable, Equatable {
    package let host: String
    package let port: Int
    package let username: String?
    package let password: String?

    package static let defaultPort = 1883

    package init(host: String, port: Int = MQTTBroker.defaultPort, username: String? = nil, password: String? = nil) {
        (self.host, self.port, self.username, self.password) = (host, port, username, password)
    }

    /// - Throws: `MQTTError.invalidBroker` with what is wrong (never the password).
    package init(url text: String) throws(MQTTError) {
        func invalid(_ why: String) -> MQTTError { .invalidBroker(why) }
        guard let schemeEnd = text.range(of: "://") else { throw invalid("is not a URL (mqtt://HOST:PORT)") }
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "mqtt" else {
            throw invalid(scheme == "mqtts"
                          ? "uses mqtts://, which enlog does not speak: run the broker on this machine or reach it through a tunnel, and give mqtt://"
                          : "has the scheme '\(TerminalText.oneLine(scheme))'; only mqtt:// is supported")
        }
        var rest = text[schemeEnd.upperBound...]
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.contains("/"), !rest.contains("?"), !rest.contains("#") else {
            throw invalid("has a path, query or fragment; give only mqtt://[USER[:PASSWORD]@]HOST[:PORT]")
        }
        var user: String?, password: String?
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at]
            rest = rest[rest.index(after: at)...]
            let parts = credentials.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            guard let decodedUser = String(parts[0]).removingPercentEncoding, !decodedUser.isEmpty else {
                throw invalid("has an empty or badly %-encoded user name")
            }
            user = decodedUser
            if parts.count == 2 {
                guard let decoded = String(parts[1]).removingPercentEncoding else { throw invalid("has a badly %-encoded password") }
                password = decoded
            }
        }
        var host: Substring, portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw invalid("has an IPv6 address without its closing ']'") }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw invalid("has something after the IPv6 address that is not :PORT") }
                portText = after.dropFirst()
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        } else {
            host = rest
        }
        guard !host.isEmpty else { throw invalid("has no host") }
        guard host.utf8.count <= 253, host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-.:_".contains($0)) }) else {
            throw invalid("has a host that is neither a name nor an IP address")
        }
        var port = MQTTBroker.defaultPort
        if let portText {
            guard let value = Int(portText), (1...65535).contains(value) else { throw invalid("has a port outside 1…65535") }
            port = value
        }
        self.init(host: String(host), port: port, username: user, password: password)
    }

    /// For log lines: the address without the credentials.
    package var address: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

extension MQTTBroker {
    /// `serve.mqtt_broker` is parsed when the configuration is read, so that a bad URL is exit 78
    /// whichever command runs (`serve --check` included), never a failure found at the first message.
    package static let settingChecks: [Setting: SettingCheck] = [
        .serveMQTTBroker: { text in
            do throws(MQTTError) {
                _ = try MQTTBroker(url: text)
                return nil
            } catch {
                guard case .invalidBroker(let why) = error else { return nil }
                return why
            }
        },
    ]
}

package enum MQTTError: ENLogError, Equatable {
    case invalidBroker(String)

    package var reason: String {
        switch self {
        case .invalidBroker(let why): return "serve.mqtt_broker \(why)"
        }
    }

    package var recoverySuggestion: String? { "give mqtt://[USER[:PASSWORD]@]HOST[:PORT], e.g. mqtt://127.0.0.1:1883" }
    package var category: ErrorCategory { .config }
}

/// One message as the broker delivered it.
package struct MQTTMessage: Sendable {
    package let topic: String
    package let payload: [UInt8]
    package let retained: Bool
}

/// What the handler decided: stored (or deliberately dropped: the broker may forget it), or not
/// stored for a reason that may pass (the outbox locked or full): the connection is then dropped
/// without acknowledging, so that the broker delivers the message again after the reconnection.
package enum MQTTDelivery: Sendable {
    case settled
    case retryLater(String)
}

/// A subscription through libmosquitto, on a thread of its own that runs libmosquitto's loop.
///
/// Durability: the session is persistent (clean session off, a fixed client id), so the broker
/// keeps QoS 1 messages for enlog while it is stopped or disconnected. The library is told it runs
/// among threads (`mosquitto_threaded_set`), which makes it queue its PUBACK instead of writing it
/// from inside the read; the handler runs inside that read and returns only once the message is
/// committed, so the PUBACK reaches the socket after the commit. libmosquitto (2.0) offers no manual
/// acknowledgement, so this ordering is the library's and is checked by a test that refuses a commit
/// (`MQTTSubscriptionTests`): a message whose handler says `retryLater` is delivered again.
package final class MQTTSubscription: Sendable {
    package typealias Handler = @Sendable (MQTTMessage) -> MQTTDelivery
    package typealias Log = @Sendable (String) -> Void

    package let broker: MQTTBroker
    package let clientID: String
    package let topic: String
    private let context: Context

    /// - Parameters:
    ///   - clientID: the persistent session's name at the broker (at most 23 characters, MQTT 3.1.1's limit).
    ///   - topic: the subscription, at QoS 1.
    package init(broker: MQTTBroker, clientID: String, topic: String, log: @escaping Log, handler: @escaping Handler) {
        self.broker = broker
        self.clientID = String(clientID.prefix(Int(MOSQ_MQTT_ID_MAX_LENGTH)))
        self.topic = topic
        context = Context(log: log, handler: handler)
    }

    /// Whether the subscription has been granted since the last (re)connection.
    package var isSubscribed: Bool { context.state.withLock { $0.subscribed } }

    /// Starts the loop on its own thread; it connects, subscribes and reconnects until `stop()`.
    package func start() {
        let context = self.context, broker = self.broker, clientID = self.clientID, topic = self.topic
        let done = DispatchSemaphore(value: 0)
        context.state.withLock { $0.finished = done }
        let loop = Thread {
            Self.run(context: context, broker: broker, clientID: clientID, topic: topic)
            done.signal()
        }
        loop.name = "enlog-mqtt"
        loop.start()
    }

    /// Asks the loop to disconnect cleanly and waits for it (at most `timeout`).
    package func stop(timeout: Duration = .seconds(5)) {
        let finished = context.state.withLock { state -> DispatchSemaphore? in
            state.stopping = true
            return state.finished
        }
        guard let finished else { return }
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        _ = finished.wait(timeout: .now() + seconds)
    }

    final class Context: Sendable {
        struct State {
            var stopping = false
            var subscribed = false
            var connected = false
            var subscribeMid: Int32 = 0
            var dropConnection: String?
            var lastConnackFailure: String?
            var finished: DispatchSemaphore?
        }
        let state = Mutex(State())
        let log: Log
        let handler: Handler
        let topicPattern = Mutex<String>("")
        init(log: @escaping Log, handler: @escaping Handler) { (self.log, self.handler) = (log, handler) }
        var isStopping: Bool { state.withLock { $0.stopping } }
    }

    private static let callbacks: (connect: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32) -> Void,
                                   disconnect: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32) -> Void,
                                   subscribe: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32, Int32, UnsafePointer<Int32>?) -> Void,
                                   message: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, UnsafePointer<mosquitto_message>?) -> Void) = (
        connect: { client, object, code in
            guard let client, let object else { return }
            let context = Unmanaged<Context>.fromOpaque(object).takeUnretainedValue()
            guard code == 0 else {
                let why = String(cString: mosquitto_connack_string(code))
                let isNew = context.state.withLock { state -> Bool in
                    defer { state.lastConnackFailure = why }
                    return state.lastConnackFailure != why
                }
                if isNew { context.log("MQTT broker refused the connection: \(why)") }
                return
            }
            let pattern = context.topicPattern.withLock { $0 }
            var mid: Int32 = 0
            let result = mosquitto_subscribe(client, &mid, pattern, 1)
            context.state.withLock { state in
                state.connected = true
                state.lastConnackFailure = nil
                state.subscribeMid = mid
            }
            if result != MOSQ_ERR_SUCCESS.rawValue {
                context.log("MQTT subscription to \(pattern) could not be sent: \(String(cString: mosquitto_strerror(result)))")
            }
        },
        disconnect: { _, object, _ in
            guard let object else { return }
            let context = Unmanaged<Context>.fromOpaque(object).takeUnretainedValue()
            context.state.withLock { state in
                state.connected = false
                state.subscribed = false
            }
        },
        subscribe: { _, object, mid, count, granted in
            guard let object else { return }
            let context = Unmanaged<Context>.fromOpaque(object).takeUnretainedValue()
            // 0x80: the broker refused the subscription (its ACL, typically).
            let refused = count < 1 || granted.map { $0[0] == 0x80 } ?? true
            let pattern = context.topicPattern.withLock { $0 }
            context.state.withLock { state in
                if mid == state.subscribeMid { state.subscribed = !refused }
            }
            context.log(refused ? "MQTT broker refused the subscription to \(pattern) (check its ACL)"
                                : "MQTT subscribed to \(pattern) at QoS \(granted?[0] ?? 0)")
        },
        message: { client, object, message in
            guard let object, let message = message?.pointee else { return }
            let context = Unmanaged<Context>.fromOpaque(object).takeUnretainedValue()
            // Already dropping the connection: nothing more is acknowledged on it.
            if context.state.withLock({ $0.dropConnection != nil }) { return }
            let topic = message.topic.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: strlen($0)), as: UTF8.self) } ?? ""
            let length = Int(max(0, message.payloadlen))
            let payload = message.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: length)) } ?? []
            switch context.handler(MQTTMessage(topic: topic, payload: payload, retained: message.retain)) {
            case .settled:
                break
            case .retryLater(let why):
                context.state.withLock { $0.dropConnection = why }
                // The PUBACK is queued, not yet written: closing the socket now keeps it from the broker.
                if let client { let socket = mosquitto_socket(client); if socket >= 0 { shutdown(socket, Int32(SHUT_RDWR)) } }
            }
        })

    /// The loop: connect, run libmosquitto's loop until stopped, reconnect after a backoff when
    /// the connection breaks. Only this thread touches the client.
    private static func run(context: Context, broker: MQTTBroker, clientID: String, topic: String) {
        context.topicPattern.withLock { $0 = topic }
        _ = mosquitto_lib_init()
        let object = Unmanaged.passUnretained(context).toOpaque()
        guard let client = mosquitto_new(clientID, false, object) else {
            context.log("MQTT client could not be created (out of memory)")
            return
        }
        defer { mosquitto_destroy(client) }
        _ = mosquitto_threaded_set(client, true)
        _ = mosquitto_int_option(client, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311)
        if let user = broker.username { _ = mosquitto_username_pw_set(client, user, broker.password) }
        mosquitto_connect_callback_set(client, callbacks.connect)
        mosquitto_disconnect_callback_set(client, callbacks.disconnect)
        mosquitto_subscribe_callback_set(client, callbacks.subscribe)
        mosquitto_message_callback_set(client, callbacks.message)

        var everConnected = false
        var backoff = Duration.milliseconds(250)
        var lastFailure: String?
        while !context.isStopping {
            let connectResult = everConnected ? mosquitto_reconnect(client) : mosquitto_connect(client, broker.host, Int32(broker.port), 60)
            if connectResult != MOSQ_ERR_SUCCESS.rawValue {
                let why = connectResult == MOSQ_ERR_ERRNO.rawValue ? String(cString: strerror(errno)) : String(cString: mosquitto_strerror(connectResult))
                if why != lastFailure { context.log("MQTT broker \(broker.address) unreachable: \(why); retrying") }
                lastFailure = why
                sleep(backoff, context: context)
                backoff = min(backoff * 2, .seconds(30))
                continue
            }
            everConnected = true
            if lastFailure != nil { context.log("MQTT broker \(broker.address) reached") }
            lastFailure = nil
            while !context.isStopping {
                let result = mosquitto_loop(client, 250, 1)
                if let why = context.state.withLock({ state -> String? in defer { state.dropConnection = nil }; return state.dropConnection }) {
                    context.log("MQTT message not stored (\(why)); reconnecting so that the broker sends it again")
                    _ = mosquitto_disconnect(client)
                    break
                }
                if result != MOSQ_ERR_SUCCESS.rawValue {
                    if result != MOSQ_ERR_NO_CONN.rawValue {
                        let why = result == MOSQ_ERR_ERRNO.rawValue ? String(cString: strerror(errno)) : String(cString: mosquitto_strerror(result))
                        context.log("MQTT connection to \(broker.address) lost: \(why); reconnecting")
                    }
                    break
                }
                if context.state.withLock({ $0.connected }) { backoff = .milliseconds(250) }
            }
            if !context.isStopping { sleep(backoff, context: context) }
        }
        if context.state.withLock({ $0.connected }) {
            _ = mosquitto_disconnect(client)
            // Writes the DISCONNECT (and any queued PUBACK) before the socket closes.
            for _ in 0..<4 where mosquitto_loop(client, 50, 1) == MOSQ_ERR_SUCCESS.rawValue {}
        }
    }

    /// Sleeps `duration` in short steps, so that `stop()` is not kept waiting by a backoff.
    private static func sleep(_ duration: Duration, context: Context) {
        var left = duration
        while left > .zero, !context.isStopping {
            let step = min(left, .milliseconds(100))
            usleep(UInt32(step.components.attoseconds / 1_000_000_000_000) + UInt32(step.components.seconds) * 1_000_000)
            left -= step
        }
    }
}
