import Foundation
import Synchronization
import XCTest
#if canImport(Glibc)
import Glibc
#endif
import Configuration
import Watch
@testable import ServeHTTP

/// The certificate's life in `enlog serve`: its dates checked at the start and by `--check`, and
/// a renewed pair served without a restart (SIGHUP, or the files replaced), each seen by a client
/// we did not write (`openssl s_client`, its certificate's serial read by `openssl x509`).
final class ServeTLSLifecycleTests: XCTestCase {
    let openssl = URL(fileURLWithPath: "/usr/bin/openssl")

    func tlsFixture() throws -> (ServeProcessFixture, TestCertificateAuthority) {
        let f = try ServeProcessFixture()
        let authority = try TestCertificateAuthority(in: try TemporaryDirectory())
        f.set("ENLOG_SERVE_TLS_CERTIFICATE", authority.chain)
        f.set("ENLOG_SERVE_TLS_KEY", authority.key)
        return (f, authority)
    }

    /// The serial (`serial=02`) of the certificate a new connection to `port` is shown, the chain
    /// verified against the test's CA; nil when the handshake or the verification fails.
    func servedSerial(port: UInt16, authority: TestCertificateAuthority) throws -> String? {
        let hello = try Subprocess.run(openssl, ["s_client", "-connect", "127.0.0.1:\(port)", "-verify_return_error",
                                                 "-CAfile", authority.caCertificate], standardInput: Data())
        guard hello.status == 0 else { return nil }
        let certificate = try Subprocess.run(openssl, ["x509", "-noout", "-serial"], standardInput: Data(hello.standardOutput.utf8))
        guard certificate.status == 0 else { return nil }
        return certificate.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// New connections until one is shown `expected`, or a minute passes (a loaded machine);
    /// the last serial seen.
    func waitForServedSerial(_ expected: String, port: UInt16, authority: TestCertificateAuthority) throws -> String? {
        let end = ContinuousClock.now + .seconds(60)
        var seen: String?
        repeat {
            seen = try servedSerial(port: port, authority: authority)
            if seen == expected { return seen }
            Thread.sleep(forTimeInterval: 0.2)
        } while ContinuousClock.now < end
        return seen
    }

    /// Writes `pair` over the files serve reads, in place (same inodes): the key first, then the chain.
    func overwrite(_ authority: TestCertificateAuthority, with pair: (chain: String, key: String)) throws {
        try Data(contentsOf: URL(fileURLWithPath: pair.key)).write(to: URL(fileURLWithPath: authority.key))
        try Data(contentsOf: URL(fileURLWithPath: pair.chain)).write(to: URL(fileURLWithPath: authority.chain))
    }

    func occurrences(of text: String, in output: String) -> Int { output.components(separatedBy: text).count - 1 }

    /// An expired chain, and one not valid yet, stop `serve` and `serve --check` before anything
    /// listens: one line naming the setting, the file and the date, exit 78. One ending within 14
    /// days is served with a warning naming the date; `--check` says the end date in any case.
    func testExpiredAndNotYetValidCertificatesAreConfigurationErrorsAndOneEndingWithinTwoWeeksIsAWarning() throws {
        let (f, authority) = try tlsFixture()
        let expired = try authority.issue("expired", serial: 3, validity: .dates(start: "20200101000000Z", end: "20200201000000Z"))
        let future = try authority.issue("future", serial: 4, validity: .dates(start: "20450101000000Z", end: "20450201000000Z"))
        let cases = [(expired, "ENLOG_SERVE_TLS_CERTIFICATE names \(expired.chain), whose certificate expired on 2020-02-01 00:00:00 UTC"),
                     (future, "ENLOG_SERVE_TLS_CERTIFICATE names \(future.chain), whose certificate is not valid before 2045-01-01 00:00:00 UTC")]
        for (pair, expected) in cases {
            var environment = f.environment
            environment["ENLOG_SERVE_TLS_CERTIFICATE"] = pair.chain
            environment["ENLOG_SERVE_TLS_KEY"] = pair.key
            let check = try Subprocess.run(Subprocess.enlog, ["serve", "--check"], environment: environment)
            XCTAssertEqual(check.status, 78, check.standardError)
            XCTAssertEqual(check.standardErrorLines.count, 1, check.standardError)
            XCTAssertTrue(check.standardError.contains(expected), "expected \(expected) in: \(check.standardError)")
            // The real start, as a child stopped if it listens after all (it must not).
            let start = try ChildProcess(Subprocess.enlog.path, ["serve", "--listen", "127.0.0.1:\(try freeLoopbackPort())"],
                                         environment: environment.map { "\($0.key)=\($0.value)" })
            defer { start.stop() }
            // Returns at "listening on", at the end of its output (it exits) or after the deadline.
            XCTAssertFalse(start.waitForOutput(containing: "listening on"), start.output)
            let end = ContinuousClock.now + .seconds(60)
            while start.isRunning && ContinuousClock.now < end { usleep(10_000) }
            let (status, output) = start.isRunning ? (-1, start.output) : start.finish()
            XCTAssertEqual(status, 78, output)
            XCTAssertEqual(output.split(separator: "\n").count, 1, output)
            XCTAssertTrue(output.contains(expected), "expected \(expected) in: \(output)")
        }

        // 30 days left: no warning; the end date in --check's line.
        let check = try Subprocess.run(Subprocess.enlog, ["serve", "--check"], environment: f.environment)
        XCTAssertEqual(check.status, 0, check.standardError)
        XCTAssertTrue(check.standardOutput.contains("with TLS (\(authority.chain), valid until 20"), check.standardOutput)
        XCTAssertEqual(check.standardError, "")

        // Two days left: a warning with the date, from --check and at the start.
        let end = Date().addingTimeInterval(2 * 86_400)
        let soon = try authority.issue("soon", serial: 5, validity: .between(Date().addingTimeInterval(-3_600), end))
        f.set("ENLOG_SERVE_TLS_CERTIFICATE", soon.chain)
        f.set("ENLOG_SERVE_TLS_KEY", soon.key)
        let shownEnd = TestCertificateAuthority.shown(end)
        let warned = try Subprocess.run(Subprocess.enlog, ["serve", "--check"], environment: f.environment)
        XCTAssertEqual(warned.status, 0, warned.standardError)
        XCTAssertTrue(warned.standardOutput.contains("with TLS (\(soon.chain), valid until \(shownEnd))"), warned.standardOutput)
        XCTAssertEqual(warned.standardErrorLines.count, 1, warned.standardError)
        XCTAssertTrue(warned.standardError.hasPrefix("enlog: warning: the TLS certificate in \(soon.chain) expires on \(shownEnd), in 1 day"),
                      warned.standardError)
        let (serve, port) = try f.serve()
        defer { serve.stop() }
        XCTAssertTrue(serve.waitForOutput(containing: "expires on \(shownEnd)"), serve.output)
        XCTAssertEqual(try servedSerial(port: port, authority: authority), "serial=05")
    }

    /// SIGHUP (systemd's ExecReload): new connections get the renewed pair, a connection open
    /// across the reload keeps working, and a pair that cannot be used (a key not of the
    /// certificate, an expired certificate) is refused in one line with the old pair kept.
    func testSIGHUPGivesNewConnectionsTheRenewedPairAndABadPairKeepsTheOneInForce() throws {
        let (f, authority) = try tlsFixture()
        let (secret, _) = try f.addDevice("alice")
        let (serve, port) = try f.serve()
        defer { serve.stop() }
        XCTAssertEqual(try servedSerial(port: port, authority: authority), "serial=02")
        // A client connected before the reloads, its connection held open by its standard input.
        let open = try ChildProcess(openssl.path, ["s_client", "-connect", "127.0.0.1:\(port)", "-CAfile", authority.caCertificate,
                                                   "-verify_return_error"], standardInputPipe: true)
        defer { open.stop() }
        XCTAssertTrue(open.waitForOutput(containing: "Verify return code: 0 (ok)"), open.output)

        let renewed = try authority.issue("renewed", serial: 3, validity: .days(90))
        let stranger = try authority.issue("stranger", serial: 4, validity: .days(90))
        let expired = try authority.issue("expired", serial: 5, validity: .dates(start: "20200101000000Z", end: "20200201000000Z"))
        let refusals: [((chain: String, key: String), String)] = [
            ((renewed.chain, stranger.key), "whose key does not belong to the first certificate in \(authority.chain)"),
            (expired, "whose certificate expired on 2020-02-01 00:00:00 UTC"),
        ]
        for (index, (pair, reason)) in refusals.enumerated() {
            try overwrite(authority, with: pair)
            XCTAssertEqual(kill(serve.pid, SIGHUP), 0)
            XCTAssertTrue(serve.waitForOutput { self.occurrences(of: "TLS certificate not reloaded (on SIGHUP)", in: $0) == index + 1 }, serve.output)
            XCTAssertTrue(serve.output.contains(reason), serve.output)
            XCTAssertTrue(serve.output.contains("new connections keep the one in force (serial 02, valid until "), serve.output)
            XCTAssertEqual(try servedSerial(port: port, authority: authority), "serial=02")
        }

        try overwrite(authority, with: renewed)
        XCTAssertEqual(kill(serve.pid, SIGHUP), 0)
        XCTAssertTrue(serve.waitForOutput(containing: "TLS certificate reloaded from \(authority.chain) (on SIGHUP): serial 03"), serve.output)
        XCTAssertEqual(try waitForServedSerial("serial=03", port: port, authority: authority), "serial=03")
        let posted = try f.curl(["--cacert", authority.caCertificate, "-u", "alice:\(secret)", "-H", "Content-Type: application/json",
                                 "--data-binary", ServeProcessFixture.ownTracksLocation(1_764_201_600), "https://127.0.0.1:\(port)/owntracks"])
        XCTAssertEqual(posted.standardOutput, "[]\n200", posted.standardError)

        // The connection made before the reloads still has its handshake's pair and is answered.
        try open.writeStandardInput(Data("GET /owntracks HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8))
        XCTAssertTrue(open.waitForOutput(containing: "HTTP/1.1 "), open.output)
        XCTAssertTrue(serve.isRunning)
        serve.stop()
        XCTAssertEqual(try f.points(), ["alice": 1])
    }

    /// A renewal as certbot makes it, new files put in place of the old by rename, and no signal:
    /// new connections get the new pair within the minute the test allows.
    func testARenewedPairReplacingTheFilesIsServedWithoutASignal() throws {
        let (f, authority) = try tlsFixture()
        let (serve, port) = try f.serve()
        defer { serve.stop() }
        XCTAssertEqual(try servedSerial(port: port, authority: authority), "serial=02")
        let renewed = try authority.issue("renewed", serial: 3, validity: .days(90))
        XCTAssertEqual(rename(renewed.key, authority.key), 0)
        XCTAssertEqual(rename(renewed.chain, authority.chain), 0)
        XCTAssertEqual(try waitForServedSerial("serial=03", port: port, authority: authority), "serial=03")
        XCTAssertTrue(serve.waitForOutput(containing: "TLS certificate reloaded from \(authority.chain) (its file changed): serial 03"), serve.output)
        XCTAssertTrue(serve.isRunning)
    }

    /// The reloader's decisions, on real files at chosen moments (no waiting for a clock): a file
    /// unchanged is not read again, a refused pair is said once until a file changes again, and
    /// the pair in force is said to expire soon, then expired, once each.
    func testTheReloaderSaysEachRefusalAndEachExpiryStageOnce() throws {
        let authority = try TestCertificateAuthority(in: try TemporaryDirectory())
        let files = ServeTLSFiles(certificatePath: authority.chain, keyPath: authority.key,
                                  certificateOrigin: .environment("ENLOG_SERVE_TLS_CERTIFICATE"), keyOrigin: .environment("ENLOG_SERVE_TLS_KEY"))
        let initial = try ServeTLSContext.load(files, now: Date())
        XCTAssertEqual(initial.serial, "02")
        let reports = Mutex<[WatchReport]>([])
        let certificates = ServeTLSCertificates(initial, report: { report in reports.withLock { $0.append(report) } })
        func events() -> [String] { reports.withLock { $0.map(\.event) } }

        XCTAssertEqual(certificates.reload(.fileChanged), .unchanged)
        let stranger = try authority.issue("stranger", serial: 3, validity: .days(90))
        try overwrite(authority, with: (authority.chain, stranger.key))
        guard case .refused(let reason) = certificates.reload(.fileChanged) else { return XCTFail("a key not of the certificate was taken") }
        XCTAssertTrue(reason.contains("ENLOG_SERVE_TLS_KEY names \(authority.key), whose key does not belong"), reason)
        XCTAssertEqual(certificates.reload(.fileChanged), .unchanged, "the same refused files are not read again")
        XCTAssertEqual(events(), ["tls-reload-failed"])
        XCTAssertEqual(certificates.current.serial, "02")

        let renewed = try authority.issue("renewed", serial: 4, validity: .days(90))
        try overwrite(authority, with: renewed)
        guard case .reloaded(let serial, let notAfter) = certificates.reload(.fileChanged) else { return XCTFail("the renewed pair was not taken") }
        XCTAssertEqual(serial, "04")
        XCTAssertEqual(certificates.current.serial, "04")
        XCTAssertEqual(events(), ["tls-reload-failed", "tls-reloaded"])

        for moment in [notAfter.addingTimeInterval(-20 * 86_400), notAfter.addingTimeInterval(-10 * 86_400), notAfter.addingTimeInterval(-9 * 86_400),
                       notAfter.addingTimeInterval(1), notAfter.addingTimeInterval(86_400)] {
            certificates.announceExpiry(now: moment)
        }
        XCTAssertEqual(events(), ["tls-reload-failed", "tls-reloaded", "tls-expires-soon", "tls-expired"])
        let lines = reports.withLock { $0.map(\.message) }
        XCTAssertTrue(lines[2].contains("expires on \(TestCertificateAuthority.shown(notAfter)), in 10 days"), lines[2])
        XCTAssertTrue(lines[3].contains("expired on \(TestCertificateAuthority.shown(notAfter))"), lines[3])

        // SIGHUP reads the files even unchanged; a pair refused at a later moment (expired by then) keeps the one in force.
        XCTAssertEqual(certificates.reload(.signal, now: notAfter.addingTimeInterval(-86_400)), .reloaded(serial: "04", notAfter: notAfter))
        guard case .refused(let expired) = certificates.reload(.signal, now: notAfter.addingTimeInterval(60)) else { return XCTFail("an expired pair was taken") }
        XCTAssertTrue(expired.contains("whose certificate expired on \(TestCertificateAuthority.shown(notAfter))"), expired)
        XCTAssertEqual(certificates.current.serial, "04")
    }
}
