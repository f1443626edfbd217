import CCurl
import CCurlShim

import Foundation
import Synchronization
import Support
import EvernoteAPI
import Configuration

/// `curl_global_init` exactly once per process (a Swift static is initialised once, thread-safely).
enum CurlGlobal {
    static let initialized: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK
}

/// A libcurl easy handle. Only ever used by one transfer at a time (the pool hands it out).
/// `@unchecked`: it wraps a C pointer; ownership passes between the pool and one transfer thread.
struct CurlEasy: @unchecked Sendable {
    let raw: UnsafeMutableRawPointer
}

/// Idle keep-alive easy handles, at most one per scheme+host+port and `capacity` in all
/// (least recently used evicted). A handle in use is owned by its transfer, not by the pool.
final class CurlHandlePool: Sendable {
    private struct State {
        var idle: [String: CurlEasy] = [:]
        var order: [String] = []   // least recently used first
        var created = 0
    }

    private let state = Mutex(State())
    private let capacity: Int

    init(capacity: Int = 8) {
        self.capacity = max(1, capacity)
    }

    deinit {
        for handle in state.withLock({ Array($0.idle.values) }) { curl_easy_cleanup(handle.raw) }
    }

    /// An idle handle for `key`, reset to defaults (its connection cache survives the reset), or a new one.
    func checkout(_ key: String) -> CurlEasy? {
        let reused = state.withLock { state -> CurlEasy? in
            let reused = state.idle.removeValue(forKey: key)
            if reused != nil { state.order.removeAll { $0 == key } } else { state.created += 1 }
            return reused
        }
        if let reused {
            curl_easy_reset(reused.raw)
            return reused
        }
        guard CurlGlobal.initialized, let raw = curl_easy_init() else { return nil }
        return CurlEasy(raw: raw)
    }

    func checkin(_ key: String, _ handle: CurlEasy) {
        let capacity = self.capacity
        let discard = state.withLock { state -> [CurlEasy] in
            if state.idle[key] != nil { return [handle] }
            var discard: [CurlEasy] = []
            state.idle[key] = handle
            state.order.append(key)
            while state.order.count > capacity {
                let oldest = state.order.removeFirst()
                if let evicted = state.idle.removeValue(forKey: oldest) { discard.append(evicted) }
            }
            return discard
        }
        for handle in discard { curl_easy_cleanup(handle.raw) }
    }

    /// For tests: idle handles now, and easy handles created so far.
    var statistics: (idle: Int, created: Int) {
        state.withLock { ($0.idle.count, $0.created) }
    }
}

/// Per-transfer state the C callbacks reach through their userdata pointer. Created and used on
/// the transfer's own thread only; `cancellation` is the one part other threads touch.
final class CurlTransferState {
    let maxBytes: Int
    let checkContentLength: Bool
    let cancellation: CancellationFlag
    var body: [UInt8] = []
    var headers: [String: String] = [:]
    var tooLarge = false
    /// How many times the request went out (CURLOPT_PREREQFUNCTION runs once per send).
    var sends = 0
    /// A request with a body goes out at most once: the pre-request callback aborts a second send.
    var refusesResend = false
    /// The pre-request callback aborted a second send (the transfer fails; the first copy may
    /// have been processed).
    var refusedResend = false

    init(maxBytes: Int, checkContentLength: Bool, cancellation: CancellationFlag) {
        self.maxBytes = maxBytes
        self.checkContentLength = checkContentLength
        self.cancellation = cancellation
    }

    var isCancelled: Bool { cancellation.isCancelled }

    var opaque: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    static func from(_ pointer: UnsafeMutableRawPointer?) -> CurlTransferState {
        Unmanaged<CurlTransferState>.fromOpaque(pointer!).takeUnretainedValue()
    }
}

enum CurlCallbacks {
    static let write: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
        data, size, count, userdata in
        let state = CurlTransferState.from(userdata)
        let length = size * count
        guard length > 0, let data else { return length }
        if state.body.count + length > state.maxBytes {
            state.tooLarge = true
            return 0   // anything but `length` stops the transfer (CURLE_WRITE_ERROR)
        }
        state.body.append(contentsOf: UnsafeRawBufferPointer(start: data, count: length))
        return length
    }

    static let header: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
        data, size, count, userdata in
        let state = CurlTransferState.from(userdata)
        let length = size * count
        guard length > 0, let data else { return length }
        // Bytes, not Foundation strings: this runs for every header line of every reply.
        let line = UnsafeRawBufferPointer(start: data, count: length)
        if line.starts(with: "HTTP/".utf8) {
            state.headers.removeAll()   // a new response (after 1xx, or a proxy's CONNECT reply)
            return length
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return length }
        let name = String(decoding: HTTPText.trimmed(line[..<colon]).lazy.map(HTTPText.asciiLowercased), as: UTF8.self)
        let value = String(decoding: HTTPText.trimmed(line[(colon + 1)...]), as: UTF8.self)
        guard !name.isEmpty else { return length }
        state.headers[name] = value
        if state.checkContentLength, name == "content-length", let declared = Int(value), declared > state.maxBytes {
            state.tooLarge = true
            return 0
        }
        return length
    }

    static let prerequest: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<CChar>?,
                                           UnsafeMutablePointer<CChar>?, Int32, Int32) -> Int32 = {
        userdata, _, _, _, _ in
        let state = CurlTransferState.from(userdata)
        state.sends += 1
        // libcurl is about to send the request on a new connection after the one it was sent on
        // died without a reply byte (it does so for a reused connection, body rewound). The
        // server may hold the first copy: abort rather than send a duplicate createNote.
        if state.sends > 1, state.refusesResend {
            state.refusedResend = true
            return 1   // CURL_PREREQFUNC_ABORT: the transfer fails with CURLE_ABORTED_BY_CALLBACK
        }
        return 0   // CURL_PREREQFUNC_OK
    }

    static let progress: @convention(c) (UnsafeMutableRawPointer?, curl_off_t, curl_off_t, curl_off_t, curl_off_t) -> Int32 = {
        userdata, _, _, _, _ in
        CurlTransferState.from(userdata).isCancelled ? 1 : 0
    }
}

extension Duration {
    /// Whole milliseconds, at least 1 (0 means "no timeout" to libcurl).
    package var curlMilliseconds: Int {
        let (seconds, attoseconds) = components
        let ms = seconds.multipliedReportingOverflow(by: 1000)
        if ms.overflow || seconds < 0 { return seconds < 0 ? 1 : Int.max }
        return max(1, Int(ms.partialValue + attoseconds / 1_000_000_000_000_000))
    }
}
