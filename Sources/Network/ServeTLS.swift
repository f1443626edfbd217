import Foundation
import Support
import Configuration

/// `serve.tls_certificate` and `serve.tls_key`: named so that a configuration that sets them is
/// told, in one line, where TLS for `enlog serve` comes from. enlog does not terminate TLS itself:
/// swift-nio-ssl compiles a second copy of BoringSSL, several minutes of every build (measured in
/// docs/phone.md), for what a reverse proxy already does better (certificate renewal, OCSP, HTTP/2).
package enum ServeTLS {
    package static let refusal = "is set, but enlog serve speaks plain HTTP on loopback: terminate TLS in a reverse proxy "
        + "(contrib/nginx/enlog-serve.conf, docs/phone.md \"Reverse proxy\") and remove this setting"

    package static let settingChecks: [Setting: SettingCheck] = [
        .serveTLSCertificate: { _ in refusal },
        .serveTLSKey: { _ in refusal },
    ]
}
