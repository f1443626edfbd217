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
/// setting and the file, found before anything listens, `serve --check` included; a chain
/// outside its validity dates is one. `ServeTLSCertificates` reads the pair again while serving.
package struct ServeTLSContext: Sendable {
    package let context: NIOSSLContext
    package let files: ServeTLSFiles
    /// When the chain may be used: the latest notBefore and the earliest notAfter of its
    /// certificates (an expired intermediate fails clients as an expired leaf does).
    package let validity: Validity
    /// The first certificate's serial number, hex, as `openssl x509 -serial` prints it.
    package let serial: String
    /// The files as they were when read, to notice a renewal (`FileStamp`).
    let stamps: ServeTLSFiles.Stamps

    package var certificatePath: String { files.certificatePath }
    package var keyPath: String { files.keyPath }

    /// How close to its end a certificate is said to expire soon: certbot renews 30 days before,
    /// so 14 days left means renewal has failed for two weeks.
    package static let expiryWarningWindow: TimeInterval = 14 * 86_400

    /// Permission bits for "others" a key file may not have. Group bits are allowed: Debian keeps
    /// keys 0640 root:ssl-cert for exactly this (a service user in ssl-cert reads them), and
    /// certbot's are 0600; a key everyone on the machine can read is no secret any more.
    static let forbiddenKeyModeBits: mode_t = 0o007

    package struct Validity: Sendable, Equatable {
        package var notBefore: Date
        package var notAfter: Date
        /// Which certificate of the chain ends first (1: the server's own), for the messages.
        package var endingIndex: Int
        package var startingIndex: Int
        package var count: Int

        /// Where `now` stands in the window.
        package enum Stage: Int, Sendable, Comparable {
            case valid, expiresSoon, expired
            package static func < (a: Stage, b: Stage) -> Bool { a.rawValue < b.rawValue }
        }

        package func stage(at now: Date) -> Stage {
            if now > notAfter { return .expired }
            return notAfter.timeIntervalSince(now) < ServeTLSContext.expiryWarningWindow ? .expiresSoon : .valid
        }

        /// "certificate" for the server's own, "chain's certificate 2 of 3" for another.
        func which(_ index: Int) -> String { index == 1 ? "certificate" : "chain's certificate \(index) of \(count)" }
    }

    /// nil when neither setting is set (plain HTTP); the context when both are and their files
    /// make one valid at `now`; else the configuration error that says which setting and file is wrong.
    package static func load(config: Config, now: Date = Date()) throws(ConfigError) -> ServeTLSContext? {
        let certificate = config.string(.serveTLSCertificate).flatMap { $0.isEmpty ? nil : $0 }
        let key = config.string(.serveTLSKey).flatMap { $0.isEmpty ? nil : $0 }
        let certificateOrigin = config.resolved[Setting.serveTLSCertificate.name]?.origin ?? .defaultValue
        let keyOrigin = config.resolved[Setting.serveTLSKey.name]?.origin ?? .defaultValue
        switch (certificate, key) {
        case (nil, nil):
            return nil
        case (_?, nil):
            throw .invalidValue(origin: certificateOrigin, name: Setting.serveTLSCertificate.name,
                                reason: "is set but serve.tls_key is not: TLS needs both, the certificate chain and its private key")
        case (nil, _?):
            throw .invalidValue(origin: keyOrigin, name: Setting.serveTLSKey.name,
                                reason: "is set but serve.tls_certificate is not: TLS needs both, the certificate chain and its private key")
        case let (certificatePath?, keyPath?):
            return try load(ServeTLSFiles(certificatePath: certificatePath, keyPath: keyPath,
                                          certificateOrigin: certificateOrigin, keyOrigin: keyOrigin), now: now)
        }
    }

    /// The pair `files` names, read now; the configuration error that says what is wrong with it.
    package static func load(_ files: ServeTLSFiles, now: Date) throws(ConfigError) -> ServeTLSContext {
        let certificatePath = files.certificatePath, keyPath = files.keyPath
        let failure = files.failure
        let certificateBytes: [UInt8]
        let keyBytes: [UInt8]
        let certificateStatus: stat
        let keyStatus: stat
        do throws(FileBytes.ReadError) {
            (certificateBytes, certificateStatus) = try FileBytes.read(pathBytes: Array(certificatePath.utf8), limit: .smallText, accepting: .regularFilesOnly)
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
        guard let first = chain.first else {
            throw failure(.serveTLSCertificate, "names \(certificatePath), which holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
        }
        let validity = try checkedValidity(of: chain, now: now, files: files)
        let privateKey: NIOSSLPrivateKey
        do {
            privateKey = try NIOSSLPrivateKey(bytes: keyBytes, format: .pem)
        } catch {
            throw failure(.serveTLSKey, "names \(keyPath), which holds no unencrypted PEM private key (-----BEGIN PRIVATE KEY-----)")
        }
        var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) },
                                                                     privateKey: .privateKey(privateKey))
        configuration.minimumTLSVersion = .tlsv12
        let context: NIOSSLContext
        do {
            context = try NIOSSLContext(configuration: configuration)
        } catch NIOSSLError.failedToLoadPrivateKey {
            // BoringSSL checks the key against the chain's first certificate (KEY_VALUES_MISMATCH).
            throw failure(.serveTLSKey, "names \(keyPath), whose key does not belong to the first certificate in \(certificatePath)")
        } catch {
            throw failure(.serveTLSCertificate, "names \(certificatePath), which cannot be used with the key in \(keyPath): \(Self.describe(error))")
        }
        let serial = first.serialNumber.map { String($0, radix: 16, uppercase: true).leftPadded(to: 2) }.joined()
        return ServeTLSContext(context: context, files: files, validity: validity, serial: serial.isEmpty ? "00" : serial,
                               stamps: .init(certificate: FileStamp(certificateStatus), key: FileStamp(keyStatus)))
    }

    /// The chain's window; a configuration error when `now` is outside it, naming the date.
    static func checkedValidity(of chain: [NIOSSLCertificate], now: Date, files: ServeTLSFiles) throws(ConfigError) -> Validity {
        let starts = chain.map(\.notValidBefore), ends = chain.map(\.notValidAfter)
        let starting = starts.indices.max { starts[$0] < starts[$1] } ?? 0
        let ending = ends.indices.min { ends[$0] < ends[$1] } ?? 0
        let validity = Validity(notBefore: Date(timeIntervalSince1970: TimeInterval(starts[starting])),
                                notAfter: Date(timeIntervalSince1970: TimeInterval(ends[ending])),
                                endingIndex: ending + 1, startingIndex: starting + 1, count: chain.count)
        if now < validity.notBefore {
            throw files.failure(.serveTLSCertificate, "names \(files.certificatePath), whose \(validity.which(validity.startingIndex)) is not valid before "
                                + "\(utcTimestamp(validity.notBefore)) (now \(utcTimestamp(now))): check this machine's clock, or use the certificate in force")
        }
        if now > validity.notAfter {
            throw files.failure(.serveTLSCertificate, "names \(files.certificatePath), whose \(validity.which(validity.endingIndex)) expired on "
                                + "\(utcTimestamp(validity.notAfter)): renew it (certbot renew)")
        }
        return validity
    }

    /// The warning for a chain that ends within `expiryWarningWindow` of `now`, else nil.
    package func expiryWarning(now: Date = Date()) -> String? {
        guard validity.stage(at: now) == .expiresSoon else { return nil }
        let days = Int(validity.notAfter.timeIntervalSince(now) / 86_400)
        let which = validity.endingIndex == 1 ? "" : " (its \(validity.which(validity.endingIndex)))"
        return "warning: the TLS certificate in \(certificatePath)\(which) expires on \(utcTimestamp(validity.notAfter)), "
            + (days == 0 ? "within a day" : "in \(days) day\(days == 1 ? "" : "s")") + ": renew it; enlog serve reads the renewed one without a restart"
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

/// Where the certificate and key come from: the two paths and the settings that named them, so
/// that a problem found when they are read again names the setting as at the start.
package struct ServeTLSFiles: Sendable, Equatable {
    package var certificatePath: String
    package var keyPath: String
    package var certificateOrigin: SettingOrigin
    package var keyOrigin: SettingOrigin

    package init(certificatePath: String, keyPath: String, certificateOrigin: SettingOrigin, keyOrigin: SettingOrigin) {
        self.certificatePath = certificatePath
        self.keyPath = keyPath
        self.certificateOrigin = certificateOrigin
        self.keyOrigin = keyOrigin
    }

    func failure(_ setting: Setting, _ reason: String) -> ConfigError {
        .invalidValue(origin: setting == .serveTLSKey ? keyOrigin : certificateOrigin, name: setting.name, reason: reason)
    }

    struct Stamps: Sendable, Equatable {
        var certificate: FileStamp?
        var key: FileStamp?
    }

    /// Both files as they are now (nil for one that cannot be looked at): two `stat` calls.
    func currentStamps() -> Stamps {
        Stamps(certificate: FileStamp(path: certificatePath), key: FileStamp(path: keyPath))
    }
}

/// What tells a file's new content from its old without reading it: the file it is (device and
/// inode: certbot points `live/` at a new file in `archive/`), its size and its modification
/// time to the nanosecond (a file rewritten in place).
struct FileStamp: Sendable, Equatable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var modifiedSeconds: Int
    var modifiedNanoseconds: Int

    init(_ status: stat) {
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
        size = Int64(status.st_size)
        modifiedSeconds = Int(status.st_mtim.tv_sec)
        modifiedNanoseconds = Int(status.st_mtim.tv_nsec)
    }

    /// The file `path` names (links followed, as when it is read), or nil when it cannot be looked at.
    init?(path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        self.init(status)
    }
}

/// A moment as the messages show it: `2027-02-25 14:39:05 UTC` (`InstantText`'s proleptic
/// Gregorian arithmetic, no locale involved).
package func utcTimestamp(_ date: Date) -> String {
    InstantText.localTime(date, offsetSeconds: 0, dateSeparator: "-", between: " ") + " UTC"
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
