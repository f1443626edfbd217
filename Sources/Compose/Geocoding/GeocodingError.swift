import Support
import EvernoteAPI
import Configuration
import Network
import Capture
/// Why no address could be had for a position. None of these loses a note: `log` stores the
/// note with coordinates only (`addressPending`) and the sync engine retries before upload.
package enum GeocodingError: ENLogError, Equatable {
    /// No connection to the geocoding service (DNS, connect, TLS, lost connection).
    case unreachable(String)
    /// The time budget (`seconds`) ran out before a reply came.
    case timedOut(seconds: Double)
    /// The service answered with a non-2xx status.
    case httpStatus(Int)
    /// The reply was not a Nominatim `jsonv2` answer.
    case malformedReply(String)
    /// The service has no address there (Nominatim's `{"error":"Unable to geocode"}`: sea, desert…).
    case noAddress
    /// Another request was made less than the minimum interval ago (OpenStreetMap allows at most
    /// one per second; enlog spaces them 1.1 s apart) and waiting for the next slot would exceed the time budget.
    case rateLimited(waitSeconds: Double)
    /// The geocode cache database failed.
    case cache(String)

    package var reason: String {
        switch self {
        case .unreachable(let detail):
            return "the geocoding service is unreachable: \(detail)"
        case .timedOut(let seconds):
            return "the geocoding service did not answer within \(Self.format(seconds)) s"
        case .httpStatus(let status):
            return "the geocoding service answered HTTP \(status)"
        case .malformedReply(let detail):
            return "the geocoding service sent an unreadable reply: \(detail)"
        case .noAddress:
            return "no address is known at this position"
        case .rateLimited(let wait):
            return "geocoding is rate-limited to one request per second; the next slot is \(Self.format(wait)) s away"
        case .cache(let detail):
            return "the geocode cache failed: \(detail)"
        }
    }

    package var recoverySuggestion: String? {
        let later = "the note is logged with coordinates only; the address is filled in before upload"
        switch self {
        case .unreachable:
            return "\(later); check the network, or the configured geocoder URL"
        case .timedOut:
            return "\(later); or allow more time for geocoding"
        case .httpStatus(let status) where status == 429 || status == 403:
            return "\(later); the service refused the request (usage policy): check that a contact is configured and that geocoding is not run in bulk"
        case .httpStatus:
            return "\(later); if it persists, check the configured geocoder URL"
        case .malformedReply:
            return "\(later); check that the configured geocoder URL is a Nominatim server"
        case .noAddress:
            return "the note keeps its coordinates only (for example at sea)"
        case .rateLimited:
            return later
        case .cache:
            return "\(later); check that the outbox database is writable"
        }
    }

    /// True when asking again (later) cannot give a different answer for the same position.
    package var isPermanent: Bool { self == .noAddress }

    private static func format(_ seconds: Double) -> String {
        let tenths = (seconds * 10).rounded() / 10
        return tenths == tenths.rounded() ? String(Int(tenths)) : String(tenths)
    }
}

extension GeocodingError {
    package var category: ErrorCategory {
        switch self {
        case .httpStatus(let status): return .ofHTTPStatus(status)
        case .unreachable, .timedOut, .noAddress: return .unavailable
        case .malformedReply: return .protocolError
        case .rateLimited: return .temporary
        case .cache: return .cannotWrite
        }
    }
}
