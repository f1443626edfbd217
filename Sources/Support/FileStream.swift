import Foundation

/// A file read a chunk at a time, for input of any size (`enlog import`): the memory is one
/// chunk, not the file. Opened as `FileBytes` opens files. A pipe or FIFO is read within
/// `InputDeadline` as a whole until the reader knows what it is reading (`knowsWhatItReads()`:
/// a FIFO nobody writes, or one written a byte a second, ends in an error instead of holding
/// enlog for ever), then with that bound on each wait, so a long stream can go on as long as it
/// flows. A device is refused (`/dev/zero` and `/dev/urandom` never end, and no device holds a
/// location history).
package final class FileStream {
    package let size: Int?
    private let descriptor: Int32
    private let regular: Bool
    package private(set) var offset = 0
    /// Until the reader knows the input: the bound on all reads so far.
    private var startDeadline: ContinuousClock.Instant?

    package init(pathBytes path: [UInt8]) throws(FileBytes.ReadError) {
        let (descriptor, status) = try FileBytes.openForReading(pathBytes: path)
        let kind = status.st_mode & S_IFMT
        guard kind == S_IFREG || kind == S_IFIFO || kind == S_IFSOCK else {
            close(descriptor)
            throw .notReadable("not a regular file (\(FileBytes.describe(kind)))")
        }
        self.descriptor = descriptor
        regular = kind == S_IFREG
        size = regular ? Int(status.st_size) : nil
        startDeadline = regular ? nil : ContinuousClock.now + InputDeadline.current
    }

    /// The start of the input has been read and told apart: from now on each wait is bounded,
    /// not the whole.
    package func knowsWhatItReads() {
        startDeadline = nil
    }

    deinit { close(descriptor) }

    /// Up to `count` next bytes; empty at the end of the file.
    package func read(upTo count: Int) throws(FileBytes.ReadError) -> [UInt8] {
        var chunk = [UInt8](repeating: 0, count: count)
        while true {
            if !regular { try FileBytes.waitUntilReadable(descriptor, deadline: startDeadline ?? ContinuousClock.now + InputDeadline.current) }
            let read = chunk.withUnsafeMutableBytes { Foundation.read(descriptor, $0.baseAddress, count) }
            if read < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw .system(errno)
            }
            offset += read
            chunk.removeSubrange(read...)
            return chunk
        }
    }
}
