import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Capture

/// Redirects a tile or static-map server answers with (a moved tile URL, http to https), which
/// libcurl is never asked to follow: followed here, a few at most, and only where the first
/// request could have gone itself: never from https down to http, and to this machine
/// (loopback) only from this machine, so that a server cannot point enlog at a local service.
enum TileRedirects {
    static let most = 3

    enum Refusal: Error, Equatable {
        case tooMany
        case downgrade(String)
        case toLoopback(String)
        case unusable(String)

        var detail: String {
            switch self {
            case .tooMany: return "more than \(TileRedirects.most) redirects"
            case .downgrade(let url): return "a redirect from https to \(url), which is not followed"
            case .toLoopback(let url): return "a redirect to this machine (\(url)), which is not followed"
            case .unusable(let what): return "a redirect to \(what), which is not followed"
            }
        }
    }

    static func isRedirect(_ status: Int) -> Bool { [301, 302, 303, 307, 308].contains(status) }

    /// Sends `request`, following the redirects the rules allow; the final response.
    static func send(_ request: HTTPRequest, with client: HTTPClient) async throws -> HTTPResponse {
        var current = request
        var response = try await client.send(current)
        var hops = 0
        while isRedirect(response.status), let location = response.headers["location"] {
            hops += 1
            guard hops <= most else { throw Refusal.tooMany }
            let next = try nextURL(from: current.url, to: location)
            current = HTTPRequest(url: next, headers: current.headers)
            response = try await client.send(current)
        }
        return response
    }

    /// `location` resolved against `url`, when the rules let it be followed.
    static func nextURL(from url: String, to location: String) throws(Refusal) -> String {
        guard let base = URL(string: url), let resolved = URL(string: location, relativeTo: base)?.absoluteString else {
            throw .unusable(HTTPText.oneLine(location, limit: 80))
        }
        let from: HTTPTarget, to: HTTPTarget
        do {
            from = try HTTPURLPolicy.check(url, resolve: [])
            to = try HTTPURLPolicy.check(resolved, resolve: [])
        } catch {
            throw .unusable("\(HTTPURLPolicy.describe(resolved)) (\(error.reason))")
        }
        if from.scheme == "https" && to.scheme != "https" { throw .downgrade(HTTPURLPolicy.describe(resolved)) }
        if to.isLoopback && !from.isLoopback { throw .toLoopback(HTTPURLPolicy.describe(resolved)) }
        return resolved
    }
}
