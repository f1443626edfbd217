#include "CLazyLibraries.h"
#include "Loading.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/// Opens the library once; concurrent first calls may both dlopen it, which only counts a
/// reference twice: the handle stored is the same.
static void *library_handle(struct lazy_library *library, char *reason, size_t size) {
    void *handle = __atomic_load_n(&library->handle, __ATOMIC_ACQUIRE);
    if (handle) return handle;
    // RTLD_LOCAL: its symbols must not stand in for anyone else's; RTLD_NOW: a library that
    // cannot be completely resolved fails here, once, not in the middle of a call.
    handle = dlopen(library->soname, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        snprintf(reason, size, "cannot load %s (install Debian's %s): %s", library->soname, library->package, dlerror());
        return NULL;
    }
    __atomic_store_n(&library->handle, handle, __ATOMIC_RELEASE);
    return handle;
}

static void *library_symbol(struct lazy_library *library, const char *symbol, char *reason, size_t size) {
    void *handle = library_handle(library, reason, size);
    if (!handle) return NULL;
    dlerror();
    void *address = dlsym(handle, symbol);
    if (!address) snprintf(reason, size, "%s has no function %s (install Debian's %s)", library->soname, symbol, library->package);
    return address;
}

void *lazy_function(int library, const char *symbol) {
    char reason[512];
    void *address = library_symbol(&lazy_libraries[library], symbol, reason, sizeof reason);
    if (address) return address;
    // Once, and whole: stderr may be shared with other processes' lines.
    char line[600];
    int length = snprintf(line, sizeof line, "enlog: error: %s\n", reason);
    if (length > 0) (void)!write(STDERR_FILENO, line, (size_t)length < sizeof line ? (size_t)length : sizeof line - 1);
    _exit(72);
}

int enlog_lazy_library_count(void) { return LAZY_COUNT; }

const char *enlog_lazy_library_name(int index) {
    return index >= 0 && index < LAZY_COUNT ? lazy_libraries[index].soname : NULL;
}

int enlog_lazy_library_check(int index, char *reason, size_t size) {
    if (index < 0 || index >= LAZY_COUNT) {
        snprintf(reason, size, "no lazily loaded library %d", index);
        return -1;
    }
    for (const char *const *symbol = lazy_libraries[index].symbols; *symbol; symbol++) {
        if (!library_symbol(&lazy_libraries[index], *symbol, reason, size)) return -1;
    }
    return 0;
}

int enlog_lazy_library_is_loaded(int index) {
    return index >= 0 && index < LAZY_COUNT && __atomic_load_n(&lazy_libraries[index].handle, __ATOMIC_ACQUIRE) != NULL;
}
