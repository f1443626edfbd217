import CCurl
import CCurlShim

import Foundation

/// `curl_global_init` exactly once per process (a Swift static is initialised once, thread-safely).
enum CurlGlobal {
    static let initialized: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK
}

/// A libcurl easy handle. Only ever used by one transfer at a time (the pool hands it out).
struct CurlEasy: @unchecked Sendable {
    let raw: UnsafeMutableRawPointer
}

/// Idle keep-alive easy handles, at most one per scheme+host+port and `capacity` in all
/// (least recently used evicted). A handle in use is owned by its transfer, not by the pool.
final class CurlHandlePool: @unchecked Sendable {
    private let lock = NSLock()
    private var idle: [String: CurlEasy] = [:]
    private var order: [String] = []   // least recently used first
    private let capacity: Int
    private var created = 0

    init(capacity: Int = 8) {
        self.capacity = max(1, capacity)
    }

    deinit {
        for handle in idle.values { curl_easy_cleanup(handle.raw) }
    }

    /// An idle handle for `key`, reset to defaults (its connection cache survives the reset), or a new one.
    func checkout(_ key: String) -> CurlEasy? {
        lock.lock()
        let reused = idle.removeValue(forKey: key)
        if reused != nil { order.removeAll { $0 == key } } else { created += 1 }
        lock.unlock()
        if let reused {
            curl_easy_reset(reused.raw)
            return reused
        }
        guard CurlGlobal.initialized, let raw = curl_easy_init() else { return nil }
        return CurlEasy(raw: raw)
    }

    func checkin(_ key: String, _ handle: CurlEasy) {
        var discard: [CurlEasy] = []
        lock.lock()
        if idle[key] != nil {
            discard.append(handle)
        } else {
            idle[key] = handle
            order.append(key)
            while order.count > capacity {
                let oldest = order.removeFirst()
                if let evicted = idle.removeValue(forKey: oldest) { discard.append(evicted) }
            }
        }
        lock.unlock()
        for handle in discard { curl_easy_cleanup(handle.raw) }
    }

    /// For tests: idle handles now, and easy handles created so far.
    var statistics: (idle: Int, created: Int) {
        lock.lock(); defer { lock.unlock() }
        return (idle.count, created)
    }
}

/// Per-transfer state the C callbacks reach through their userdata pointer.
final class CurlTransferState: @unchecked Sendable {
    let maxBytes: Int
    let checkContentLength: Bool
    var body: [UInt8] = []
    var headers: [String: String] = [:]
    var tooLarge = false
    private let lock = NSLock()
    private var cancelledFlag = false

    init(maxBytes: Int, checkContentLength: Bool) {
        self.maxBytes = maxBytes
        self.checkContentLength = checkContentLength
    }

    func cancel() {
        lock.lock(); cancelledFlag = true; lock.unlock()
    }

    var isCancelled: Bool {
        lock.lock(); defer { lock.unlock() }
        return cancelledFlag
    }

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
        let line = String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
        if line.hasPrefix("HTTP/") {
            state.headers.removeAll()   // a new response (after 1xx, or a proxy's CONNECT reply)
            return length
        }
        guard let colon = line.firstIndex(of: ":") else { return length }
        let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
        let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty else { return length }
        state.headers[name] = value
        if state.checkContentLength, name == "content-length", let declared = Int(value), declared > state.maxBytes {
            state.tooLarge = true
            return 0
        }
        return length
    }

    static let progress: @convention(c) (UnsafeMutableRawPointer?, curl_off_t, curl_off_t, curl_off_t, curl_off_t) -> Int32 = {
        userdata, _, _, _, _ in
        CurlTransferState.from(userdata).isCancelled ? 1 : 0
    }
}

extension Duration {
    /// Whole milliseconds, at least 1 (0 means "no timeout" to libcurl).
    var curlMilliseconds: Int {
        let (seconds, attoseconds) = components
        let ms = seconds.multipliedReportingOverflow(by: 1000)
        if ms.overflow || seconds < 0 { return seconds < 0 ? 1 : Int.max }
        return max(1, Int(ms.partialValue + attoseconds / 1_000_000_000_000_000))
    }
}
