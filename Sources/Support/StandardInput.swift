import Foundation
import Synchronization

/// Standard input as it was when enlog started. A program started with fd 0 closed (`<&-`)
/// would otherwise hand fd 0 to the first file or socket it opens, and a later read of
/// "standard input" would read that instead; so fd 0 is taken by /dev/null at once, and
/// readers of standard input ask `wasClosed`.
package enum StandardInput {
    private static let closedAtStart = Atomic<Bool>(false)

    /// Call first thing in `main`, before anything opens a file.
    package static func holdIfClosed() {
        guard fcntl(STDIN_FILENO, F_GETFD) == -1, errno == EBADF else { return }
        closedAtStart.store(true, ordering: .relaxed)
        _ = open("/dev/null", O_RDONLY)   // the lowest free descriptor: 0
    }

    package static var wasClosed: Bool { closedAtStart.load(ordering: .relaxed) }
}
