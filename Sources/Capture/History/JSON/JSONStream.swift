import Foundation
import CYAJL

/// Where a JSON value sits: for each container around it, the key it has in that object (an id
/// from the reader's `JSONKeyTable`, `JSONKeyTable.unknown` for any other key) or
/// `JSONPath.element` inside an array. A view into the stream's stack, valid during one callback.
package struct JSONPath {
    package static let element: Int32 = -2
    let keys: UnsafePointer<Int32>
    package let count: Int

    package subscript(index: Int) -> Int32 { keys[index] }
    package var last: Int32 { count > 0 ? keys[count - 1] : JSONKeyTable.unknown }
    /// The key `back` containers out from the value (0 = the key of the value itself).
    package func key(back: Int) -> Int32 { count > back ? keys[count - 1 - back] : JSONKeyTable.unknown }
}

/// The keys one reader cares about, numbered in the order given. Keys are compared as bytes so no
/// key of a multi-gigabyte file ever becomes a `String`; the table is flat memory, written once, so
/// a lookup touches no reference count.
/// `@unchecked`: its buffers are raw pointers, written only in `init` and read-only after it, so
/// the import's reader threads may share one table.
package final class JSONKeyTable: @unchecked Sendable {
    package static let unknown: Int32 = -1
    /// All keys' bytes, one after another.
    private let bytes: UnsafeMutableBufferPointer<UInt8>
    /// Per key length, the first entry in `entries`; entries of one length are contiguous.
    private let firstEntry: UnsafeMutableBufferPointer<Int>
    /// (offset of the key's bytes, id), sorted by key length.
    private let entries: UnsafeMutableBufferPointer<(offset: Int, id: Int32)>

    package init(_ names: [String]) {
        let longest = names.map(\.utf8.count).max() ?? 0
        let sorted = names.enumerated().sorted { ($0.element.utf8.count, $0.offset) < ($1.element.utf8.count, $1.offset) }
        bytes = .allocate(capacity: max(1, names.reduce(0) { $0 + $1.utf8.count }))
        firstEntry = .allocate(capacity: longest + 2)
        entries = .allocate(capacity: max(1, names.count))
        var offset = 0
        var length = 0
        firstEntry[0] = 0
        for (index, entry) in sorted.enumerated() {
            while length < entry.element.utf8.count { length += 1; firstEntry[length] = index }
            entries[index] = (offset, Int32(entry.offset))
            for byte in entry.element.utf8 { bytes[offset] = byte; offset += 1 }
        }
        while length <= longest { length += 1; firstEntry[length] = sorted.count }
    }

    deinit {
        bytes.deallocate()
        firstEntry.deallocate()
        entries.deallocate()
    }

    package func id(of key: UnsafeRawBufferPointer) -> Int32 {
        let count = key.count
        guard count > 0, count + 1 < firstEntry.count else { return Self.unknown }
        var index = firstEntry[count]
        let end = firstEntry[count + 1]
        // Keys are a few bytes: compared here, byte by byte, rather than by a call to `memcmp`
        // per candidate (that call was a seventh of the reading thread's CPU in `perf` of a Records.json).
        let given = key.baseAddress!.assumingMemoryBound(to: UInt8.self)
        while index < end {
            let entry = entries[index]
            let known = bytes.baseAddress! + entry.offset
            var at = 0
            while at < count, known[at] == given[at] { at += 1 }
            if at == count { return entry.id }
            index += 1
        }
        return Self.unknown
    }
}

/// A scalar as the file wrote it: a string's bytes (escapes already decoded, UTF-8 checked) or a
/// number's text, so E7 integers, millisecond times and quoted numbers are all read one way.
package struct JSONScalar {
    package enum Kind { case string, number, bool, null }
    package let kind: Kind
    package let bytes: UnsafeRawBufferPointer
    package let bool: Bool
}

/// What a reader does with the events of one file, in order. Throwing stops the parse.
package protocol JSONEventHandler: AnyObject {
    func start(_ path: JSONPath, array: Bool) throws(HistoryFileError)
    func end(_ path: JSONPath, array: Bool) throws(HistoryFileError)
    func scalar(_ path: JSONPath, _ value: JSONScalar) throws(HistoryFileError)
}

/// One JSON document read as a stream on yajl's push parser: fed chunk by chunk, it calls its
/// handler with each value's path. Hostile input is bounded: nesting deeper than `maxDepth`, or one
/// token (a string, a number) longer than `maxToken` bytes, stops it with a `HistoryFileError` at
/// the byte offset, as does invalid JSON, invalid UTF-8 or a file that ends inside a value.
package final class JSONStream {
    package static let maxDepth = 512
    package static let maxToken = 1 << 20
    /// yajl is given at most this much at a time, so a token that never ends is noticed early.
    static let slice = 64 << 10

    let keys: JSONKeyTable
    let handler: any JSONEventHandler
    private var handle: yajl_handle?
    private let stack: UnsafeMutablePointer<Int32>
    private var depth = 0
    private var fed = 0
    /// Bytes fed since the slice in which the last event came: yajl holds an unfinished token.
    private var quiet = 0
    private var sawEvent = false
    private var failure: HistoryFileError?
    /// A UTF-8 byte order mark is dropped; bytes of a possible one are held until it is sure.
    private var bomHeld: [UInt8] = []
    private var bomDecided = false

    package init(keys: JSONKeyTable, handler: any JSONEventHandler) {
        self.keys = keys
        self.handler = handler
        stack = .allocate(capacity: Self.maxDepth + 1)
        handle = yajl_alloc(jsonCallbacks, nil, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        if let handle { yajl_free(handle) }
        stack.deallocate()
    }

    /// Feeds the next bytes of the file; `drain` runs after each slice so the handler's output
    /// never grows with the chunk.
    package func feed(_ chunk: ArraySlice<UInt8>, drain: () throws -> Void) throws {
        var chunk = chunk
        if !bomDecided {
            let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
            while !chunk.isEmpty, bomHeld.count < 3, chunk.first == bom[bomHeld.count] {
                bomHeld.append(chunk.removeFirst())
            }
            if bomHeld.count == 3 {
                bomDecided = true
                fed = 3
            } else if !chunk.isEmpty {
                bomDecided = true
                let held = bomHeld
                bomHeld = []
                try parse(held[...], drain: drain)
            } else {
                return
            }
        }
        try parse(chunk, drain: drain)
    }

    /// Says the file ended: a document left open is a truncated file.
    package func finish(drain: () throws -> Void) throws {
        if !bomHeld.isEmpty && !bomDecided {
            let held = bomHeld
            bomHeld = []
            bomDecided = true
            try parse(held[...], drain: drain)
        }
        guard let handle else { throw failure ?? HistoryFileError("the JSON parser stopped", at: .byte(fed)) }
        let status = yajl_complete_parse(handle)
        try drain()
        try check(status, base: fed, length: 0)
    }

    private func parse(_ bytes: ArraySlice<UInt8>, drain: () throws -> Void) throws {
        guard let handle else { throw failure ?? HistoryFileError("the JSON parser stopped", at: .byte(fed)) }
        var start = bytes.startIndex
        while start < bytes.endIndex {
            let end = min(start + Self.slice, bytes.endIndex)
            sawEvent = false
            let status = bytes[start..<end].withUnsafeBufferPointer { yajl_parse(handle, $0.baseAddress, $0.count) }
            try check(status, base: fed, length: end - start)
            fed += end - start
            quiet = sawEvent ? 0 : quiet + (end - start)
            if quiet > Self.maxToken {
                throw stop(HistoryFileError("a JSON string or number longer than \(Self.maxToken >> 20) MiB", at: .byte(fed)))
            }
            try drain()
            start = end
        }
    }

    private func check(_ status: yajl_status, base: Int, length: Int) throws {
        guard status != yajl_status_ok, let handle else { return }
        let consumed = min(Int(yajl_get_bytes_consumed(handle)), length)
        if var failure {
            // A callback stopped the parse (too deep, or the handler refused a value) and could
            // not know where: yajl has consumed up to the end of the token that called it, in
            // this slice, so the place is that token's last byte, not the slice's start.
            if failure.place == .wholeFile { failure.place = .byte(base + max(consumed - 1, 0)) }
            throw stop(failure)
        }
        let place = HistoryFileError.Place.byte(base + consumed)
        let message: String
        if length == 0 {
            message = "the file ends inside the JSON document (truncated)"
        } else if let text = yajl_get_error(handle, 0, nil, 0) {
            message = "not valid JSON: " + String(cString: text).replacingOccurrences(of: "parse error: ", with: "")
                .trimmingCharacters(in: .whitespacesAndNewlines)
            yajl_free_error(handle, text)
        } else {
            message = "not valid JSON"
        }
        throw stop(HistoryFileError(message, at: place))
    }

    private func stop(_ error: HistoryFileError) -> HistoryFileError {
        failure = error
        if let handle { yajl_free(handle) }
        handle = nil
        return error
    }

    // MARK: events from yajl (1 = go on, 0 = stop)

    fileprivate func startContainer(array: Bool) -> Int32 {
        sawEvent = true
        guard depth < Self.maxDepth else {
            // The place is filled in by `check`, which knows how far yajl got in the slice.
            failure = HistoryFileError("JSON nested deeper than \(Self.maxDepth) levels")
            return 0
        }
        do {
            try handler.start(JSONPath(keys: stack, count: depth), array: array)
        } catch {
            failure = error
            return 0
        }
        stack[depth] = array ? JSONPath.element : JSONKeyTable.unknown
        depth += 1
        return 1
    }

    fileprivate func endContainer(array: Bool) -> Int32 {
        sawEvent = true
        depth -= 1
        do {
            try handler.end(JSONPath(keys: stack, count: depth), array: array)
        } catch {
            failure = error
            return 0
        }
        return 1
    }

    fileprivate func key(_ bytes: UnsafeRawBufferPointer) -> Int32 {
        sawEvent = true
        stack[depth - 1] = keys.id(of: bytes)
        return 1
    }

    fileprivate func scalar(_ kind: JSONScalar.Kind, _ bytes: UnsafeRawBufferPointer, bool: Bool = false) -> Int32 {
        sawEvent = true
        do {
            try handler.scalar(JSONPath(keys: stack, count: depth), JSONScalar(kind: kind, bytes: bytes, bool: bool))
        } catch {
            failure = error
            return 0
        }
        return 1
    }
}

/// The stream a callback is for, borrowed for the call: no reference counting per event.
private func stream(_ context: UnsafeMutableRawPointer?, _ body: (JSONStream) -> Int32) -> Int32 {
    Unmanaged<JSONStream>.fromOpaque(context!)._withUnsafeGuaranteedRef(body)
}

private var emptyBytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: nil, count: 0) }

/// yajl keeps a pointer to its callbacks for the life of each handle: one table for all.
nonisolated(unsafe) private let jsonCallbacks: UnsafeMutablePointer<yajl_callbacks> = {
    let table = UnsafeMutablePointer<yajl_callbacks>.allocate(capacity: 1)
    table.initialize(to: yajl_callbacks(
        yajl_null: { stream($0) { $0.scalar(.null, emptyBytes) } },
        yajl_boolean: { value, flag in stream(value) { $0.scalar(.bool, emptyBytes, bool: flag != 0) } },
        yajl_integer: nil,
        yajl_double: nil,
        yajl_number: { context, text, length in
            stream(context) { $0.scalar(.number, UnsafeRawBufferPointer(start: text, count: length)) } },
        yajl_string: { context, text, length in
            stream(context) { $0.scalar(.string, UnsafeRawBufferPointer(start: text, count: length)) } },
        yajl_start_map: { stream($0) { $0.startContainer(array: false) } },
        yajl_map_key: { context, text, length in
            stream(context) { $0.key(UnsafeRawBufferPointer(start: text, count: length)) } },
        yajl_end_map: { stream($0) { $0.endContainer(array: false) } },
        yajl_start_array: { stream($0) { $0.startContainer(array: true) } },
        yajl_end_array: { stream($0) { $0.endContainer(array: true) } }))
    return table
}()
