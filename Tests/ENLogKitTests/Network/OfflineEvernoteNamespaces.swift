import Foundation
import XCTest
@testable import Auth

/// Two network namespaces joined by a veth pair, for "the link comes back": the server's end up
/// with its address, the client's end down without one (offline); the SDK-based Evernote server
/// over TLS (a certificate made here) in the server's namespace; and an enlog home signed in to
/// it with three notes waiting. A test runs its enlog in `client`, then calls `bringClientUp()`.
/// The namespaces are deleted and the server stopped when this is released.
final class OfflineEvernoteNamespaces {
    let server: String, client: String
    let serverAddress: String
    let baseURL: String
    let cert: String
    let python: String
    var home: EnlogHome
    private let clientAddress: String
    private let prefix: String
    private let addressOptions: [String]
    private let directory: TemporaryDirectory
    private var created: [String] = []
    private var evernote: ChildProcess?

    /// `role` names the namespaces (`enlogt-ROLE…`); `network` is the second byte of the test's
    /// own 10.x IPv4 subnet (and of fd00:x:: for IPv6), so tests of different roles never meet.
    init(role: String, network: Int, ipv6: Bool = false, token: String) throws {
        try requireNamespaces()
        python = try PythonServer.interpreter(stdlibOnly: false)
        let openssl = "/usr/bin/openssl"
        guard FileManager.default.isExecutableFile(atPath: openssl) else {
            if ProcessInfo.processInfo.environment["CI"] == "true" {
                XCTFail("CI=true: openssl missing")
                throw NamespaceUnavailable(message: "openssl missing")
            }
            throw XCTSkip("openssl not installed")
        }
        let subnet = Int.random(in: 1...254)
        serverAddress = ipv6 ? "fd00:\(network):\(subnet)::1" : "10.\(network).\(subnet).1"
        clientAddress = ipv6 ? "fd00:\(network):\(subnet)::2" : "10.\(network).\(subnet).2"
        prefix = ipv6 ? "/64" : "/24"
        // nodad: the address is usable at once (duplicate detection would hold it back a second).
        addressOptions = ipv6 ? ["nodad"] : []
        let urlHost = ipv6 ? "[\(serverAddress)]" : serverAddress
        server = enlogtName(role + "srv")
        client = enlogtName(role + "cli")
        directory = try TemporaryDirectory()
        cert = directory.path("cert.pem")
        home = try EnlogHome()
        let port = Int.random(in: 20000...29999)
        baseURL = "https://\(urlHost):\(port)"

        try ip("netns", "add", server); created.append(server)
        try ip("netns", "add", client); created.append(client)
        try ip("-n", server, "link", "add", "veth0", "type", "veth", "peer", "name", "veth0", "netns", client)
        try ip(["-n", server, "addr", "add", serverAddress + prefix, "dev", "veth0"] + addressOptions)
        for namespace in [server, client] { try ip("-n", namespace, "link", "set", "lo", "up") }
        try ip("-n", server, "link", "set", "veth0", "up")

        let key = directory.path("key.pem")
        let made = try runCommand(openssl, ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                                            "-days", "1", "-subj", "/CN=\(serverAddress)", "-addext", "subjectAltName=IP:\(serverAddress)"])
        XCTAssertEqual(made.status, 0, made.output)
        let started = try ChildProcess("/usr/sbin/ip", ["netns", "exec", server, python,
                                                      PythonServer.supportDirectory.appendingPathComponent("evernote_server.py").path,
                                                      "--host", serverAddress, "--port", "\(port)", "--print-port",
                                                      "--token", token, "--tls-cert", cert, "--tls-key", key,
                                                      "--public-url", baseURL])
        evernote = started
        XCTAssertTrue(started.waitForOutput(containing: "PORT=", within: .seconds(20)), "evernote_server.py did not start")

        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        home.extraEnvironment["ENLOG_NETWORK_CA_FILE"] = cert
        home.extraEnvironment["ENLOG_NETWORK_PROBES"] = "\(urlHost):\(port)"
        try CredentialStore(path: home.directory.path("config/enlog/credentials.json")).save(Credentials(
            service: .custom, host: baseURL, authProtocol: .token, userId: 1,
            noteStoreUrl: baseURL + "/shard/s1/notestore", token: token))
        for latitude in 1...3 { XCTAssertEqual(try home.run("log", "--at", "\(latitude),2", "--no-sync").status, 0) }
    }

    deinit {
        evernote?.kill()
        for namespace in created.reversed() { _ = try? runCommand("/usr/sbin/ip", ["netns", "del", namespace]) }
    }

    /// The link comes back: the client's end gets its address and goes up.
    func bringClientUp() throws {
        try ip(["-n", client, "addr", "add", clientAddress + prefix, "dev", "veth0"] + addressOptions)
        try ip("-n", client, "link", "set", "veth0", "up")
    }

    /// The notes the Evernote server holds, read from inside its namespace, and what it said.
    func storedNotes() throws -> (notes: [[String: Any]]?, output: String) {
        let script = "import ssl,sys,urllib.request;c=ssl.create_default_context(cafile=sys.argv[2]);c.check_hostname=False;"
            + "sys.stdout.write(urllib.request.urlopen(sys.argv[1],context=c).read().decode())"
        let read = try runCommand("/usr/sbin/ip", ["netns", "exec", server, python, "-c", script, baseURL + "/_test/notes", cert])
        return (try? JSONSerialization.jsonObject(with: Data(read.output.utf8)) as? [[String: Any]], read.output)
    }
}
