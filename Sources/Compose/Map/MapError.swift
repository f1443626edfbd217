import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Capture

/// Why no map image could be made. `isRetryable` is what a caller holding a note needs: true
/// when the same settings may succeed later (offline, tile server down or answering nonsense,
/// out of time), false when only a change of configuration helps.
package enum MapError: ENLogError, Equatable {
    /// `map.style = none`: no image is wanted.
    case disabled
    /// A setting that cannot work (a tile URL without {z}/{x}/{y}, `static` without a URL…).
    case invalidSettings(String)
    /// The server could not be reached or the transfer broke (no route, DNS, refused, TLS, reset).
    case unreachable(host: String, reason: String)
    /// The server answered with an HTTP status other than 200 (or 304 to a revalidation).
    case httpStatus(host: String, status: Int)
    /// A 200 answer whose body is not a PNG image that can be decoded (an HTML page, garbage, a hostile PNG).
    case notAnImage(host: String, detail: String)
    /// The server answered with redirects enlog does not follow (too many, to plain http from
    /// https, to this machine from elsewhere).
    case refusedRedirect(host: String, detail: String)
    /// The time budget ran out before every tile was there.
    case timedOut(seconds: Double)
    /// The caller's task was cancelled.
    case cancelled
    /// cairo failed to draw or encode (out of memory): not a network problem.
    case rendering(String)

    /// True when trying again later, with the same settings, may succeed.
    package var isRetryable: Bool {
        switch self {
        case .unreachable, .httpStatus, .notAnImage, .refusedRedirect, .timedOut, .cancelled: return true
        case .disabled, .invalidSettings, .rendering: return false
        }
    }

    package var category: ErrorCategory {
        switch self {
        case .disabled, .invalidSettings: return .config
        case .unreachable, .timedOut: return .unavailable
        case .httpStatus(_, let status): return .ofHTTPStatus(status)
        case .notAnImage, .refusedRedirect: return .protocolError
        case .cancelled: return .temporary
        case .rendering: return .cannotWrite
        }
    }

    package var reason: String {
        switch self {
        case .disabled:
            return "no map image is made with map.style = none"
        case .invalidSettings(let problem):
            return "the map settings cannot work: \(HTTPText.oneLine(problem))"
        case .unreachable(let host, let reason):
            return "the map server \(HTTPText.oneLine(host)) cannot be reached: \(HTTPText.oneLine(reason))"
        case .httpStatus(let host, let status):
            return "the map server \(HTTPText.oneLine(host)) answered HTTP \(status)"
        case .notAnImage(let host, let detail):
            return "the map server \(HTTPText.oneLine(host)) sent something that is not a PNG image (\(HTTPText.oneLine(detail)))"
        case .refusedRedirect(let host, let detail):
            return "the map server \(HTTPText.oneLine(host)) answered with \(HTTPText.oneLine(detail))"
        case .timedOut(let seconds):
            return "the map's images did not arrive within \(String(format: "%g", seconds)) s"
        case .cancelled:
            return "making the map was cancelled"
        case .rendering(let detail):
            return "drawing the map failed: \(HTTPText.oneLine(detail))"
        }
    }

    package var recoverySuggestion: String? {
        switch self {
        case .disabled:
            return "set map.style to tiles or static"
        case .invalidSettings:
            return "fix the [map] settings (`enlog config show`)"
        case .unreachable, .timedOut:
            return "check the network and map.tile_url, then retry"
        case .httpStatus, .notAnImage, .refusedRedirect:
            return "check map.tile_url (or note.static_map_url and its key); retry later if the server is down"
        case .cancelled, .rendering:
            return nil
        }
    }
}
