import Foundation

/// Whole-file reads with the operating system's own reason on failure ("Permission denied"),
/// which is what a user needs to fix the problem.
package enum FileBytes {
    package struct ReadError: Error {
        package var reason: String
    }

    package static func read(_ path: String) throws -> [UInt8] {
        try read(pathBytes: Array(path.utf8))
    }

    /// A path as the file system spells it, which need not be UTF-8.
    package static func read(pathBytes path: [UInt8]) throws -> [UInt8] {
        guard !path.contains(0) else { throw ReadError(reason: "the path holds a NUL byte") }
        let descriptor = (path + [0]).withUnsafeBufferPointer { open(UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), O_RDONLY | O_CLOEXEC) }
        guard descriptor >= 0 else { throw ReadError(reason: String(cString: strerror(errno))) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw ReadError(reason: String(cString: strerror(errno))) }
        if (status.st_mode & S_IFMT) == S_IFDIR { throw ReadError(reason: "Is a directory") }
        return try readAll(descriptor, sizeHint: Int(status.st_size))
    }

    /// Everything left to read from an open descriptor (a file, standard input), to its end.
    package static func readAll(_ descriptor: Int32, sizeHint: Int = 0) throws(ReadError) -> [UInt8] {
        var bytes = [UInt8]()
        bytes.reserveCapacity(sizeHint)
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { Foundation.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw ReadError(reason: String(cString: strerror(errno)))
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<count])
        }
    }

    /// A whole file as UTF-8 text. Decoding leniently would turn a Latin-1 "é" into U+FFFD in
    /// every note, so a file in another encoding is an error naming its first bad byte.
    package static func readText(_ path: String) throws(ReadError) -> String {
        let bytes: [UInt8]
        do {
            bytes = try read(path)
        } catch {
            throw (error as? ReadError) ?? ReadError(reason: "\(error)")
        }
        return try utf8Text(bytes)
    }

    package static func utf8Text(_ bytes: [UInt8]) throws(ReadError) -> String {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            let offset = firstInvalidUTF8Offset(bytes)
            throw ReadError(reason: "not UTF-8 text (byte 0x\(String(format: "%02X", bytes[offset])) at offset \(offset); save it as UTF-8)")
        }
        return text
    }

    /// Where UTF-8 decoding of `bytes` first fails (the start of the first bad sequence).
    static func firstInvalidUTF8Offset(_ bytes: [UInt8]) -> Int {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        var offset = 0
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): offset += UTF8.width(scalar)
            case .emptyInput, .error: return min(offset, max(bytes.count - 1, 0))
            }
        }
    }
}
