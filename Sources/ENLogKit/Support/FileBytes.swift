import Foundation

/// Whole-file reads with the operating system's own reason on failure ("Permission denied"),
/// which is what a user needs to fix the problem.
enum FileBytes {
    struct ReadError: Error {
        var reason: String
    }

    static func read(_ path: String) throws -> [UInt8] {
        try read(pathBytes: Array(path.utf8))
    }

    /// A path as the file system spells it, which need not be UTF-8.
    static func read(pathBytes path: [UInt8]) throws -> [UInt8] {
        guard !path.contains(0) else { throw ReadError(reason: "the path holds a NUL byte") }
        let descriptor = (path + [0]).withUnsafeBufferPointer { open(UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), O_RDONLY | O_CLOEXEC) }
        guard descriptor >= 0 else { throw ReadError(reason: String(cString: strerror(errno))) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw ReadError(reason: String(cString: strerror(errno))) }
        if (status.st_mode & S_IFMT) == S_IFDIR { throw ReadError(reason: "Is a directory") }
        var bytes = [UInt8]()
        bytes.reserveCapacity(Int(status.st_size))
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
}
