import Foundation
import NIOCore
import NIOSSL
import Support
import Configuration
import Watch

/// `serve.tls_certificate` and `serve.tls_key`: TLS in `enlog serve` itself, from a PEM
/// certificate chain and its PEM private key. Both files are read by enlog (bounded in size,
/// regular files only) and handed to swift-nio-ssl as bytes, so that a path naming /dev/zero or
/// a FIFO cannot hold the start. Every problem is a configuration error (exit 78) naming the
/// setting and the file, found before anything listens, `serve --check` included.
package struct ServeTLSContext: Sendable {
    package let context: NIOSSLContext
    package let certificatePath: String
    package let keyPath: String

    /// Permission bits for "others" a key file may not have. Group bits are allowed: Debian keeps
    /// keys 0640 root:ssl-cert for exactly this (a service user in ssl-cert reads them), and
    /// certbot's are 0600; a key everyone on the machine can read is no secret any more.
    static let forbiddenKeyModeBits: mode_t = 0o007

    /// nil when neither setting is set (plain HTTP); the context when both are and their files
    /// make one; else the configuration error that says which setting and file is wrong.
    package static func load(config: Config) throws(ConfigError) -> ServeTLSContext? {
        let certificate = config.string(.serveTLSCertificate).flatMap { $0.isEmpty ? nil : $0 }
        let key = config.string(.serveTLSKey).flatMap { $0.isEmpty ? nil : $0 }
        func failure(_ setting: Setting, _ reason: String) -> ConfigError {
            .invalidValue(origin: config.resolved[setting.name]?.origin ?? .defaultValue, name: setting.name, reason: reason)
        }
        switch (certificate, key) {
        case (nil, nil):
            return nil
        case (_?, nil):
            throw failure(.serveTLSCertificate, "is set but serve.tls_key is not: TLS needs both, the certificate chain and its private key")
        case (nil, _?):
            throw failure(.serveTLSKey, "is set but serve.tls_certificate is not: TLS needs both, the certificate chain and its private key")
        case let (certificatePath?, keyPath?):
            return try load(certificatePath: certificatePath, keyPath: keyPath) { setting, reason in failure(setting, reason) }
        }
    }

    static func load(certificatePath: String, keyPath: String,
                     failure: (Setting, String) -> ConfigError) throws(ConfigError) -> ServeTLSContext {
        let certificateBytes: [UInt8]
        let keyBytes: [UInt8]
        let keyStatus: stat
        do throws(FileBytes.ReadError) {
            (certificateBytes, _) = try FileBytes.read(pathBytes: Array(certificatePath.utf8), limit: .smallText, accepting: .regularFilesOnly)
        } catch {
            throw failure(.serveTLSCertificate, "names \(certificatePath), which cannot be read: \(error.reason)")
        }
        do throws(FileBytes.ReadError) {
            (keyBytes, keyStatus) = try FileBytes.read(pathBytes: Array(keyPath.utf8), limit: .smallText, accepting: .regularFilesOnly)
        } catch {
            throw failure(.serveTLSKey, "names \(keyPath), which cannot be read: \(error.reason)")
        }
        if keyStatus.st_mode & forbiddenKeyModeBits != 0 {
            throw failure(.serveTLSKey, "names \(keyPath), which every user may read or change (mode \(String(keyStatus.st_mode & 0o7777, radix: 8))): "
                          + "a private key must not be; chmod o-rwx \(keyPath)")
        }
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMBytes(certificateBytes)
        } catch {
            chain = []
        }
        guard !chain.isEmpty else {
            throw failure(.serveTLSCertificate, "names \(certificatePath), which holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
        }
        let privateKey: NIOSSLPrivateKey
        do {
            privateKey = try NIOSSLPrivateKey(bytes: keyBytes, format: .pem)
        } catch {
            throw failure(.serveTLSKey, "names \(keyPath), which holds no unencrypted PEM private key (-----BEGIN PRIVATE KEY-----)")
        }
        var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) },
                                                                     privateKey: .privateKey(privateKey))
        configuration.minimumTLSVersion = .tlsv12
        do {
            return ServeTLSContext(context: try NIOSSLContext(configuration: configuration), certificatePath: certificatePath, keyPath: keyPath)
        } catch NIOSSLError.failedToLoadPrivateKey {
            // BoringSSL checks the key against the chain's first certificate (KEY_VALUES_MISMATCH).
            throw failure(.serveTLSKey, "names \(keyPath), whose key does not belong to the first certificate in \(certificatePath)")
        } catch {
            throw failure(.serveTLSCertificate, "names \(certificatePath), which cannot be used with the key in \(keyPath): \(Self.describe(error))")
        }
    }

    /// The TLS handlers, first in a connection's pipeline after the idle timer and the request
    /// clock's start: both see the handshake's raw bytes, so a client silent or slow during the
    /// handshake is closed as one slow with its request is.
    func addHandlers(to pipeline: ChannelPipeline.SynchronousOperations, report: @escaping @Sendable (WatchReport) -> Void) throws {
        try pipeline.addHandler(NIOSSLServerHandler(context: context))
        try pipeline.addHandler(TLSRefusalReport(report: report))
    }

    static func describe(_ error: any Error) -> String {
        switch error {
        case let error as NIOSSLError:
            if case .handshakeFailed(let cause) = error { return describe(cause) }
            return "\(error)"
        case let error as BoringSSLError:
            switch error {
            case .sslError(let stack), .unknownError(let stack):
                let reasons = stack.map { "\($0)" }
                if reasons.contains(where: { $0.contains("EOF during handshake") }) { return "the connection ended during the handshake" }
                if reasons.contains(where: { $0.contains("HTTP_REQUEST") }) { return "plain HTTP sent to the TLS port (the client must use https://)" }
                // "Error: 268435568 error:10000070:SSL routines:OPENSSL_internal:BAD_PACKET_LENGTH at FILE:LINE": the reason's name.
                let names = reasons.map { reason in
                    reason.range(of: "OPENSSL_internal:").map { String(reason[$0.upperBound...].prefix { $0 != " " }) } ?? reason
                }
                return names.isEmpty ? "\(error)" : "BoringSSL: " + names.joined(separator: ", ")
            default:
                return "\(error)"
            }
        default:
            return "\(error)"
        }
    }
}

/// A connection whose TLS handshake fails (plain HTTP sent to the TLS port, a client that does
/// not trust the certificate, no common protocol version): one line, and the connection closed,
/// which swift-nio-ssl does itself. Errors after the handshake pass on.
final class TLSRefusalReport: ChannelInboundHandler {
    typealias InboundIn = NIOAny
    let report: @Sendable (WatchReport) -> Void
    var reported = false

    init(report: @escaping @Sendable (WatchReport) -> Void) { self.report = report }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard case .handshakeFailed? = error as? NIOSSLError else {
            context.fireErrorCaught(error)
            return
        }
        guard !reported else { return }   // one line per connection
        reported = true
        let peer = context.channel.remoteAddress.map { address in
            let ip = address.ipAddress ?? "?"
            return (ip.contains(":") ? "[\(ip)]" : ip) + ":\(address.port ?? 0)"
        } ?? "?"
        report(WatchReport(.event, "tls-refused", TerminalText.oneLine("TLS handshake with \(peer) failed: \(ServeTLSContext.describe(error)); closed"),
                           ["peer": .string(peer)]))
        context.close(promise: nil)
    }
}
