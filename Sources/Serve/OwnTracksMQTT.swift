import Foundation
import Synchronization
import Support
import Network
import Capture
import Outbox
import Watch

/// OwnTracks in MQTT mode (`serve.mqtt_broker`): the phones publish to a broker, enlog subscribes
/// to `owntracks/+/+` at QoS 1 and stores each location as the HTTP mode does (`PhoneReceiver.store`).
///
/// Who sent a message is the broker's to check: enlog trusts the broker's ACL and takes the
/// topic's USER (`owntracks/USER/DEVICE`) as the enlog device of that name. The broker must let
/// each phone's login publish only below its own `owntracks/USER/` (mosquitto:
/// `pattern write owntracks/%u/#`, docs/phone.md). A USER that is no enlog device is dropped
/// with one log line; a payload that is not OwnTracks JSON likewise; neither comes again.
///
/// Acknowledgement: the handler returns only once the points are committed, and libmosquitto
/// writes the PUBACK after it returns (`MQTTSubscription`); a commit that fails (the outbox locked
/// beyond its timeout, the disk full) drops the connection unacknowledged, so the broker sends the
/// message again. A message sent again adds nothing (the history's (device, time) rule).
package final class OwnTracksMQTT: Sendable {
    package static let topic = "owntracks/+/+"
    let subscription: MQTTSubscription

    package init(broker: MQTTBroker, receiver: PhoneReceiver, report: @escaping @Sendable (WatchReport) -> Void) {
        subscription = MQTTSubscription(
            broker: broker, clientID: Self.clientID(), topic: Self.topic,
            log: { line in report(WatchReport(.event, "mqtt", line, ["broker": .string(broker.address)])) },
            handler: { message in Self.deliver(message, to: receiver, report: report) })
    }

    package func start() { subscription.start() }
    package func stop() { subscription.stop() }
    package var isSubscribed: Bool { subscription.isSubscribed }

    /// The persistent session's name at the broker: one per machine, so that a restarted enlog
    /// picks up what was queued for it (MQTT 3.1.1 brokers must take 23 characters).
    static func clientID() -> String {
        var name = [CChar](repeating: 0, count: 256)
        let host = gethostname(&name, name.count) == 0 ? String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        let kept = host.filter { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
        return String(("enlog-" + (kept.isEmpty ? "serve" : kept)).prefix(23))
    }

    /// `owntracks/USER/DEVICE` → USER; nil for any other shape.
    static func user(inTopic topic: String) -> String? {
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
        guard levels.count == 3, levels[0] == "owntracks", !levels[1].isEmpty, !levels[2].isEmpty else { return nil }
        return String(levels[1])
    }

    static func deliver(_ message: MQTTMessage, to receiver: PhoneReceiver, report: @escaping @Sendable (WatchReport) -> Void) -> MQTTDelivery {
        let shownTopic = TerminalText.oneLine(String(message.topic.prefix(120)))
        guard let user = user(inTopic: message.topic) else {
            report(WatchReport(.problem, "mqtt-ignored", "MQTT: \(shownTopic) is not owntracks/USER/DEVICE; ignored", ["topic": .string(shownTopic)]))
            return .settled
        }
        // This is libmosquitto's thread, not one of Swift's pool: it may wait for the commit.
        let result = StoreResult()
        Task {
            let outcome: Result<PhoneReceiver.Outcome?, any Error>
            do {
                outcome = .success(try await receiver.storeFromBroker(device: user, payload: message.payload))
            } catch {
                outcome = .failure(error)
            }
            result.value.withLock { $0 = outcome }
            result.done.signal()
        }
        result.done.wait()
        switch result.value.withLock({ $0 }) {
        case .success(nil):
            report(WatchReport(.problem, "mqtt-unknown-device", "MQTT: \(shownTopic): no device named \(TerminalText.oneLine(String(user.prefix(64)))) (enlog devices add NAME); dropped",
                               ["topic": .string(shownTopic)]))
            return .settled
        case .success:
            return .settled
        case .failure(let error as PhonePayloadError):
            report(WatchReport(.problem, "bad-request", "MQTT: \(shownTopic): \(error.reason); nothing stored", ["topic": .string(shownTopic)]))
            return .settled
        case .failure(let error):
            return .retryLater((error as? any ENLogError)?.reason ?? "\(error)")
        case nil:
            return .retryLater("no result")
        }
    }
}

/// One message's outcome, handed from the task that stored it to the thread that waits for it.
private final class StoreResult: Sendable {
    let value = Mutex<Result<PhoneReceiver.Outcome?, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
}

extension PhoneReceiver {
    /// Stores an OwnTracks payload the broker delivered for the device named `name`; nil, and
    /// nothing stored, when no device has that name.
    func storeFromBroker(device name: String, payload: [UInt8]) async throws -> Outcome? {
        guard DeviceSecrets.isValidName(name), let record = try await outbox.device(named: name) else { return nil }
        return try await store(.owntracks, device: record.name, message: PhoneMessage(contentType: "application/json", body: payload))
    }
}
