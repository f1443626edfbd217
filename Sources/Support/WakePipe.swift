#if canImport(Glibc)
import Glibc
#endif

/// A pipe whose read end a blocked `poll()` watches, so that another thread can wake it.
package final class WakePipe: Sendable {
    package let readEnd: Int32
    let writeEnd: Int32

    /// nil when the pipe cannot be created (`errno` says why).
    package init?() {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { return nil }
        readEnd = fds[0]
        writeEnd = fds[1]
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    package func signal() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }
}
