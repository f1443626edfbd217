import Foundation
import XCTest
@testable import Network

final class ThriftHTTPTransportTests: HTTPTestServerCase {
    func testPostsThriftWithContentTypeAndAccept() async throws {
        let transport = ThriftHTTPTransport(url: server.baseURL + "/echo")
        let reply = try await transport.roundTrip([0x80, 0x01, 0x00, 0x01, 0x00])
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(reply)) as? [String: Any])
        XCTAssertEqual(json["method"] as? String, "POST")
        XCTAssertEqual(json["body_hex"] as? String, "8001000100")
        let headers = Dictionary((json["headers"] as? [[String]] ?? []).map { ($0[0].lowercased(), $0[1]) },
                                 uniquingKeysWith: { $1 })
        XCTAssertEqual(headers["content-type"], "application/x-thrift")
        XCTAssertEqual(headers["accept"], "application/x-thrift")
        XCTAssertEqual(headers["content-length"], "5")
    }

    func testNon200IsATypedErrorWithASanitizedSnippet() async throws {
        let transport = ThriftHTTPTransport(url: server.baseURL + "/status/503")
        do {
            _ = try await transport.roundTrip([1, 2, 3])
            XCTFail("503 accepted")
        } catch let error as ThriftHTTPError {
            XCTAssertEqual(error, .unexpectedStatus(status: 503, snippet: "503 Test Status"))
            XCTAssertEqual(error.reason, "Evernote answered HTTP 503: 503 Test Status")
            XCTAssertNotNil(error.recoverySuggestion)
        }
    }

    func testSnippetExtraction() {
        let page = Array("<html><body><h1>Bad   Gateway</h1>\n<p>token S=s1:U=ab:E=1:C=2:A=k:H=zz here</p></body></html>".utf8)
        let snippet = ThriftHTTPError.snippet(of: page)
        XCTAssertEqual(snippet, "Bad Gateway token [redacted] here")
        XCTAssertNil(ThriftHTTPError.snippet(of: [0x80, 0x01, 0x00, 0x02, 0x00]))
        XCTAssertNil(ThriftHTTPError.snippet(of: []))
        let long = ThriftHTTPError.snippet(of: Array(String(repeating: "word ", count: 100).utf8))
        XCTAssertLessThanOrEqual(long?.count ?? 0, 121)
    }

    func testHTMLWith200IsNotMistakenForThrift() async throws {
        let transport = ThriftHTTPTransport(url: server.baseURL + "/status/200")
        do {
            _ = try await transport.roundTrip([1])
            XCTFail("HTML page accepted as a Thrift reply")
        } catch let error as ThriftHTTPError {
            guard case .unexpectedContent(let type, let snippet) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(type, "text/html; charset=utf-8")
            XCTAssertEqual(snippet, "200 Test Status")
        }
    }
}
