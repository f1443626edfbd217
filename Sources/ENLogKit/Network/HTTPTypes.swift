/// One HTTP request. Header names and values must not contain CR or LF.
public struct HTTPRequest: Sendable {
    public var method: String            // "GET", "POST"
    public var url: String
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(method: String = "GET", url: String, headers: [(name: String, value: String)] = [],
                body: [UInt8] = []) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

public struct HTTPResponse: Sendable {
    public var status: Int
    /// Names lowercased; when a header repeats, the last value wins.
    public var headers: [String: String]
    public var body: [UInt8]
    /// CURLINFO_PRIMARY_IP: the address actually connected to (nil when none is known).
    public var primaryIP: String?

    public init(status: Int, headers: [String: String] = [:], body: [UInt8] = [], primaryIP: String? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.primaryIP = primaryIP
    }
}

public struct HTTPConfiguration: Sendable {
    /// Time allowed for DNS + TCP + TLS set-up (CURLOPT_CONNECTTIMEOUT_MS).
    public var connectTimeout: Duration
    /// Time allowed for the whole transfer (CURLOPT_TIMEOUT_MS).
    public var totalTimeout: Duration
    public var userAgent: String
    /// CURLOPT_RESOLVE entries "host:port:address", to bypass DNS for these host/port pairs.
    public var resolve: [String]
    /// A reply body larger than this fails with `HTTPError.responseTooLarge`.
    public var maxResponseBytes: Int
    /// CURLOPT_CAINFO: a PEM bundle of CAs to trust instead of the system's (a private test or
    /// corporate CA). Verification stays on either way. nil: the system bundle.
    public var caFile: String?

    public static let defaultUserAgent = "enlog/\(ENLogVersion.current) (Linux)"

    public init(connectTimeout: Duration = .seconds(10),
                totalTimeout: Duration = .seconds(60),
                userAgent: String = HTTPConfiguration.defaultUserAgent,
                resolve: [String] = [],
                maxResponseBytes: Int = 64 << 20,
                caFile: String? = nil) {
        self.connectTimeout = connectTimeout
        self.totalTimeout = totalTimeout
        self.userAgent = userAgent
        self.resolve = resolve
        self.maxResponseBytes = maxResponseBytes
        self.caFile = caFile
    }
}
