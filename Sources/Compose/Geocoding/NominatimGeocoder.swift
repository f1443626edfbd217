import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Capture

package struct NominatimConfiguration: Sendable {
    package static let defaultBaseURL = "https://nominatim.openstreetmap.org"
    package static let defaultTimeBudget: Duration = .seconds(3)

    /// Scheme, host and optional path prefix of a Nominatim server, without `/reverse`.
    package var baseURL: String
    /// `accept-language` value ("en", "ja,en"); empty: the server's default (local names).
    package var language: String
    /// An e-mail address or URL identifying the operator, sent in the User-Agent as the
    /// OpenStreetMap usage policy requires.
    package var contact: String
    /// The most one `address` call may take, waiting for the rate limit included.
    package var timeBudget: Duration
    /// Smallest spacing between the starts of two requests from any enlog process on this
    /// machine. The default, 1.1 s, is OpenStreetMap's one request per second plus a margin for
    /// network jitter, so that the server never sees two requests less than a second apart.
    package var minimumInterval: Duration
    /// Nominatim detail level; 18 = building.
    package var zoom: Int

    package init(baseURL: String = NominatimConfiguration.defaultBaseURL, language: String, contact: String,
                timeBudget: Duration = NominatimConfiguration.defaultTimeBudget,
                minimumInterval: Duration = .milliseconds(1100), zoom: Int = 18) {
        self.baseURL = baseURL
        self.language = language
        self.contact = contact
        self.timeBudget = timeBudget
        self.minimumInterval = minimumInterval
        self.zoom = zoom
    }

    /// The spacing `minimumInterval` takes for a server: OpenStreetMap's 1.1 s, except for a
    /// server on this machine (loopback: a Nominatim of one's own, `watch --replay` against a
    /// local one), which nobody else shares and which may be asked as fast as it answers.
    package static func requestSpacing(for baseURL: String) -> Duration {
        (try? HTTPURLPolicy.check(baseURL, resolve: []))?.isLoopback == true ? .zero : .milliseconds(1100)
    }

    /// `enlog/<version> (+<contact>)`, or `enlog/<version>` without a contact.
    package var userAgent: String {
        let contact = AddressText.oneLine(self.contact) ?? ""
        return contact.isEmpty ? "enlog/\(ENLogVersion.current)" : "enlog/\(ENLogVersion.current) (+\(contact))"
    }
}

/// Reverse geocoding with a Nominatim server's `/reverse` endpoint (jsonv2, address details).
/// Throws `GeocodingError` (and `CancellationError` when the task is cancelled). `log` and sync
/// ask it through `CachingGeocoder` (Diary), which keeps its answers in the outbox.
///
/// Never sends more than one request per `minimumInterval` across all processes sharing the
/// database: each request first reserves a slot in `geocodeRateLimit`, then waits for it. When
/// the slot lies beyond the time budget it fails at once with `.rateLimited`.
package final class NominatimGeocoder: Sendable {
    package let configuration: NominatimConfiguration
    let rateLimit: any GeocodeRequestSlots
    let client: HTTPClient
    let now: @Sendable () -> Date

    /// Time that must be left for the request itself after waiting for a slot; with less the
    /// call fails fast with `.rateLimited` instead of starting a request that cannot finish.
    static let minimumRequestTime: TimeInterval = 0.2

    /// - Parameter store: the database holding the shared last-request time (the outbox's).
    package init(configuration: NominatimConfiguration, store: any GeocodeRequestSlots,
                now: @escaping @Sendable () -> Date = { Date() }) {
        self.configuration = configuration
        self.rateLimit = store
        self.now = now
        // libcurl's default timeouts are only a backstop: each call races its request against
        // its own remaining budget and cancels it when the budget runs out.
        self.client = HTTPClient(configuration: HTTPConfiguration(
            userAgent: configuration.userAgent, maxResponseBytes: 1 << 20))
    }

    package func address(latitude: Double, longitude: Double) async throws -> Address {
        try await address(latitude: latitude, longitude: longitude, timeBudget: configuration.timeBudget)
    }

    /// As `address(latitude:longitude:)`, with this call's own time budget (the sync engine can
    /// afford a longer one than `log`).
    package func address(latitude: Double, longitude: Double, timeBudget: Duration) async throws -> Address {
        let body = try await fetchReply(latitude: Self.decimalText(latitude), longitude: Self.decimalText(longitude),
                                        timeBudget: timeBudget)
        return try NominatimReply.parse(body)
    }

    /// The URL asked for a position given as decimal text.
    package func requestURL(latitude: String, longitude: String) -> String {
        var base = configuration.baseURL
        while base.hasSuffix("/") { base.removeLast() }
        var url = "\(base)/reverse?format=jsonv2&lat=\(latitude)&lon=\(longitude)&zoom=\(configuration.zoom)&addressdetails=1"
        let language = NominatimConfiguration.normalizedLanguage(configuration.language)
        if !language.isEmpty {
            var allowed = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)...Unicode.Scalar(127)))
            allowed.insert(charactersIn: "-_.,;=*")
            url += "&accept-language=" + (language.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")
        }
        return url
    }

    /// The body of a 2xx reply for the position, within the time budget and the rate limit.
    package func fetchReply(latitude: String, longitude: String, timeBudget: Duration) async throws -> [UInt8] {
        let budget = timeBudget.secondsValue
        let start = now()
        let deadline = start.addingTimeInterval(budget)
        let slot = try await rateLimit.reserveRequestSlot(
            minimumInterval: configuration.minimumInterval.secondsValue,
            latestStart: deadline.addingTimeInterval(-Self.minimumRequestTime), clock: now)
        let wait = slot.timeIntervalSince(now())
        if wait > 0 { try await Task.sleep(for: .seconds(wait)) }

        let remaining = deadline.timeIntervalSince(now())
        guard remaining > 0 else { throw GeocodingError.timedOut(seconds: budget) }
        let request = HTTPRequest(url: requestURL(latitude: latitude, longitude: longitude),
                                  headers: [(name: "Accept", value: "application/json")])
        let client = self.client
        let response: HTTPResponse
        do {
            response = try await withThrowingTaskGroup(of: HTTPResponse?.self) { group in
                group.addTask { try await client.send(request) }
                group.addTask {
                    try await Task.sleep(for: .seconds(remaining))
                    return nil
                }
                defer { group.cancelAll() }
                guard let first = try await group.next(), let response = first else {
                    throw GeocodingError.timedOut(seconds: budget)
                }
                return response
            }
        } catch let error as HTTPError {
            throw Self.map(error, budget: budget)
        } catch is CancellationError where !Task.isCancelled {
            throw GeocodingError.timedOut(seconds: budget)
        }
        guard (200..<300).contains(response.status) else {
            throw GeocodingError.httpStatus(response.status)
        }
        return response.body
    }

    static func map(_ error: HTTPError, budget: Double) -> Error {
        switch error {
        case .timedOut:
            return GeocodingError.timedOut(seconds: budget)
        case .cancelled:
            return Task.isCancelled ? CancellationError() : GeocodingError.timedOut(seconds: budget)
        case _ where error.isBadReply:
            return GeocodingError.malformedReply(error.reason)
        default:
            return GeocodingError.unreachable(error.reason)
        }
    }

    /// `value` with at most 7 decimals (≈ 1 cm), trailing zeros removed: "35.6812", "-0.5", "0".
    static func decimalText(_ value: Double) -> String {
        var text = String(format: "%.7f", value)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        if text == "-0" { text = "0" }
        return text
    }
}

extension Duration {
    /// The duration in seconds, as a floating-point number.
    package var secondsValue: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}
