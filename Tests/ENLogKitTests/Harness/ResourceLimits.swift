import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Lowers this process's soft limit of `resource` to `value` (an unprivileged process may): what
/// a child process that runs a possibly endless computation does first, with `RLIMIT_CPU` (the
/// kernel sends SIGXCPU past that many seconds of CPU time, however loaded the machine is) and
/// `RLIMIT_CORE` 0 (no core file of the test binary when it does). False when it cannot.
func lowerSoftLimit(_ resource: __rlimit_resource, to value: Int) -> Bool {
    var limit = rlimit()
    guard getrlimit(__rlimit_resource_t(resource.rawValue), &limit) == 0 else { return false }
    limit.rlim_cur = min(limit.rlim_max, rlim_t(value))
    return setrlimit(__rlimit_resource_t(resource.rawValue), &limit) == 0
}
