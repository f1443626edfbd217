@testable import Network
@testable import Compose
@testable import Outbox
import Foundation
import GRDB
import XCTest
#if canImport(Glibc)
import Glibc
#endif

enum GeocodingFixtures {
    static let nominatim = Fixtures.root.appendingPathComponent("nominatim")

    static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: nominatim.appendingPathComponent(name)))
    }

    static func address(_ name: String) throws -> Address {
        try NominatimReply.parse(bytes(name))
    }
}

/// A fresh outbox file in a temporary directory (the geocode cache lives in the outbox).
final class TemporaryDatabase {
    let directory: URL
    let path: String

    init() throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("enlog-geocode-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("outbox.sqlite").path
    }

    /// The outbox on the file, as a separate process would open it (created and migrated on first use).
    func openOutbox() throws -> OutboxStore {
        try OutboxStore(path: path)
    }

    /// A plain connection pool on the migrated file, to look at its rows.
    func openPool() throws -> DatabasePool {
        _ = try openOutbox()
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        return try DatabasePool(path: path, configuration: configuration)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }
}

/// The local Nominatim-compatible server (Tests/support/nominatim_server.py), through the shared harness.
final class NominatimTestServer {
    private let server: PythonServer

    var port: Int { server.port }
    var baseURL: String { server.baseURL }

    init(_ arguments: [String] = []) throws {
        server = try PythonServer(script: "nominatim_server.py",
                                  arguments: ["--fixtures", GeocodingFixtures.nominatim.path] + arguments, stdlibOnly: true)
    }

    /// The `/reverse` requests the server has seen.
    func requests() async throws -> [[String: Any]] {
        let response = try await HTTPClient().send(HTTPRequest(url: "\(baseURL)/_test/requests"))
        return try JSONSerialization.jsonObject(with: Data(response.body)) as? [[String: Any]] ?? []
    }

    func stop() { server.stop() }
}

