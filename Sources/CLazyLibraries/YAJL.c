// yajl: the push parser `enlog import` feeds JSON exports to, chunk by chunk.
#include <yajl/yajl_parse.h>
#include "Loading.h"

#define LAZY_LIBRARY LAZY_YAJL
#define YAJL_FUNCTIONS(X, V)                                                                        \
    X(yajl_handle, yajl_alloc, (const yajl_callbacks *callbacks, yajl_alloc_funcs *allocation, void *context), (callbacks, allocation, context)) \
    X(yajl_status, yajl_parse, (yajl_handle handle, const unsigned char *text, size_t length), (handle, text, length)) \
    X(yajl_status, yajl_complete_parse, (yajl_handle handle), (handle))                            \
    X(size_t, yajl_get_bytes_consumed, (yajl_handle handle), (handle))                             \
    X(unsigned char *, yajl_get_error, (yajl_handle handle, int verbose, const unsigned char *text, size_t length), (handle, verbose, text, length)) \
    V(yajl_free_error, (yajl_handle handle, unsigned char *error), (handle, error))                \
    V(yajl_free, (yajl_handle handle), (handle))

YAJL_FUNCTIONS(LAZY_DEFINE_FUNCTION, LAZY_DEFINE_PROCEDURE)

const char *const lazy_yajl_symbols[] = {YAJL_FUNCTIONS(LAZY_NAME_FUNCTION, LAZY_NAME_PROCEDURE) NULL};
