#ifndef ENLOG_CLAZYLIBRARIES_H
#define ENLOG_CLAZYLIBRARIES_H
#include <stddef.h>

// The C libraries only some commands use (libcurl, libarchive, libmagic, libexif, yajl, cairo,
// libpng, FreeType, libxml2, libmosquitto) are loaded on first use instead of at start: loading libcurl and its
// two dozen dependencies costs every run, `enlog --version` and `queue list` included, more CPU
// than the command itself.
// Each function of theirs that enlog calls is defined here under its own name and calls the real
// one, found with dlopen/dlsym on its first call.

/// How many libraries are loaded lazily.
int enlog_lazy_library_count(void);
/// The soname of library `index` (0 ..< count).
const char *enlog_lazy_library_name(int index);
/// Loads library `index` and looks up every function enlog calls in it, without exiting:
/// 0 when all are there, else -1 with the reason in `reason`. Loaded libraries stay loaded.
int enlog_lazy_library_check(int index, char *reason, size_t size);
/// Whether library `index` has been loaded by this process (by the check or a first call).
int enlog_lazy_library_is_loaded(int index);

#endif
