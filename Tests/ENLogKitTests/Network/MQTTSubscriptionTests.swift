import Foundation
import Synchronization
import XCTest
@testable import Network

/// The subscription `enlog serve` makes when serve.mqtt_broker is set, against a real mosquitto.
final class MQTTSubscriptionTests: XCTestCase {
    /// The messages a handler saw, in order; what it answers is decided per call by `answer`.
    final class Received: Sendable {
        let messages = Mutex<[MQTTMessage]>([])
        let logLines = Mutex<[String]>([])
        let answer: @Sendable (Int) -> MQTTDelivery
        init(answer: @escaping @Sendable (Int) -> MQTTDelivery = { _ in .settled }) { self.answer = answer }

        func subscription(_ broker: MosquittoBroker, clientID: String = "enlog-test") throws -> MQTTSubscription {
            MQTTSubscription(broker: try MQTTBroker(url: broker.url), clientID: clientID, topic: "owntracks/+/+",
                             log: { [self] line in logLines.withLock { $0.append(line) } },
                             handler: { [self] message in
                                 let index = messages.withLock { list -> Int in list.append(message); return list.count - 1 }
                                 return answer(index)
                             })
        }

        var payloads: [String] { messages.withLock { $0.map { String(decoding: $0.payload, as: UTF8.self) } } }
    }

    static let location = #"{"_type":"location","lat":48.8584,"lon":2.2945,"tst":1764201600,"acc":12,"tid":"ph"}"#

    func testAMessagePublishedAtQoS1ReachesTheHandlerWithItsTopic() throws {
        let broker = try MosquittoBroker()
        let received = Received()
        let subscription = try received.subscription(broker)
        subscription.start()
        defer { subscription.stop() }
        try blockUntil("the subscription") { subscription.isSubscribed }
        try broker.publish("owntracks/alice/phone", Self.location)
        // Other levels are not OwnTracks locations (owntracks/USER/DEVICE/event, …): not subscribed to.
        try broker.publish("owntracks/alice/phone/event", #"{"_type":"transition"}"#)
        try broker.publish("owntracks/bob/phone", Self.location.replacingOccurrences(of: "1764201600", with: "1764201601"))
        try blockUntil("two messages") { received.messages.withLock { $0.count } >= 2 }
        XCTAssertEqual(received.messages.withLock { $0.map(\.topic) }, ["owntracks/alice/phone", "owntracks/bob/phone"])
        XCTAssertEqual(received.payloads.first, Self.location)
    }

    /// A handler that could not commit says so; the message must come again, since the broker never got
    /// its PUBACK. Fails if libmosquitto wrote the PUBACK before the handler returned.
    func testAMessageTheHandlerCouldNotStoreIsDeliveredAgain() throws {
        let broker = try MosquittoBroker()
        let received = Received { index in index == 0 ? .retryLater("the outbox is locked") : .settled }
        let subscription = try received.subscription(broker)
        subscription.start()
        defer { subscription.stop() }
        try blockUntil("the subscription") { subscription.isSubscribed }
        try broker.publish("owntracks/alice/phone", Self.location)
        try blockUntil("the message a second time") { received.messages.withLock { $0.count } >= 2 }
        XCTAssertEqual(received.payloads, [Self.location, Self.location])
        XCTAssertTrue(received.logLines.withLock { $0 }.contains { $0.contains("not stored (the outbox is locked)") },
                      "\(received.logLines.withLock { $0 })")
    }

    /// The session is persistent: what the phone publishes while enlog is stopped waits at the broker.
    func testMessagesPublishedWhileStoppedArriveAtTheNextStart() throws {
        let broker = try MosquittoBroker()
        let first = Received()
        let subscription = try first.subscription(broker)
        subscription.start()
        try blockUntil("the subscription") { subscription.isSubscribed }
        subscription.stop()
        try broker.publish("owntracks/alice/phone", Self.location)
        let second = Received()
        let again = try second.subscription(broker)
        again.start()
        defer { again.stop() }
        try blockUntil("the message published while stopped") { !second.messages.withLock { $0.isEmpty } }
        XCTAssertEqual(second.payloads, [Self.location])
        XCTAssertTrue(first.messages.withLock { $0.isEmpty })
    }

    /// An unreachable broker is one log line, retried, and `stop()` still returns.
    func testAnUnreachableBrokerIsRetriedAndStopReturns() throws {
        let port = try freeLoopbackPort()
        let received = Received()
        let subscription = MQTTSubscription(broker: MQTTBroker(host: "127.0.0.1", port: Int(port)), clientID: "enlog-test", topic: "owntracks/+/+",
                                            log: { line in received.logLines.withLock { $0.append(line) } }, handler: { _ in .settled })
        subscription.start()
        try blockUntil("the first failure") { !received.logLines.withLock { $0.isEmpty } }
        subscription.stop()
        let logged = received.logLines.withLock { $0 }
        XCTAssertEqual(logged.count, 1, "\(logged)")
        XCTAssertTrue(logged[0].hasPrefix("MQTT broker 127.0.0.1:\(port) unreachable: "), logged[0])
    }

    func testBrokerURLs() throws {
        XCTAssertEqual(try MQTTBroker(url: "mqtt://127.0.0.1:1883"), MQTTBroker(host: "127.0.0.1", port: 1883))
        XCTAssertEqual(try MQTTBroker(url: "mqtt://broker.lan"), MQTTBroker(host: "broker.lan", port: 1883))
        XCTAssertEqual(try MQTTBroker(url: "MQTT://enlog:p%40ss%3Aword@[::1]:8883/"),
                       MQTTBroker(host: "::1", port: 8883, username: "enlog", password: "p@ss:word"))
        XCTAssertEqual(try MQTTBroker(url: "mqtt://[::1]:8883").address, "[::1]:8883")
        for (text, why) in [("127.0.0.1:1883", "is not a URL (mqtt://HOST:PORT)"),
                            ("http://127.0.0.1", "has the scheme 'http'; only mqtt:// is supported"),
                            ("mqtt://127.0.0.1:0", "has a port outside 1…65535"),
                            ("mqtt://127.0.0.1:65536", "has a port outside 1…65535"),
                            ("mqtt://127.0.0.1:x", "has a port outside 1…65535"),
                            ("mqtt://", "has no host"),
                            ("mqtt://:pw@host", "has an empty or badly %-encoded user name"),
                            ("mqtt://host/owntracks", "has a path, query or fragment; give only mqtt://[USER[:PASSWORD]@]HOST[:PORT]"),
                            ("mqtt://ho st", "has a host that is neither a name nor an IP address"),
                            ("mqtt://[::1", "has an IPv6 address without its closing ']'")] {
            assertThrows(MQTTError.invalidBroker(why)) { try MQTTBroker(url: text) }
        }
        assertThrows(MQTTError.invalidBroker("uses mqtts://, which enlog does not speak: run the broker on this machine or reach it through a tunnel, and give mqtt://")) {
            try MQTTBroker(url: "mqtts://host")
        }
        // The password never reaches a message.
        XCTAssertFalse(MQTTError.invalidBroker("x").reason.contains("secret"))
    }
}
