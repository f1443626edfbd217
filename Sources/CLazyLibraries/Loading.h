#ifndef ENLOG_LAZY_LOADING_H
#define ENLOG_LAZY_LOADING_H
#include <stddef.h>
// Internal to CLazyLibraries: one table per library, and the macro that defines a function
// calling its real counterpart.

struct lazy_library {
    const char *soname;
    const char *package;          // Debian's package that installs it, for the error message
    const char *const *symbols;   // every function enlog calls, NULL-terminated
    void *handle;                 // atomic; dlopen's handle once loaded
};

enum { LAZY_CURL, LAZY_ARCHIVE, LAZY_MAGIC, LAZY_EXIF, LAZY_YAJL, LAZY_CAIRO, LAZY_PNG, LAZY_FREETYPE, LAZY_XML2, LAZY_MOSQUITTO, LAZY_COUNT };
extern struct lazy_library lazy_libraries[LAZY_COUNT];

/// The address of `symbol` in library `library`, loading it on first use. A library or function
/// that is missing ends the process with one line and exit 72 (EX_OSFILE): enlog cannot go on
/// without code it was built against, and the calls here have no way to report an error.
void *lazy_function(int library, const char *symbol);

/// The address of `symbol`, kept in `cache` after the first lookup.
static inline void *lazy_cached(void **cache, int library, const char *symbol) {
    void *function = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
    if (!function) {
        function = lazy_function(library, symbol);
        __atomic_store_n(cache, function, __ATOMIC_RELEASE);
    }
    return function;
}

/// Defines `ret name params` to call the library's `name` with `args`, looked up once.
#define LAZY_FUNCTION(library, ret, name, params, args)                                        \
    ret name params {                                                                          \
        static void *cached;                                                                   \
        return ((ret (*) params)lazy_cached(&cached, library, #name)) args;                    \
    }

/// The same for a function that returns nothing.
#define LAZY_PROCEDURE(library, name, params, args)                                            \
    void name params {                                                                         \
        static void *cached;                                                                   \
        ((void (*) params)lazy_cached(&cached, library, #name)) args;                          \
    }

/// Each library's file lists its functions once, as X(ret, name, params, args) for those that
/// return a value and V(name, params, args) for those that do not; these turn the list into the
/// definitions and into the names the check looks up.
#define LAZY_DEFINE_FUNCTION(ret, name, params, args) LAZY_FUNCTION(LAZY_LIBRARY, ret, name, params, args)
#define LAZY_DEFINE_PROCEDURE(name, params, args) LAZY_PROCEDURE(LAZY_LIBRARY, name, params, args)
#define LAZY_NAME_FUNCTION(ret, name, params, args) #name,
#define LAZY_NAME_PROCEDURE(name, params, args) #name,

extern const char *const lazy_curl_symbols[], *const lazy_archive_symbols[], *const lazy_magic_symbols[],
    *const lazy_exif_symbols[], *const lazy_yajl_symbols[], *const lazy_cairo_symbols[], *const lazy_png_symbols[],
    *const lazy_freetype_symbols[], *const lazy_xml2_symbols[], *const lazy_mosquitto_symbols[];

#endif
