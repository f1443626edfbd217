import Foundation
import Synchronization

/// Files removed when the process is ended by SIGINT, SIGTERM or SIGHUP: a temporary file that
/// would otherwise stay behind (an interrupted export's, up to hundreds of megabytes).
///
/// The handler only unlinks (async-signal-safe) the paths registered, then lets the signal end
/// the process as it would have (its default action, so the exit status still tells the
/// signal). Signals whose disposition is not the default (ignored under `nohup`, caught by
/// `watch`) are left alone. The paths are C strings in fixed slots, read with atomic loads:
/// the handler touches no Swift runtime state.
package enum SignalCleanup {
    private static let slotCount = 8
    /// Each slot holds the bit pattern of a `strdup`'d path, or 0; allocated once, never freed.
    nonisolated(unsafe) private static let storage = UnsafeMutablePointer<Atomic<UInt>>.allocate(capacity: slotCount)
    private static let prepared: Bool = {
        for index in 0..<slotCount { (storage + index).initialize(to: Atomic<UInt>(0)) }
        for signal in [SIGINT, SIGTERM, SIGHUP] {
            var current = sigaction()
            guard sigaction(signal, nil, &current) == 0,
                  unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self) == unsafeBitCast(SIG_DFL, to: Int.self)
            else { continue }
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { signal in
                for index in 0..<SignalCleanup.slotCount {
                    let bits = (SignalCleanup.storage + index).pointee.load(ordering: .acquiring)
                    if bits != 0, let path = UnsafePointer<CChar>(bitPattern: bits) { unlink(path) }
                }
                // SA_RESETHAND made the disposition the default again: the signal ends the
                // process once this handler returns.
                raise(signal)
            }
            action.sa_flags = Int32(truncatingIfNeeded: SA_RESETHAND)
            sigemptyset(&action.sa_mask)
            sigaction(signal, &action, nil)
        }
        return true
    }()

    /// A path removed if a signal ends the process before `release()`.
    package struct Registration: ~Copyable, Sendable {
        fileprivate let slot: Int?

        /// The path is no longer to be removed (renamed into place, or removed already).
        package consuming func release() {
            guard let slot else { return }
            let bits = (SignalCleanup.storage + slot).pointee.exchange(0, ordering: .acquiringAndReleasing)
            free(UnsafeMutableRawPointer(bitPattern: bits))
        }
    }

    /// Registers `path`; when every slot is taken it is not registered (the caller's stale
    /// cleanup still finds it later).
    package static func removeOnSignal(_ path: String) -> Registration {
        _ = prepared
        guard let copy = strdup(path) else { return Registration(slot: nil) }
        let bits = UInt(bitPattern: copy)
        for index in 0..<slotCount where (storage + index).pointee.compareExchange(expected: 0, desired: bits, ordering: .acquiringAndReleasing).exchanged {
            return Registration(slot: index)
        }
        free(copy)
        return Registration(slot: nil)
    }
}
