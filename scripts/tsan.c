// What the ThreadSanitizer build (scripts/tsan) links into the test runner and `enlog`, and no
// other build: scripts/tsan's options as every process's defaults, and the one hand-over of
// Swift's `Synchronization.Mutex` ThreadSanitizer cannot see by itself.
//
// On Linux a Mutex is a futex word. Its fast paths are inlined into enlog's code (an acquiring
// compare-and-swap to lock, a releasing one to unlock), so ThreadSanitizer instruments them and
// sees the lock. Under contention they call `_MutexHandle._lockSlow`, `_tryLockSlow` and
// `_unlockSlow` in libswiftSynchronization.so, which is not instrumented: the lock passes from
// holder to waiter inside the kernel (FUTEX_LOCK_PI / FUTEX_UNLOCK_PI). ThreadSanitizer then
// sees two threads touch the guarded value with nothing ordering them and reports a data race
// that is none (measured with Swift 6.3.1: 4 threads appending to a Mutex<[Int]> get one report
// per run without this file, none with it; the same appends without the Mutex are still reported).
//
// These definitions take the place of the library's three functions for calls from the
// executable they are linked into, call the library's own, and add the edge the kernel made:
// a release on the mutex's address before the unlock, an acquire after the lock is held. They
// hide no access: a value touched outside its lock is reported as before.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

void __tsan_acquire(void *address);
void __tsan_release(void *address);

#define LOCK_SLOW "$s15Synchronization12_MutexHandleV9_lockSlowyys6UInt32VF"
#define TRY_LOCK_SLOW "$s15Synchronization12_MutexHandleV12_tryLockSlowSbyF"
#define UNLOCK_SLOW "$s15Synchronization12_MutexHandleV11_unlockSlowyyF"

// Swift's calling convention: the borrowed `_MutexHandle` (its futex word's address) comes as
// `self`, which clang spells swift_context.
#define SWIFTCALL __attribute__((swiftcall))
#define HANDLE __attribute__((swift_context)) void *

/// The library's own function; a toolchain that renamed it stops the run rather than letting
/// every contended lock pass unannotated.
static void *library_function(void **cached, const char *name) {
    void *function = __atomic_load_n(cached, __ATOMIC_ACQUIRE);
    if (function) return function;
    function = dlsym(RTLD_NEXT, name);
    if (!function) {
        fprintf(stderr, "tsan-mutex: libswiftSynchronization has no %s; update scripts/tsan.c\n", name);
        abort();
    }
    __atomic_store_n(cached, function, __ATOMIC_RELEASE);
    return function;
}

SWIFTCALL void lock_slow(uint32_t thread_id, HANDLE handle) __asm__(LOCK_SLOW);
SWIFTCALL void lock_slow(uint32_t thread_id, HANDLE handle) {
    static void *cached;
    ((SWIFTCALL void (*)(uint32_t, HANDLE))library_function(&cached, LOCK_SLOW))(thread_id, handle);
    __tsan_acquire(handle);
}

SWIFTCALL bool try_lock_slow(HANDLE handle) __asm__(TRY_LOCK_SLOW);
SWIFTCALL bool try_lock_slow(HANDLE handle) {
    static void *cached;
    bool locked = ((SWIFTCALL bool (*)(HANDLE))library_function(&cached, TRY_LOCK_SLOW))(handle);
    if (locked) __tsan_acquire(handle);
    return locked;
}

SWIFTCALL void unlock_slow(HANDLE handle) __asm__(UNLOCK_SLOW);
SWIFTCALL void unlock_slow(HANDLE handle) {
    static void *cached;
    __tsan_release(handle);
    ((SWIFTCALL void (*)(HANDLE))library_function(&cached, UNLOCK_SLOW))(handle);
}

#ifdef TSAN_DEFAULT_OPTIONS
// Many tests start enlog with an environment of their own, without TSAN_OPTIONS: the enlog they
// start reports where the test runner does all the same. TSAN_OPTIONS, when set, still wins.
const char *__tsan_default_options(void) { return TSAN_DEFAULT_OPTIONS; }
#endif
