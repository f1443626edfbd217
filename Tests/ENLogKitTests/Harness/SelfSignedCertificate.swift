import Foundation
import XCTest

/// A self-signed certificate and its key, made by openssl and valid for a day: a TLS server
/// that enlog trusts only through `network.ca_file`. Skips the test when openssl is missing,
/// except under CI=true, where that fails it.
struct SelfSignedCertificate {
    let certificate: String
    let key: String

    struct Failure: Error, CustomStringConvertible { let description: String }

    /// - Parameter name: what the certificate is for, as subjectAltName writes it
    ///   (`DNS:evernote.test`, `IP:127.0.0.1`); its value is the common name too.
    init(in directory: TemporaryDirectory, for name: String) throws {
        let openssl = "/usr/bin/openssl"
        guard FileManager.default.isExecutableFile(atPath: openssl) else {
            if ProcessInfo.processInfo.environment["CI"] == "true" { throw Failure(description: "CI=true: openssl missing") }
            throw XCTSkip("openssl not installed")
        }
        certificate = directory.path("cert.pem")
        key = directory.path("key.pem")
        let commonName = name.split(separator: ":", maxSplits: 1).last.map(String.init) ?? name
        let made = try Subprocess.run(URL(fileURLWithPath: openssl), [
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate, "-days", "1",
            "-subj", "/CN=\(commonName)", "-addext", "subjectAltName=\(name)"])
        guard made.status == 0 else { throw Failure(description: "openssl could not make a certificate: \(made.standardError)") }
    }
}
