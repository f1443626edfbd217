import Foundation
import XCTest

/// Issue 32: a tile server's redirect is followed only within its origin, as the other clients
/// follow none: the binary against two local tile servers.
extension MapCommandTests {
    /// A tile server redirecting to another port on this machine, where a server would answer
    /// with a tile: not followed, and nothing is asked of that server.
    func testATileRedirectToAnotherPortOnThisMachineIsRefused() async throws {
        let other = try TileTestServer()
        defer { other.stop() }
        let port = try XCTUnwrap(URL(string: other.baseURL)?.port)
        try await server.configure("redirect=port:\(port)")
        let result = try enlog(["map", "--at", "35.68,139.76", "-o", home.path("elsewhere.png")], ["XDG_CACHE_HOME": home.path("cache-port")])
        XCTAssertEqual(result.status, 76, result.standardError)
        XCTAssertEqual(result.standardErrorLines.count, 1, result.standardError)
        XCTAssertTrue(result.standardError.contains("a redirect to another server (http://127.0.0.1:\(port)), which is not followed"),
                      result.standardError)
        let asked = try await other.log().requests.count
        XCTAssertEqual(asked, 0, "the other server was never asked")
    }
}
