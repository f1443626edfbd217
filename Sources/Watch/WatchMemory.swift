import CMalloc
import Support
import Outbox

/// `watch` runs for months: what a big piece of work (a day's digest: the day's fixes several
/// times over, its GPX text, tens of MB for a day at 1 Hz) allocated must go back to the system
/// when it is done, or the process stays at the size of its biggest day.
extension Watcher {
    /// glibc raises its mmap threshold to the size of each large block freed (up to 32 MB), and
    /// its trim threshold to twice that, so after a digest the next large arrays come from the
    /// heap and the freed top of the heap is never given back (bench/watch memory: 55 MB more
    /// after a digest, for good). A fixed threshold keeps large blocks in their own mappings,
    /// unmapped when freed.
    static func keepLargeBlocksMapped() {
        _ = mallopt(M_MMAP_THRESHOLD, 128 * 1024)
    }
}

extension Watcher.Loop {
    /// After a digest: the outbox connections' page caches and idle readers (filled by reading
    /// the day), and what glibc holds free in its arenas.
    func returnFreedMemory() async {
        await watcher.outbox.releaseMemory()
        _ = malloc_trim(0)
    }
}
