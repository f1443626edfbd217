import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Capture

/// Redirects a tile or static-map server answers with (a moved tile URL, http to https), which
/// libcurl is never asked to follow: followed here, a few at most, and only within the origin
/// of the request (the same scheme, host and port; plain http goes to this machine alone, so
/// an upgrade to https would be a move to another port), as the geocoder, NoteStore and OAuth clients follow none: a tile server cannot
/// point enlog at another host or port (a cloud metadata service, a local one) through it.
enum TileRedirects {
    static let most = 3

    enum Refusal: Error, Equatable {
        case tooMany
        case downgrade(String)
        case toLoopback(String)
        case otherOrigin(String)
        case unusable(String)

        var detail: String {
            switch self {
            case .tooMany: return "more than \(TileRedirects.most) redirects"
            case .downgrade(let url): return "a redirect from https to \(url), which is not followed"
            case .toLoopback(let url): return "a redirect to this machine (\(url)), which is not followed"
            case .otherOrigin(let url): return "a redirect to another server (\(url)), which is not followed"
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
        guard from.host == to.host, from.port == to.port, from.scheme == to.scheme else {
            throw .otherOrigin(HTTPURLPolicy.describe(resolved))
        }
        return resolved
    }
}
