import Foundation
import Support

/// `[serve]`: the phones' receiver (`enlog serve`, docs/serve.md).
extension Setting {
    package static let serveListen = Setting("serve.listen", .string, default: "127.0.0.1:8473",
                                            "address and port enlog serve listens on, ADDR:PORT ([IPv6]:PORT); 0.0.0.0 or [::] for every interface")
    package static let serveURL = Setting("serve.url", .string, default: nil,
                                         "the URL phones reach enlog serve at (a reverse proxy's https://…), printed by `enlog devices add`; unset: http://serve.listen, or https:// with serve.tls_certificate")
    package static let serveMaxBody = Setting("serve.max_body", .number, default: "4", range: .serveBodyMegabytes,
                                             "largest request body enlog serve reads, MB (Overland's batch of 1000 points is about 0.6 MB); larger is refused with 413")
    package static let serveMaxConnections = Setting("serve.max_connections", .integer, default: "256", range: .serveConnections,
                                                    "connections enlog serve holds open at once; more wait in the kernel's queue")
    package static let serveRate = Setting("serve.rate", .integer, default: "600", range: .serveRequestsPerMinute,
                                          "requests per minute one device may send (a token bucket holding a minute's worth); more get 429")
    package static let serveIdleTimeout = Setting("serve.idle_timeout", .number, default: "30", range: .serveIdleSeconds,
                                                 "seconds a connection may stay silent, or take to send one request, before enlog serve closes it")

    package static let serveMQTTBroker = Setting("serve.mqtt_broker", .string, default: nil, secret: true,
                                                "MQTT broker enlog serve subscribes to owntracks/+/+ on (OwnTracks' MQTT mode), mqtt://[USER[:PASSWORD]@]HOST[:PORT]; unset: no MQTT")
    package static let serveTLSCertificate = Setting("serve.tls_certificate", .string, default: nil,
                                                    "PEM certificate chain (server certificate first) enlog serve speaks HTTPS with, TLS 1.2 or later; needs serve.tls_key; unset: plain HTTP")
    package static let serveTLSKey = Setting("serve.tls_key", .string, default: nil,
                                            "PEM private key of serve.tls_certificate, unencrypted, not readable by others (chmod o-rwx); needs serve.tls_certificate")

    static let serveSettings: [Setting] = [serveListen, serveURL, serveMaxBody, serveMaxConnections, serveRate, serveIdleTimeout,
                                           serveMQTTBroker, serveTLSCertificate, serveTLSKey]
}

extension NumericRange {
    /// From a kilobyte (one OwnTracks point is 300 bytes) to what a day of 1 Hz points takes.
    package static let serveBodyMegabytes = NumericRange(0.001, 64, unit: "megabytes")
    package static let serveConnections = NumericRange(1, 10_000, unit: "connections", wholeNumbers: true)
    package static let serveRequestsPerMinute = NumericRange(1, 100_000, unit: "requests per minute", wholeNumbers: true)
    package static let serveIdleSeconds = NumericRange(1, 3600, unit: "seconds")
}
