import CCurl
import CCurlShim

import Foundation
import Support
import EvernoteAPI
import Configuration

/// HTTP(S) over libcurl easy handles: one pooled keep-alive handle per scheme+host+port, each
/// blocking `curl_easy_perform` on its own thread (never on the Swift cooperative pool), TLS
/// verification always on, plain http only to loopback, cancellable through Task cancellation.
/// Proxies come from the environment as libcurl reads them (`https_proxy`, `no_proxy`, …),
/// except that loopback requests never go through a proxy.
package final class HTTPClient: Sendable {
    package let configuration: HTTPConfiguration
    let pool: CurlHandlePool

    package init(configuration: HTTPConfiguration = .init()) {
        self.configuration = configuration
        self.pool = CurlHandlePool(capacity: 8)
        // libcurl is initialised (and loaded) with the first handle: a run that sends nothing
        // never loads it.
    }

    package func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let target = try HTTPURLPolicy.check(request.url, resolve: configuration.resolve)
        let method = request.method.uppercased()
        guard !method.isEmpty, method.utf8.allSatisfy({ (0x41...0x5a).contains($0) }) else {
            throw HTTPError.other(code: Int(CURLE_BAD_FUNCTION_ARGUMENT.rawValue), message: "invalid HTTP method")
        }
        for header in request.headers where !Self.isValidHeader(header) {
            throw HTTPError.other(code: Int(CURLE_BAD_FUNCTION_ARGUMENT.rawValue),
                                  message: "invalid HTTP header \(HTTPText.oneLine(String(header.name.prefix(40))))")
        }
        if Task.isCancelled { throw HTTPError.cancelled }

        let maxBytes = max(0, configuration.maxResponseBytes)
        let configuration = self.configuration
        let pool = self.pool
        // Cancelling raises the flag; the progress callback sees it and aborts the transfer.
        return try await BlockingCall.run("enlog.http", onCancel: .wake {}) { cancellation in
            let state = CurlTransferState(maxBytes: maxBytes, checkContentLength: method != "HEAD",
                                          cancellation: cancellation)
            return try Self.perform(request, method: method, target: target, state: state,
                                    configuration: configuration, pool: pool).get()
        }
    }

    private static func isValidHeader(_ header: (name: String, value: String)) -> Bool {
        // Explicit closure types: with GRDB's SQL operators in the module, inference times out.
        let badName = header.name.isEmpty || header.name.utf8.contains { (byte: UInt8) -> Bool in byte <= 0x20 || byte == 0x3a || byte >= 0x7f }
        let badValue = header.value.utf8.contains { (byte: UInt8) -> Bool in byte == 0x0d || byte == 0x0a || byte == 0 }
        return !badName && !badValue
    }

    /// Runs one transfer synchronously on the calling (dedicated) thread.
    private static func perform(_ request: HTTPRequest, method: String, target: HTTPTarget,
                                state: CurlTransferState, configuration: HTTPConfiguration,
                                pool: CurlHandlePool) -> Result<HTTPResponse, HTTPError> {
        if state.isCancelled { return .failure(.cancelled) }
        var caBundle: [UInt8]?
        if let caFile = configuration.caFile {
            switch CABundle.bytes(at: caFile) {
            case .success(let bytes): caBundle = bytes
            case .failure(let error): return .failure(error)
            }
        }
        guard let easy = pool.checkout(target.poolKey) else {
            return .failure(.other(code: Int(CURLE_FAILED_INIT.rawValue), message: "libcurl could not start a transfer"))
        }
        defer { pool.checkin(target.poolKey, easy) }
        let handle = easy.raw

        var headerList: UnsafeMutablePointer<curl_slist>?
        var resolveList: UnsafeMutablePointer<curl_slist>?
        defer {
            curl_slist_free_all(headerList)
            curl_slist_free_all(resolveList)
        }
        for header in request.headers {
            headerList = curl_slist_append(headerList, "\(header.name): \(header.value)")
        }
        // No "Expect: 100-continue" round trip for larger bodies.
        headerList = curl_slist_append(headerList, "Expect:")
        for entry in configuration.resolve {
            resolveList = curl_slist_append(resolveList, entry)
        }
        var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        let body = request.body.isEmpty ? [0] : request.body   // POSTFIELDS needs a valid pointer

        let code: CURLcode = errorBuffer.withUnsafeMutableBufferPointer { errorPointer in
            body.withUnsafeBytes { bodyPointer in
                var setupFailed = CURLE_OK
                func set(_ option: CURLoption, _ value: Int) {
                    let rc = enlog_curl_setopt_long(handle, option, value)
                    if rc != CURLE_OK, setupFailed == CURLE_OK { setupFailed = rc }
                }
                func set(_ option: CURLoption, _ value: UnsafeRawPointer?) {
                    let rc = enlog_curl_setopt_pointer(handle, option, value)
                    if rc != CURLE_OK, setupFailed == CURLE_OK { setupFailed = rc }
                }
                func set(_ option: CURLoption, _ value: String) {
                    let rc = value.withCString { enlog_curl_setopt_pointer(handle, option, $0) }   // libcurl copies strings
                    if rc != CURLE_OK, setupFailed == CURLE_OK { setupFailed = rc }
                }
                func check(_ rc: CURLcode) { if rc != CURLE_OK, setupFailed == CURLE_OK { setupFailed = rc } }

                set(CURLOPT_ERRORBUFFER, UnsafeRawPointer(errorPointer.baseAddress))
                set(CURLOPT_URL, request.url)
                set(CURLOPT_PROTOCOLS_STR, "http,https")
                set(CURLOPT_NOSIGNAL, 1)
                set(CURLOPT_FOLLOWLOCATION, 0)
                set(CURLOPT_SSL_VERIFYPEER, 1)
                set(CURLOPT_SSL_VERIFYHOST, 2)
                if var caBundle {
                    caBundle.withUnsafeMutableBytes { bytes in
                        var blob = curl_blob(data: bytes.baseAddress, len: bytes.count, flags: UInt32(CURL_BLOB_COPY))
                        withUnsafePointer(to: &blob) { set(CURLOPT_CAINFO_BLOB, UnsafeRawPointer($0)) }
                    }
                }
                set(CURLOPT_CONNECTTIMEOUT_MS, configuration.connectTimeout.curlMilliseconds)
                set(CURLOPT_TIMEOUT_MS, configuration.totalTimeout.curlMilliseconds)
                set(CURLOPT_TCP_KEEPALIVE, 1)
                set(CURLOPT_USERAGENT, configuration.userAgent)
                set(CURLOPT_ACCEPT_ENCODING, "")   // whatever libcurl can decode; the size cap applies to decoded bytes
                if target.isLoopback {
                    set(CURLOPT_PROXY, "")   // loopback traffic never goes through a proxy
                }
                set(CURLOPT_HTTPHEADER, UnsafeRawPointer(headerList))
                if resolveList != nil { set(CURLOPT_RESOLVE, UnsafeRawPointer(resolveList)) }
                check(enlog_curl_setopt_off_t(handle, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(state.maxBytes)))

                switch method {
                case "GET" where request.body.isEmpty:
                    set(CURLOPT_HTTPGET, 1)
                case "HEAD" where request.body.isEmpty:
                    set(CURLOPT_NOBODY, 1)
                default:
                    set(CURLOPT_POST, 1)
                    // The body from memory: libcurl writes a small one (< 64 KiB) with the headers
                    // in one send(). It could rewind it and send it again on a new connection after
                    // a reused one died without a reply; unless `rewindableBodies`, the
                    // pre-request callback refuses that second send (see `CurlCallbacks.prerequest`).
                    state.refusesResend = !configuration.rewindableBodies
                    set(CURLOPT_POSTFIELDS, bodyPointer.baseAddress)
                    check(enlog_curl_setopt_off_t(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.body.count)))
                    if method != "POST" { set(CURLOPT_CUSTOMREQUEST, method) }
                }
                // Counts the times the request goes out (once per connection it is sent on).
                check(enlog_curl_setopt_prereq_function(handle, CurlCallbacks.prerequest))
                set(CURLOPT_PREREQDATA, UnsafeRawPointer(state.opaque))
                set(CURLOPT_MAXAGE_CONN, max(1, Int(configuration.maxIdleReuse.components.seconds)))

                check(enlog_curl_setopt_write_function(handle, CurlCallbacks.write))
                set(CURLOPT_WRITEDATA, UnsafeRawPointer(state.opaque))
                check(enlog_curl_setopt_header_function(handle, CurlCallbacks.header))
                set(CURLOPT_HEADERDATA, UnsafeRawPointer(state.opaque))
                check(enlog_curl_setopt_xferinfo_function(handle, CurlCallbacks.progress))
                set(CURLOPT_XFERINFODATA, UnsafeRawPointer(state.opaque))
                set(CURLOPT_NOPROGRESS, 0)

                guard setupFailed == CURLE_OK else { return setupFailed }
                return curl_easy_perform(handle)
            }
        }

        let message = String(nulTerminated: errorBuffer)
        if code != CURLE_OK {
            // The body went out once and libcurl was about to send it again: whatever became of
            // the first copy is unknown, as when a connection dies after a request.
            if state.refusedResend { return .failure(.connectionLost) }
            let error = mapError(code, message: message, target: target, state: state)
            // Sent once already: whatever the later attempt met (even a refused connection),
            // the first copy may have been processed.
            if state.sends > 1, error.meansNotSent { return .failure(.connectionLost) }
            return .failure(error)
        }
        var status = 0
        _ = enlog_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        var ipPointer: UnsafePointer<CChar>?
        _ = enlog_curl_getinfo_string(handle, CURLINFO_PRIMARY_IP, &ipPointer)
        let ip = ipPointer.map { String(cString: $0) }
        return .success(HTTPResponse(status: status, headers: state.headers, body: state.body,
                                     primaryIP: (ip?.isEmpty ?? true) ? nil : ip, resent: state.sends > 1))
    }

    static func mapError(_ code: CURLcode, message: String, target: HTTPTarget,
                         state: CurlTransferState) -> HTTPError {
        let detail = HTTPText.oneLine(message.isEmpty ? String(cString: curl_easy_strerror(code)) : message)
        switch code {
        case CURLE_ABORTED_BY_CALLBACK:
            return .cancelled
        case CURLE_WRITE_ERROR where state.tooLarge, CURLE_FILESIZE_EXCEEDED:
            return .responseTooLarge
        case CURLE_OUT_OF_MEMORY:
            // What libcurl 7.88 returns for a header line over CURL_MAX_HTTP_HEADER (its buffer
            // refuses to grow), not a machine out of memory.
            return .headerTooLarge
        case _ where state.isCancelled:
            return .cancelled
        case CURLE_UNSUPPORTED_PROTOCOL where state.sends > 0:
            // After the request went out, libcurl's word for a reply with no status line (HTTP/0.9)
            // or of an HTTP version it does not know: the URL was fine, the answer is no HTTP.
            return .badReply(detail)
        case CURLE_RECV_ERROR where message.contains("chunked-encoding"):
            // libcurl reports a garbled chunked body as a receive error; the bytes did arrive.
            return .badReply(detail)
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT:
            return .invalidURL(HTTPURLPolicy.describe("\(target.scheme)://\(target.host)"))
        case CURLE_COULDNT_RESOLVE_HOST:
            return .couldNotResolveHost(target.host)
        case CURLE_COULDNT_CONNECT:
            return .couldNotConnect("\(target.host):\(target.port)")
        case CURLE_OPERATION_TIMEDOUT:
            return .timedOut
        case CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE,
             CURLE_HTTP2, CURLE_HTTP2_STREAM, CURLE_SEND_FAIL_REWIND:
            return .connectionLost
        // The server answered something that is no usable HTTP (`Content-Encoding: gzip, gzip`
        // is CURLE_BAD_CONTENT_ENCODING): a protocol error, not a service out of reach.
        case CURLE_WEIRD_SERVER_REPLY, CURLE_BAD_CONTENT_ENCODING, CURLE_TOO_MANY_REDIRECTS:
            return .badReply(detail)
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM,
             CURLE_SSL_CIPHER, CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED,
             CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_SHUTDOWN_FAILED,
             CURLE_SSL_CRL_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
             CURLE_SSL_INVALIDCERTSTATUS, CURLE_USE_SSL_FAILED, CURLE_SSL_CLIENTCERT:
            return .tls(detail)
        default:
            return .other(code: Int(code.rawValue), message: detail)
        }
    }

    /// For tests: idle pooled handles and easy handles created so far.
    var poolStatistics: (idle: Int, created: Int) { pool.statistics }
}

extension HTTPError {
    /// Failures that mean the request never left (nothing to resolve, name or TLS refused).
    var meansNotSent: Bool {
        switch self {
        case .couldNotResolveHost, .couldNotConnect, .tls, .insecureURL, .invalidURL, .caFileUnusable: return true
        case .timedOut, .connectionLost, .responseTooLarge, .headerTooLarge, .badReply, .cancelled, .other: return false
        }
    }
}
