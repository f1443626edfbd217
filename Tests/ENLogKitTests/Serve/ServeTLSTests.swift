import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// A throwaway certificate authority and a server certificate it signed for 127.0.0.1, made by
/// Debian's openssl in a test's temporary directory (P-256 keys: made in milliseconds). More
/// pairs, with the serial and dates a test needs, come from `issue` (`openssl ca`, which takes
/// explicit start and end dates: the openssl of Debian 12 has no `x509 -not_before`).
struct TestCertificateAuthority {
    /// What a client trusts: the CA's certificate (valid for a year from now).
    let caCertificate: String
    let caKey: String
    /// The server's certificate (serial 02, valid for 30 days from now), then the CA's: the chain
    /// `serve.tls_certificate` names.
    let chain: String
    /// The server's private key, mode 0600.
    let key: String
    /// Where the files are, kept as long as the authority is.
    let directory: TemporaryDirectory
    let name: String

    /// When an issued certificate is valid.
    enum Validity {
        /// From now for this many days.
        case days(Int)
        /// From `start` to `end`, as `openssl ca -startdate/-enddate` takes them: `YYYYMMDDHHMMSSZ`.
        case dates(start: String, end: String)

        /// From `start` to `end`, given as moments.
        static func between(_ start: Date, _ end: Date) -> Validity {
            .dates(start: opensslTime.string(from: start), end: opensslTime.string(from: end))
        }
    }

    static let opensslTime: DateFormatter = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMddHHmmss'Z'"
        return formatter
    }()

    /// A moment as enlog's messages show it: `2027-02-25 14:39:05 UTC`.
    static func shown(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss 'UTC'"
        return formatter.string(from: date)
    }

    init(in directory: TemporaryDirectory, name: String = "server") throws {
        self.directory = directory
        self.name = name
        caCertificate = directory.path("\(name)-ca.pem")
        caKey = directory.path("\(name)-ca.key")
        try Self.openssl(["req", "-x509"] + Self.curve + ["-keyout", caKey, "-out", caCertificate, "-days", "365", "-subj", "/CN=enlog test CA \(name)"])
        // openssl ca's bookkeeping: its database, and a folder for its copies of what it signs.
        try "".write(toFile: directory.path("\(name)-ca.index"), atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: directory.path("\(name)-ca.issued"), withIntermediateDirectories: true)
        try """
            [ca]
            default_ca = test
            [test]
            database = \(directory.path("\(name)-ca.index"))
            serial = \(directory.path("\(name)-ca.serial"))
            new_certs_dir = \(directory.path("\(name)-ca.issued"))
            default_md = sha256
            policy = any_name
            unique_subject = no
            [any_name]
            commonName = supplied

            """.write(toFile: directory.path("\(name)-ca.cnf"), atomically: true, encoding: .utf8)
        (chain, key) = try Self.issue(name, serial: 2, validity: .days(30), by: name, caCertificate: caCertificate, caKey: caKey, in: directory)
    }

    static let curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]

    static func openssl(_ arguments: [String]) throws {
        let openssl = URL(fileURLWithPath: "/usr/bin/openssl")
        guard FileManager.default.isExecutableFile(atPath: openssl.path) else {
            if ProcessInfo.processInfo.environment["CI"] == "true" { throw SelfSignedCertificate.Failure(description: "CI=true: openssl missing") }
            throw XCTSkip("openssl not installed")
        }
        let result = try Subprocess.run(openssl, arguments)
        guard result.status == 0 else { throw SelfSignedCertificate.Failure(description: "openssl \(arguments.first ?? ""): \(result.standardError)") }
    }

    /// A new key and a certificate for 127.0.0.1 this authority signs with `serial` and
    /// `validity`: the chain file (the certificate, then the CA's) and the key file (mode 0600).
    func issue(_ leafName: String, serial: Int, validity: Validity) throws -> (chain: String, key: String) {
        try Self.issue(leafName, serial: serial, validity: validity, by: name, caCertificate: caCertificate, caKey: caKey, in: directory)
    }

    private static func issue(_ leafName: String, serial: Int, validity: Validity, by name: String, caCertificate: String, caKey: String,
                              in directory: TemporaryDirectory) throws -> (chain: String, key: String) {
        let key = directory.path("\(leafName).key"), request = directory.path("\(leafName).csr")
        let leaf = directory.path("\(leafName).pem"), extensions = directory.path("\(leafName).ext")
        try openssl(["req"] + curve + ["-keyout", key, "-out", request, "-subj", "/CN=127.0.0.1"])
        try "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n".write(toFile: extensions, atomically: true, encoding: .utf8)
        try String(format: "%02X\n", serial).write(toFile: directory.path("\(name)-ca.serial"), atomically: true, encoding: .utf8)
        let dates: [String]
        switch validity {
        case .days(let days): dates = ["-days", String(days)]
        case .dates(let start, let end): dates = ["-startdate", start, "-enddate", end]
        }
        try openssl(["ca", "-batch", "-notext", "-config", directory.path("\(name)-ca.cnf"), "-cert", caCertificate, "-keyfile", caKey,
                          "-in", request, "-out", leaf, "-extfile", extensions] + dates)
        let chain = directory.path("\(leafName)-chain.pem")
        try (String(contentsOfFile: leaf, encoding: .utf8) + String(contentsOfFile: caCertificate, encoding: .utf8))
            .write(toFile: chain, atomically: true, encoding: .utf8)
        XCTAssertEqual(chmod(key, 0o600), 0)
        return (chain, key)
    }
}

/// `enlog serve` with serve.tls_certificate and serve.tls_key: HTTPS from enlog itself, checked
/// by clients we did not write (curl, openssl s_client) against a CA made for the test.
final class ServeTLSTests: XCTestCase {
    func tlsFixture() throws -> (ServeProcessFixture, TestCertificateAuthority) {
        let f = try ServeProcessFixture()
        let directory = try TemporaryDirectory()
        let authority = try TestCertificateAuthority(in: directory)
        f.set("ENLOG_SERVE_TLS_CERTIFICATE", authority.chain)
        f.set("ENLOG_SERVE_TLS_KEY", authority.key)
        return (f, authority)
    }

    func testOwnTracksOverTLSIsStoredForTrustingClientsAndPlainHTTPIsClosedWhileServeGoesOn() throws {
        let (f, authority) = try tlsFixture()
        let (secret, links) = try f.addDevice("alice")
        let owntracks = try XCTUnwrap(links["owntracks"] as? [String: Any])
        XCTAssertEqual(owntracks["url"] as? String, "https://127.0.0.1:8473/owntracks", "devices add: https:// when TLS is on and serve.url unset")
        let check = try Subprocess.run(Subprocess.enlog, ["serve", "--check"], environment: f.environment)
        XCTAssertEqual(check.status, 0, check.standardError)
        XCTAssertTrue(check.standardOutput.contains("with TLS (\(authority.chain), valid until "), check.standardOutput)

        let (serve, port) = try f.serve()
        defer { serve.stop() }
        XCTAssertTrue(serve.output.contains("with TLS"), serve.output)
        let url = "https://127.0.0.1:\(port)/owntracks"
        func post(_ seconds: Int, _ extra: [String]) throws -> ProcessResult {
            try f.curl(extra + ["-u", "alice:\(secret)", "-H", "Content-Type: application/json",
                                "--data-binary", ServeProcessFixture.ownTracksLocation(seconds), url])
        }
        let stored = try post(1_764_201_600, ["--cacert", authority.caCertificate])
        XCTAssertEqual(stored.standardOutput, "[]\n200", stored.standardError)

        // curl trusting only the system's CAs refuses the chain (exit 60: the certificate cannot be verified).
        let untrusting = try post(1_764_201_660, [])
        XCTAssertEqual(untrusting.status, 60, untrusting.standardError)
        XCTAssertTrue(serve.waitForOutput(containing: "TLS handshake with 127.0.0.1"), serve.output)

        // Plain HTTP to the TLS port: no HTTP answer, nothing stored, one line in the log.
        let plain = try f.curl(["-u", "alice:\(secret)", "--data-binary", ServeProcessFixture.ownTracksLocation(1_764_201_720),
                                "http://127.0.0.1:\(port)/owntracks"])
        XCTAssertNotEqual(plain.status, 0, plain.standardOutput)
        XCTAssertFalse(plain.standardOutput.hasSuffix("200"), plain.standardOutput)
        XCTAssertTrue(serve.waitForOutput(containing: "plain HTTP sent to the TLS port"), serve.output)

        // TLS 1.2 at least: openssl's client offering only TLS 1.1 (its own floor lowered) is refused, 1.2 is taken.
        let openssl = URL(fileURLWithPath: "/usr/bin/openssl")
        let old = try Subprocess.run(openssl, ["s_client", "-connect", "127.0.0.1:\(port)", "-tls1_1", "-cipher", "DEFAULT:@SECLEVEL=0",
                                               "-CAfile", authority.caCertificate], standardInput: Data())
        XCTAssertNotEqual(old.status, 0, old.standardOutput)
        let current = try Subprocess.run(openssl, ["s_client", "-connect", "127.0.0.1:\(port)", "-tls1_2", "-verify_return_error",
                                                   "-CAfile", authority.caCertificate], standardInput: Data())
        XCTAssertEqual(current.status, 0, current.standardError)

        // Serve goes on after all that.
        let again = try post(1_764_201_780, ["--cacert", authority.caCertificate])
        XCTAssertEqual(again.standardOutput, "[]\n200", again.standardError)
        XCTAssertTrue(serve.isRunning)
        serve.stop()
        XCTAssertEqual(try f.points(), ["alice": 2])
    }

    /// A client that trickles its ClientHello a byte at a time (each byte resetting the idle
    /// timer) is closed all the same: the request clock starts at the handshake's first byte.
    func testAHandshakeTrickledByteByByteIsClosedAfterTheIdleTimeout() throws {
        let (f, authority) = try tlsFixture()
        defer { withExtendedLifetime(authority) {} }   // its directory holds the files serve reads
        f.set("ENLOG_SERVE_IDLE_TIMEOUT", "1")
        let (serve, port) = try f.serve()
        defer { serve.stop() }
        let fd = try XCTUnwrap(LoopbackHTTP.connectTo(port: Int(port)))
        defer { close(fd) }
        // A handshake record announcing 512 bytes, then its bytes one every 200 ms: 100 s if let run.
        var pending: [UInt8] = [0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03] + [UInt8](repeating: 0x2a, count: 501)
        var closed = false
        for _ in 0..<150 where !pending.isEmpty {
            let byte = pending.removeFirst()
            if [byte].withUnsafeBytes({ send(fd, $0.baseAddress, 1, Int32(MSG_NOSIGNAL)) }) < 0 { closed = true; break }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&poller, 1, 200) > 0 {
                var buffer = [UInt8](repeating: 0, count: 256)
                if recv(fd, &buffer, buffer.count, 0) <= 0 { closed = true; break }
            }
        }
        XCTAssertTrue(closed, "the trickling client was still connected after 30 s")
        XCTAssertTrue(serve.isRunning)
    }

    /// Half the settings, or files that make no certificate and key, stop `serve` and
    /// `serve --check` before anything listens: one line naming the setting and the file, exit 78.
    func testHalfTheSettingsAndUnusableFilesAreOneLineConfigurationErrors() throws {
        let (f, authority) = try tlsFixture()
        let directory = authority.directory
        let other = try TestCertificateAuthority(in: directory, name: "other")
        let readable = directory.path("readable.key")
        try FileManager.default.copyItem(atPath: authority.key, toPath: readable)
        XCTAssertEqual(chmod(readable, 0o644), 0)
        let missing = directory.path("missing.key")
        let chainAsKey = directory.path("chain-as-key.pem")
        try FileManager.default.copyItem(atPath: authority.chain, toPath: chainAsKey)
        XCTAssertEqual(chmod(chainAsKey, 0o600), 0)
        let cases: [(certificate: String?, key: String?, expected: String)] = [
            (authority.chain, nil, "ENLOG_SERVE_TLS_CERTIFICATE is set but serve.tls_key is not"),
            (nil, authority.key, "ENLOG_SERVE_TLS_KEY is set but serve.tls_certificate is not"),
            (authority.chain, missing, "ENLOG_SERVE_TLS_KEY names \(missing), which cannot be read: No such file or directory"),
            (authority.chain, directory.url.path, "ENLOG_SERVE_TLS_KEY names \(directory.url.path), which cannot be read: it is a directory"),
            (authority.chain, chainAsKey, "ENLOG_SERVE_TLS_KEY names \(chainAsKey), which holds no unencrypted PEM private key"),
            (authority.key, authority.key, "ENLOG_SERVE_TLS_CERTIFICATE names \(authority.key), which holds no PEM certificate"),
            ("/dev/zero", authority.key, "ENLOG_SERVE_TLS_CERTIFICATE names /dev/zero, which cannot be read: not a regular file"),
            (authority.chain, readable, "ENLOG_SERVE_TLS_KEY names \(readable), which every user may read or change (mode 644)"),
            (authority.chain, other.key, "ENLOG_SERVE_TLS_KEY names \(other.key), whose key does not belong to the first certificate in \(authority.chain)"),
        ]
        for (index, item) in cases.enumerated() {
            var environment = f.environment
            environment["ENLOG_SERVE_TLS_CERTIFICATE"] = item.certificate
            environment["ENLOG_SERVE_TLS_KEY"] = item.key
            // `serve --check` for each; the real start for one of each kind's first (it must not listen).
            let arguments = index % 3 == 0 ? ["serve", "--listen", "127.0.0.1:\(try freeLoopbackPort())"] : ["serve", "--check"]
            let result = try Subprocess.run(Subprocess.enlog, arguments, environment: environment)
            XCTAssertEqual(result.status, 78, "\(item.expected): \(result.standardError)")
            XCTAssertEqual(result.standardErrorLines.count, 1, result.standardError)
            XCTAssertTrue(result.standardError.contains(item.expected), "expected \(item.expected) in: \(result.standardError)")
            XCTAssertFalse(result.standardError.contains("listening"), result.standardError)
        }
    }
}
