import Support
import EvernoteAPI
import Configuration
/// One HTTP request. Header names and values must not contain CR or LF.
package struct HTTPRequest: Sendable {
    package var method: String            // "GET", "POST"
    package var url: String
    package var headers: [(name: String, value: String)]
    package var body: [UInt8]

    package init(method: String = "GET", url: String, headers: [(name: String, value: String)] = [],
                body: [UInt8] = []) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

package struct HTTPResponse: Sendable {
    package var status: Int
    /// Names lowercased; when a header repeats, the last value wins.
    package var headers: [String: String] = [:]
    package var body: [UInt8] = []
    /// CURLINFO_PRIMARY_IP: the address actually connected to (nil when none is known).
    package var primaryIP: String?
    /// The request went out more than once: libcurl sent it again on a new connection after
    /// the reused one died without a reply byte. Only possible with
    /// `HTTPConfiguration.rewindableBodies` or for a request without a body; the server may
    /// have processed both copies.
    package var resent: Bool = false
}

package struct HTTPConfiguration: Sendable {
    /// Time allowed for DNS + TCP + TLS set-up (CURLOPT_CONNECTTIMEOUT_MS).
    package var connectTimeout: Duration
    /// Time allowed for the whole transfer (CURLOPT_TIMEOUT_MS).
    package var totalTimeout: Duration
    package var userAgent: String
    /// CURLOPT_RESOLVE entries "host:port:address", to bypass DNS for these host/port pairs.
    package var resolve: [String]
    /// A reply body larger than this fails with `HTTPError.responseTooLarge`.
    package var maxResponseBytes: Int
    /// CURLOPT_CAINFO: a PEM bundle of CAs to trust instead of the system's (a private test or
    /// corporate CA). Verification stays on either way. nil: the system bundle.
    package var caFile: String?
    /// CURLOPT_MAXAGE_CONN: a kept-alive connection idle longer than this is not reused (a new
    /// one is opened), so that a request rarely meets a connection the server is closing.
    package var maxIdleReuse: Duration
    /// Whether libcurl may send a request body again on a new connection when a reused one
    /// died before any reply byte (its default). False: the pre-request callback
    /// (CURLOPT_PREREQFUNCTION) aborts that second send, so such a request fails with
    /// `connectionLost` instead of silently going out twice (a duplicate `createNote`). True
    /// only to test the detection of re-sends (`HTTPResponse.resent`).
    package var rewindableBodies: Bool

    package static let defaultUserAgent = "enlog/\(ENLogVersion.current) (Linux)"

    /// What every call to Evernote (sync, sign-in, notebooks) honours from the settings: the
    /// CA file to trust (`network.ca_file`) and how long one request may take
    /// (`network.request_timeout`, or `requestTimeout` given on the command line).
    package init(config: Config, requestTimeout: Duration? = nil) {
        let timeout = requestTimeout ?? config.duration(.requestTimeout)
        self.init(totalTimeout: timeout, caFile: config.string(.caFile))
        connectTimeout = min(connectTimeout, timeout)
    }

    package init(connectTimeout: Duration = .seconds(10),
                totalTimeout: Duration = .seconds(60),
                userAgent: String = HTTPConfiguration.defaultUserAgent,
                resolve: [String] = [],
                maxResponseBytes: Int = 64 << 20,
                caFile: String? = nil,
                maxIdleReuse: Duration = .seconds(20),
                rewindableBodies: Bool = false) {
        self.connectTimeout = connectTimeout
        self.totalTimeout = totalTimeout
        self.userAgent = userAgent
        self.resolve = resolve
        self.maxResponseBytes = maxResponseBytes
        self.caFile = caFile
        self.maxIdleReuse = maxIdleReuse
        self.rewindableBodies = rewindableBodies
    }
}
